// scopeprof tool: the JSON document of a merged result (schema scopeprof-merge/1, merge_output.hpp).
// One input and one node per line: with 1024 ranks a node's per-rank arrays are long, and a line per
// number would make the file hard to read and several times larger.
#include "merge_output.hpp"

#include <nlohmann/json.hpp>
#include <scopeprof/work_rate.hpp>

#include <cmath>

namespace scopeprof_cli {

namespace {

using ordered = nlohmann::ordered_json;

/// Integer nanoseconds, as every figure of the document (a median of two middle values rounds).
std::int64_t whole_ns(double ns) { return static_cast<std::int64_t>(std::llround(ns)); }

/// One figure per rank 0..W-1 (`pick` of that rank's values), null where the rank has none.
template <class Pick>
ordered per_rank_array(const merged_result& m, const merged_node& n, Pick pick) {
  ordered a = ordered::array();
  std::size_t next = 0;
  for (std::int64_t r = 0; r < m.world_size; ++r) {
    const bool has = next < n.per_rank.size() && n.per_rank[next].rank == r;
    a.push_back(has ? pick(n.per_rank[next]) : ordered());
    if (has) ++next;
  }
  return a;
}

template <class Pick>
ordered quantity(const merged_result& m, const merged_node& n, const quantity_stats& q, Pick pick) {
  if (q.ranks == 0) return ordered();
  ordered o;
  o["ranks"] = q.ranks;
  o["min"] = q.min_ns;
  o["median"] = whole_ns(q.median_ns);
  o["max"] = q.max_ns;
  o["mean"] = whole_ns(q.mean_ns);
  o["straggler"] = q.straggler;
  o["imbalance"] = q.imbalance;
  o["per_rank"] = per_rank_array(m, n, pick);
  return o;
}

/// A number, or null where it is not finite (a rate with no time or quantity).
ordered finite_or_null(double v) { return std::isfinite(v) ? ordered(v) : ordered(); }

ordered rates_json(const merged_result& m, const merged_node& n, const rate_stats& s, bool bytes) {
  if (s.ranks == 0) return ordered();
  ordered o;
  o["ranks"] = s.ranks;
  o["min"] = s.min;
  o["median"] = s.median;
  o["max"] = s.max;
  o["slowest"] = s.slowest;
  o["per_rank"] = per_rank_array(m, n, [bytes](const rank_values& v) {
    if (!v.work.any()) return ordered();
    const scopeprof::work_rate r = scopeprof::rate_of(v.work);
    return finite_or_null(bytes ? r.bytes_per_s : r.flops_per_s);
  });
  return o;
}

/// Declared work of a node (null where no rank declared any): sums over ranks and the per-rank rates.
ordered work_json(const merged_result& m, const merged_node& n) {
  if (!n.work.any()) return ordered();
  ordered o;
  o["calls"] = n.work.calls;
  o["bytes"] = n.work.bytes;
  o["flops"] = n.work.flops;
  o["device_calls"] = n.work.device_calls;
  o["host_calls"] = n.work.host_calls;
  o["unmeasured"] = n.work.unmeasured;
  o["bytes_per_s"] = rates_json(m, n, n.bytes_per_s, true);
  o["flops_per_s"] = rates_json(m, n, n.flops_per_s, false);
  return o;
}

ordered node_json(const merged_result& m, std::size_t i) {
  const merged_node& n = m.nodes[i];
  ordered o;
  o["path"] = m.path_of(i);
  o["depth"] = n.depth;
  o["parent"] = n.parent;
  o["ranks_present"] = n.ranks_present;
  o["calls"] = {{"total", n.calls}, {"per_rank", per_rank_array(m, n, [](const rank_values& v) { return ordered(v.calls); })}};
  o["host_total"] = quantity(m, n, n.host_total, [](const rank_values& v) { return ordered(v.host_total_ns); });
  o["host_self"] = quantity(m, n, n.host_self, [](const rank_values& v) { return ordered(v.host_self_ns); });
  o["device_calls"] = {{"total", n.device_calls},
                       {"per_rank", per_rank_array(m, n, [](const rank_values& v) { return ordered(v.device_calls); })}};
  // A rank without device calls on this path has no device span: null, not 0.
  o["device_total"] = quantity(m, n, n.device_total, [](const rank_values& v) {
    return v.device_calls ? ordered(v.device_total_ns) : ordered();
  });
  o["work"] = work_json(m, n);
  return o;
}

ordered input_json(const merge_input& in) {
  ordered o;
  o["file"] = in.file;
  o["rank"] = in.rank;
  o["host"] = in.host;
  o["pid"] = in.pid;
  o["program"] = in.program;
  o["base_unix_ns"] = in.base_unix_ns;
  return o;
}

/// Compact text of one value; bytes that are not UTF-8 (a file name, say) become U+FFFD, never an
/// exception.
std::string compact(const ordered& v) { return v.dump(-1, ' ', false, ordered::error_handler_t::replace); }

}  // namespace

std::string merge_json(const merged_result& m) {
  std::string out = "{\n";
  out += " \"schema\": " + compact(merge_schema) + ",\n";
  out += " \"world_size\": " + std::to_string(m.world_size) + ",\n";
  out += " \"program\": " + compact(m.program) + ",\n";
  out += " \"hosts\": " + compact(m.hosts) + ",\n";
  out += " \"legend\": " + compact(merge_legend) + ",\n";
  out += " \"inputs\": [";
  for (std::size_t i = 0; i < m.inputs.size(); ++i) out += (i ? ",\n  " : "\n  ") + compact(input_json(m.inputs[i]));
  out += "\n ],\n \"nodes\": [";
  for (std::size_t i = 0; i < m.nodes.size(); ++i) out += (i ? ",\n  " : "\n  ") + compact(node_json(m, i));
  out += "\n ]\n}\n";
  return out;
}

}  // namespace scopeprof_cli
