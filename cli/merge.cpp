// scopeprof tool: the streaming merger (merge.hpp): checks that the reports are the ranks of one job and
// folds each report's tree into per-call-path records, one per rank.
#include "merge.hpp"

#include <scopeprof/work_rate.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <set>
#include <utility>

namespace scopeprof_cli {

namespace {

std::string quoted(const std::string& s) { return "'" + s + "'"; }

/// The median of `v` (reordered): the middle value, or the mean of the two middle ones.
double median_of(std::vector<std::int64_t>& v) {
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = static_cast<double>(v[mid]);
  if (v.size() % 2 == 1) return upper;
  // The lower middle is the largest value left of `mid` after nth_element.
  const double lower = static_cast<double>(*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)));
  return (lower + upper) / 2;
}

/// Adds `b`'s figures to `a` (a report holding the same path twice: the loader should not produce one,
/// but a hand-edited file may).
void accumulate(rank_values& a, const rank_values& b) {
  a.calls += b.calls;
  a.host_total_ns += b.host_total_ns;
  a.host_self_ns += b.host_self_ns;
  a.device_calls += b.device_calls;
  a.device_total_ns += b.device_total_ns;
  a.work.merge(b.work);
}

rank_values values_of(const scopeprof::tree_row& row, std::int64_t rank) {
  rank_values v;
  v.rank = rank;
  v.calls = row.calls;
  v.host_total_ns = row.host_total_ns;
  v.host_self_ns = row.host_self_ns;
  v.device_calls = row.device_calls;
  v.device_total_ns = row.device_total_ns;
  v.work = row.work;
  return v;
}

}  // namespace

rate_stats rates_over(std::vector<double> rates, const std::vector<std::int64_t>& ranks) {
  rate_stats s;
  if (rates.empty()) return s;
  s.ranks = static_cast<std::uint32_t>(rates.size());
  std::size_t arg_min = 0;
  for (std::size_t i = 1; i < rates.size(); ++i)
    if (rates[i] < rates[arg_min] || (rates[i] == rates[arg_min] && ranks[i] < ranks[arg_min])) arg_min = i;
  s.min = rates[arg_min];
  s.slowest = ranks[arg_min];
  s.max = *std::max_element(rates.begin(), rates.end());
  const std::size_t mid = rates.size() / 2;
  std::sort(rates.begin(), rates.end());
  s.median = rates.size() % 2 == 1 ? rates[mid] : (rates[mid - 1] + rates[mid]) / 2;
  return s;
}

quantity_stats stats_over(std::vector<std::int64_t> values, const std::vector<std::int64_t>& ranks) {
  quantity_stats s;
  if (values.empty()) return s;
  s.ranks = static_cast<std::uint32_t>(values.size());
  std::size_t arg_max = 0;
  for (std::size_t i = 1; i < values.size(); ++i)
    if (values[i] > values[arg_max] || (values[i] == values[arg_max] && ranks[i] < ranks[arg_max])) arg_max = i;
  s.max_ns = values[arg_max];
  s.straggler = ranks[arg_max];
  s.min_ns = *std::min_element(values.begin(), values.end());
  // Sum in double: 1024 ranks of long runs could overflow an int64 sum of ns only in absurd cases, but a
  // double sum never wraps.
  const double sum = std::accumulate(values.begin(), values.end(), 0.0,
                                     [](double a, std::int64_t b) { return a + static_cast<double>(b); });
  s.mean_ns = sum / static_cast<double>(values.size());
  s.imbalance = s.mean_ns > 0 ? static_cast<double>(s.max_ns) / s.mean_ns : 1.0;
  s.median_ns = median_of(values);
  return s;
}

bool merged_result::any_device() const noexcept {
  return std::any_of(nodes.begin(), nodes.end(), [](const merged_node& n) { return n.has_device(); });
}

bool merged_result::any_work() const noexcept {
  return std::any_of(nodes.begin(), nodes.end(), [](const merged_node& n) { return n.work.any(); });
}

std::vector<std::string> merged_result::path_of(std::size_t i) const {
  std::vector<std::string> names;
  for (std::int64_t at = static_cast<std::int64_t>(i); at >= 0; at = nodes[static_cast<std::size_t>(at)].parent)
    names.push_back(nodes[static_cast<std::size_t>(at)].name);
  std::reverse(names.begin(), names.end());
  return names;
}

bool merger::check_tree(const report_file& f, std::string& error) const {
  const auto& tree = f.report.tree();
  for (std::size_t i = 0; i < tree.size(); ++i) {
    // Depth-first order puts a parent before its children; anything else would index rows not seen yet.
    if (tree[i].parent < -1 || tree[i].parent >= static_cast<std::int64_t>(i)) {
      error = f.path + ": tree row " + std::to_string(i) + " (" + quoted(tree[i].name) + ") has parent " +
              std::to_string(tree[i].parent) + ", not an earlier row";
      return false;
    }
  }
  return true;
}

std::size_t merger::node_for(std::int64_t parent, const std::string& name, std::uint32_t depth) {
  std::string key(sizeof parent, '\0');
  std::memcpy(key.data(), &parent, sizeof parent);
  key += name;
  auto [it, inserted] = index_.try_emplace(std::move(key), nodes_.size());
  if (inserted) nodes_.push_back({name, parent, depth, {}});
  return it->second;
}

bool merger::add(const report_file& f, std::string& error) {
  const scopeprof::process_desc& p = f.report.process();
  if (!check_tree(f, error) ||
      !roster_.add({f.path, p.rank, p.host, p.pid, p.program, p.base_unix_ns}, p.world_size, error))
    return false;

  const auto& tree = f.report.tree();
  std::vector<std::size_t> node_of_row(tree.size());
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const auto& row = tree[i];
    const std::int64_t parent =
        row.parent < 0 ? -1 : static_cast<std::int64_t>(node_of_row[static_cast<std::size_t>(row.parent)]);
    const std::uint32_t depth = parent < 0 ? 0 : nodes_[static_cast<std::size_t>(parent)].depth + 1;
    const std::size_t n = node_for(parent, row.name, depth);
    node_of_row[i] = n;
    auto& samples = nodes_[n].samples;
    // This report's samples are the last ones added, so a repeated path is the back one.
    if (!samples.empty() && samples.back().rank == p.rank)
      accumulate(samples.back(), values_of(row, p.rank));
    else
      samples.push_back(values_of(row, p.rank));
  }
  return true;
}

std::vector<std::size_t> merger::depth_first_order() const {
  std::vector<std::vector<std::size_t>> children(nodes_.size());
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    (nodes_[i].parent < 0 ? roots : children[static_cast<std::size_t>(nodes_[i].parent)]).push_back(i);
  std::vector<std::int64_t> weight(nodes_.size(), 0);  // max over ranks of the host total
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    for (const auto& s : nodes_[i].samples) weight[i] = std::max(weight[i], s.host_total_ns);
  auto heaviest_first = [&](std::size_t a, std::size_t b) {
    if (weight[a] != weight[b]) return weight[a] > weight[b];
    return nodes_[a].name != nodes_[b].name ? nodes_[a].name < nodes_[b].name : a < b;
  };
  std::vector<std::size_t> order, stack;
  order.reserve(nodes_.size());
  std::sort(roots.begin(), roots.end(), heaviest_first);
  stack.assign(roots.rbegin(), roots.rend());
  // An explicit stack: a deep recursive program gives a deep tree, and the tool must not overflow on it.
  while (!stack.empty()) {
    const std::size_t n = stack.back();
    stack.pop_back();
    order.push_back(n);
    auto& kids = children[n];
    std::sort(kids.begin(), kids.end(), heaviest_first);
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  }
  return order;
}

namespace {

/// The declared work of one node: summed over ranks, and each rank's rates across the ranks.
void summarize_work(merged_node& n) {
  std::vector<double> bytes_rates, flops_rates;
  std::vector<std::int64_t> bytes_ranks, flops_ranks;
  for (const auto& v : n.per_rank) {
    if (!v.work.any()) continue;
    n.work.merge(v.work);
    const scopeprof::work_rate r = scopeprof::rate_of(v.work);
    if (std::isfinite(r.bytes_per_s)) bytes_rates.push_back(r.bytes_per_s), bytes_ranks.push_back(v.rank);
    if (std::isfinite(r.flops_per_s)) flops_rates.push_back(r.flops_per_s), flops_ranks.push_back(v.rank);
  }
  n.bytes_per_s = rates_over(std::move(bytes_rates), bytes_ranks);
  n.flops_per_s = rates_over(std::move(flops_rates), flops_ranks);
}

/// The statistics of one node from its per-rank records (sorted by rank).
void summarize(merged_node& n) {
  summarize_work(n);
  std::vector<std::int64_t> ranks, totals, selfs, device_ranks, device_totals;
  for (const auto& v : n.per_rank) {
    ranks.push_back(v.rank);
    totals.push_back(v.host_total_ns);
    selfs.push_back(v.host_self_ns);
    n.calls += v.calls;
    n.device_calls += v.device_calls;
    if (v.device_calls == 0) continue;
    device_ranks.push_back(v.rank);
    device_totals.push_back(v.device_total_ns);
  }
  n.ranks_present = static_cast<std::uint32_t>(n.per_rank.size());
  n.host_total = stats_over(std::move(totals), ranks);
  n.host_self = stats_over(std::move(selfs), ranks);
  n.device_total = stats_over(std::move(device_totals), device_ranks);
}

}  // namespace

merged_result merger::finish(std::string& error) {
  merged_result out;
  error.clear();  // a caller may have kept the message of a report it skipped
  if (std::string why = roster_.incomplete(); !why.empty()) {
    error = why;
    return out;
  }
  out.world_size = roster_.world_size();
  out.program = roster_.program();
  out.inputs = roster_.take_by_rank();
  std::set<std::string> hosts;
  for (const auto& in : out.inputs) hosts.insert(in.host);
  out.hosts.assign(hosts.begin(), hosts.end());

  const std::vector<std::size_t> order = depth_first_order();
  std::vector<std::int64_t> new_index(nodes_.size());
  for (std::size_t i = 0; i < order.size(); ++i) new_index[order[i]] = static_cast<std::int64_t>(i);
  out.nodes.resize(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    pending_node& p = nodes_[order[i]];
    merged_node& n = out.nodes[i];
    n.name = std::move(p.name);
    n.depth = p.depth;
    n.parent = p.parent < 0 ? -1 : new_index[static_cast<std::size_t>(p.parent)];
    n.per_rank = std::move(p.samples);
    std::sort(n.per_rank.begin(), n.per_rank.end(), [](const rank_values& a, const rank_values& b) { return a.rank < b.rank; });
    summarize(n);
  }
  nodes_.clear();
  index_.clear();
  return out;
}

}  // namespace scopeprof_cli
