// scopeprof: report builder pass 4 (CUPTI evidence valid only): the kernel summary, one row per (scope
// name, kernel name), heaviest total first.
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

/// The name of the scope that launched `d`: "(no scope)" outside any, empty for an unknown site.
inline std::string launching_scope_name(const device_activity& d, const std::vector<site_desc>& sites,
                                        const std::vector<scope_instance>& in) {
  if (d.instance < 0) return std::string("(no scope)");
  const std::uint32_t site = in[static_cast<std::size_t>(d.instance)].site;
  return site < sites.size() ? sites[site].name : std::string();
}

/// Kernels (not copies or memsets) of `activities`, grouped by (scope name, kernel name) in order of
/// first appearance; statistics of their durations, share of all kernel time, heaviest total first.
/// `names` and `demangled` are indexed by device_activity::name.
inline std::vector<kernel_summary_row> build_kernel_summary(const std::vector<site_desc>& sites,
                                                            const std::vector<scope_instance>& in,
                                                            const std::vector<device_activity>& activities,
                                                            const std::vector<std::string>& names,
                                                            const std::vector<std::string>& demangled) {
  std::vector<kernel_summary_row> rows;
  std::unordered_map<std::string, std::size_t> group;  // key: scope name + '\0' + kernel name index
  std::vector<std::vector<std::int64_t>> durations;
  std::int64_t all = 0;
  for (const auto& d : activities) {
    if (d.kind != activity_kind::kernel) continue;
    const std::string scope = launching_scope_name(d, sites, in);
    std::string key = scope;
    key += '\0';
    key += std::to_string(d.name);
    auto it = group.emplace(std::move(key), rows.size());
    if (it.second) {
      rows.emplace_back();
      rows.back().scope = scope;
      rows.back().kernel = demangled[d.name];
      rows.back().mangled = names[d.name];
      durations.emplace_back();
    }
    durations[it.first->second].push_back(d.duration_ns());
    all += d.duration_ns();
  }
  for (std::size_t g = 0; g < rows.size(); ++g) {
    auto& row = rows[g];
    row.time = duration_stats::of(std::move(durations[g]));
    row.time_pct = all > 0 ? 100.0 * static_cast<double>(row.time.sum) / static_cast<double>(all) : 0.0;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const kernel_summary_row& a, const kernel_summary_row& b) { return a.time.sum > b.time.sum; });
  return rows;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
