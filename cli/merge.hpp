// scopeprof tool: merging the reports of the ranks of one job into per-call-path figures across ranks.
//
// The merger is streaming: the caller loads one report, adds it, and drops it, so memory holds one report
// plus the aggregates (per node, one small record per rank that has the node).
//
//   scopeprof_cli::merger m;
//   for (path : inputs) { report_file f; load_report(path, f, error); if (!m.add(f, error)) fail(error); }
//   merged_result r = m.finish(error);  // error non-empty: a rank is missing
#pragma once

#include "rank_roster.hpp"
#include "report_file.hpp"

#include <scopeprof/declared_work.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace scopeprof_cli {

/// One rank's figures for one call path (its tree row; summed if a report holds the path twice).
struct rank_values {
  std::int64_t rank = 0;
  std::uint64_t calls = 0;
  std::int64_t host_total_ns = 0;
  std::int64_t host_self_ns = 0;
  std::uint64_t device_calls = 0;
  std::int64_t device_total_ns = 0;
  scopeprof::declared_work work;  ///< declared bytes and FLOPs (PROF_SCOPE_WORK, add_work), if any
};

/// One quantity of one node across the ranks it is taken over.
struct quantity_stats {
  std::uint32_t ranks = 0;  ///< how many ranks the figures are over (0: none, the rest is meaningless)
  std::int64_t min_ns = 0;
  double median_ns = 0;     ///< the middle value; the mean of the two middle ones for an even count
  std::int64_t max_ns = 0;
  double mean_ns = 0;
  std::int64_t straggler = -1;  ///< the rank holding the max (the lowest such rank on a tie)
  double imbalance = 0;         ///< max / mean; 1 when every value is 0
};

/// One rate (declared work over its time, work_rate.hpp) across the ranks that have one.
struct rate_stats {
  std::uint32_t ranks = 0;  ///< ranks with a rate (0: none, the rest is meaningless)
  double min = 0;           ///< per second
  double median = 0;
  double max = 0;
  std::int64_t slowest = -1;  ///< the rank with the lowest rate (the lowest such rank on a tie)
};

/// One call path across ranks.
struct merged_node {
  std::string name;
  std::uint32_t depth = 0;
  std::int64_t parent = -1;         ///< index into merged_result::nodes, -1 for a root
  std::uint32_t ranks_present = 0;  ///< ranks whose tree has this path
  std::uint64_t calls = 0;          ///< summed over ranks
  std::uint64_t device_calls = 0;   ///< summed over ranks
  quantity_stats host_total;        ///< over the ranks present
  quantity_stats host_self;         ///< over the ranks present
  /// Device span: over the ranks with device calls on this path (a rank without device timing says
  /// nothing about the device, so it is not counted as 0). has_device() is false when there are none.
  quantity_stats device_total;
  /// Declared work summed over ranks (its device field is meaningless across hosts), and each rank's own
  /// achieved rates (its work over its device spans, else its host time) across the ranks.
  scopeprof::declared_work work;
  rate_stats bytes_per_s;
  rate_stats flops_per_s;
  std::vector<rank_values> per_rank;  ///< the ranks present, ascending by rank

  bool has_device() const noexcept { return device_total.ranks > 0; }
};

/// The merge of every rank's report.
struct merged_result {
  std::int64_t world_size = 0;
  std::string program;             ///< the (common) program, "" when no report named one
  std::vector<std::string> hosts;  ///< distinct host names, sorted
  std::vector<merge_input> inputs; ///< ascending by rank (one per rank)
  /// Depth-first; a node's children follow it ordered by their max-over-ranks host total, heaviest first.
  std::vector<merged_node> nodes;

  bool any_device() const noexcept;
  bool any_work() const noexcept;
  /// The names from the root down to node `i`.
  std::vector<std::string> path_of(std::size_t i) const;
};

/// Folds reports one at a time into per-call-path aggregates.
class merger {
 public:
  /// Adds one rank's report. False, with "FILE: what is wrong" in `error` and nothing added, when its
  /// world size differs from the first report's, its rank is outside [0, world size) or already added
  /// (the message names both files), its program differs from an earlier one, or its tree is malformed.
  bool add(const report_file& f, std::string& error);

  /// The merged figures, `error` cleared. `error` is set (and the result empty) when no report was added or some ranks
  /// 0..W-1 are missing (named, up to 10). The merger is spent afterwards.
  merged_result finish(std::string& error);

 private:
  /// A node while merging: its identity and the per-rank records in the order they came.
  struct pending_node {
    std::string name;
    std::int64_t parent = -1;
    std::uint32_t depth = 0;
    std::vector<rank_values> samples;
  };

  bool check_tree(const report_file& f, std::string& error) const;
  std::size_t node_for(std::int64_t parent, const std::string& name, std::uint32_t depth);
  std::vector<std::size_t> depth_first_order() const;

  rank_roster roster_{"reports"};
  std::vector<pending_node> nodes_;
  // A child is found by (parent node, name): the same identity as tree_path_key, one hash per row instead
  // of rebuilding the whole path for every row.
  std::unordered_map<std::string, std::size_t> index_;
};

/// The statistics of `values` (one per rank, `ranks[i]` the rank of `values[i]`).
quantity_stats stats_over(std::vector<std::int64_t> values, const std::vector<std::int64_t>& ranks);

/// The statistics of per-rank rates (`ranks[i]` the rank of `rates[i]`).
rate_stats rates_over(std::vector<double> rates, const std::vector<std::int64_t>& ranks);

}  // namespace scopeprof_cli
