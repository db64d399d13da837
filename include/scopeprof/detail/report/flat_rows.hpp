// scopeprof: report builder pass 6: the flat table, one row per scope name: the call paths of that name
// (paths.hpp) merged, heaviest host self time first. A name nested in itself counts once in the inclusive
// totals.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/report/paths.hpp>
#include <scopeprof/detail/report/row_sums.hpp>
#include <scopeprof/detail/report/stats.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// One empty row per distinct site name, in order of first appearance; `group_of_site[s]` is the row of
/// site s.
inline std::vector<flat_row> flat_rows_by_name(const std::vector<site_desc>& sites, std::vector<std::size_t>& group_of_site) {
  std::vector<std::string> names = group_sites_by_name(sites, group_of_site);
  std::vector<flat_row> rows(names.size());
  for (std::size_t g = 0; g < names.size(); ++g) rows[g].name = std::move(names[g]);
  return rows;
}

/// One path's sums into the row of its name. `outermost`: no path above it has the same name, so the
/// inclusive totals (host, device span, CUPTI work) take it.
inline void add_path_to_flat_row(flat_row& row, const path_nodes::node& n, bool outermost) {
  const tree_row& p = n.row;
  row.calls += p.calls;
  row.host_self_ns += p.host_self_ns;
  row.work.merge(p.work);
  row.device_calls += p.device_calls;
  row.device_self_ns += p.device_self_ns;
  row.device_busy_self_ns += p.device_busy_self_ns;
  row.device_captured += n.device_captured;
  row.device_invalid += n.device_invalid;
  if (!outermost) return;
  row.host_total_ns += p.host_total_ns;
  row.device_total_ns += p.device_total_ns;
  row.kernels += p.kernels;
  row.copies += p.copies;
  row.device_busy_ns += p.device_busy_ns;
}

/// Statistics and shares of the accumulated rows; rows without calls go, the rest by host self time.
inline void finish_flat_rows(std::vector<flat_row>& rows, const std::vector<row_distributions>& dist, std::int64_t all_self) {
  for (std::size_t g = 0; g < rows.size(); ++g) {
    dist[g].store(rows[g]);
    rows[g].host_histogram = histogram_of(dist[g].host, dist[g].host_scale);
    rows[g].device_histogram = histogram_of(dist[g].device);
    rows[g].host_time_pct = all_self > 0 ? 100.0 * static_cast<double>(rows[g].host_self_ns) / all_self : 0.0;
  }
  rows.erase(std::remove_if(rows.begin(), rows.end(), [](const flat_row& f) { return f.calls == 0; }), rows.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const flat_row& a, const flat_row& b) { return a.host_self_ns > b.host_self_ns; });
}

/// The flat table from the call paths (summed from the instances and the fold, paths.hpp): every path
/// joins the row of its name, its inclusive totals only where no path above it has the same name.
inline std::vector<flat_row> build_flat_rows(const std::vector<site_desc>& sites, const path_nodes& p) {
  std::vector<std::size_t> group_of_site;
  std::vector<flat_row> rows = flat_rows_by_name(sites, group_of_site);
  if (rows.empty()) return rows;
  std::vector<row_distributions> dist(rows.size());
  // A path of a site id outside the list (never from the recorder) joins the first row.
  const auto row_of = [&](const path_nodes::node& n) { return n.group < rows.size() ? n.group : std::size_t{0}; };
  std::int64_t all_self = 0;
  for (const path_nodes::node& n : p.nodes) {
    const std::size_t g = row_of(n);
    bool outermost = true;
    for (std::int64_t up = n.row.parent; up >= 0 && outermost; up = p.nodes[static_cast<std::size_t>(up)].row.parent)
      outermost = row_of(p.nodes[static_cast<std::size_t>(up)]) != g;
    add_path_to_flat_row(rows[g], n, outermost);
    dist[g].host.merge(n.dist.host);
    dist[g].host_self.merge(n.dist.host_self);
    dist[g].device.merge(n.dist.device);
    dist[g].device_self.merge(n.dist.device_self);
    if (n.dist.host.stats.count != 0) dist[g].host_scale = n.dist.host_scale;
    all_self += n.row.host_self_ns;
  }
  finish_flat_rows(rows, dist, all_self);
  return rows;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
