// scopeprof: report builder pass 5: the flat table, one row per scope name with the statistics of its
// instances, heaviest host self time first. A name nested in itself counts once in the inclusive totals.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// One empty row per distinct site name, in order of first appearance; `group_of_site[s]` is the row of
/// site s.
inline std::vector<flat_row> flat_rows_by_name(const std::vector<site_desc>& sites, std::vector<std::size_t>& group_of_site) {
  std::vector<flat_row> rows;
  std::unordered_map<std::string, std::size_t> by_name;
  group_of_site.assign(sites.size(), 0);
  for (std::size_t s = 0; s < sites.size(); ++s) {
    auto it = by_name.emplace(sites[s].name, rows.size());
    if (it.second) {
      rows.emplace_back();
      rows.back().name = sites[s].name;
    }
    group_of_site[s] = it.first->second;
  }
  return rows;
}

/// Add one instance to its row. `outermost`: no open ancestor has the same name, so the inclusive
/// totals take it. Its host total (and device span) join the samples of the row's statistics.
inline void add_to_flat_row(flat_row& row, const scope_instance& s, bool outermost, std::vector<std::int64_t>& host,
                            std::vector<std::int64_t>& device) {
  ++row.calls;
  if (outermost) {
    row.host_total_ns += s.host_total_ns();
    row.kernels += s.kernels;
    row.copies += s.copies;
    row.device_busy_ns += s.device_busy_ns;
  }
  row.device_busy_self_ns += s.device_busy_self_ns;
  row.host_self_ns += s.host_self_ns;
  host.push_back(s.host_total_ns());
  switch (s.device) {
    case device_status::ok:
      ++row.device_calls;
      if (outermost) row.device_total_ns += s.device_span_ns();
      row.device_self_ns += s.device_self_ns;
      device.push_back(s.device_span_ns());
      break;
    case device_status::captured: ++row.device_captured; break;
    case device_status::invalid: ++row.device_invalid; break;
    default: break;
  }
}

/// Statistics and shares of the accumulated rows; rows without calls go, the rest by host self time.
inline void finish_flat_rows(std::vector<flat_row>& rows, std::vector<std::vector<std::int64_t>>& host,
                             std::vector<std::vector<std::int64_t>>& device, std::int64_t all_self) {
  for (std::size_t g = 0; g < rows.size(); ++g) {
    rows[g].host = duration_stats::of(std::move(host[g]));
    rows[g].device = duration_stats::of(std::move(device[g]));
    rows[g].host_time_pct = all_self > 0 ? 100.0 * static_cast<double>(rows[g].host_self_ns) / all_self : 0.0;
  }
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const flat_row& f) { return f.calls == 0; }), rows.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const flat_row& a, const flat_row& b) { return a.host_self_ns > b.host_self_ns; });
}

/// The flat table of `in` (instances in pre-order, self times and CUPTI counts done).
inline std::vector<flat_row> build_flat_rows(const std::vector<site_desc>& sites, const std::vector<scope_instance>& in) {
  std::vector<std::size_t> group_of_site;
  std::vector<flat_row> rows = flat_rows_by_name(sites, group_of_site);
  const std::size_t groups = rows.size();
  std::vector<std::vector<std::int64_t>> host(groups), device(groups);
  std::vector<std::uint32_t> active(groups, 0);  // open ancestors with the same name
  std::vector<std::size_t> stack;                // groups of the current ancestor chain
  std::int64_t all_self = 0;
  for (const auto& s : in) {
    if (s.depth == 0) {
      for (auto g : stack) --active[g];
      stack.clear();
    }
    while (stack.size() > s.depth) {
      --active[stack.back()];
      stack.pop_back();
    }
    const std::size_t g = s.site < group_of_site.size() ? group_of_site[s.site] : 0;
    if (groups == 0) break;
    add_to_flat_row(rows[g], s, active[g] == 0, host[g], device[g]);
    all_self += s.host_self_ns;
    ++active[g];
    stack.push_back(g);
  }
  finish_flat_rows(rows, host, device, all_self);
  return rows;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
