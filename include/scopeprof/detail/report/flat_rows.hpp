// scopeprof: report builder pass 5: the flat table, one row per scope name with the statistics of its
// instances, heaviest host self time first. A name nested in itself counts once in the inclusive totals.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/distribution.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report/stats.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Sites grouped by name: `group_of_site[s]` is the group of site s; returns the groups' names in order
/// of first appearance.
inline std::vector<std::string> group_sites_by_name(const std::vector<site_desc>& sites, std::vector<std::size_t>& group_of_site) {
  std::vector<std::string> names;
  std::unordered_map<std::string, std::size_t> by_name;
  group_of_site.assign(sites.size(), 0);
  for (std::size_t s = 0; s < sites.size(); ++s) {
    auto it = by_name.emplace(sites[s].name, names.size());
    if (it.second) names.push_back(sites[s].name);
    group_of_site[s] = it.first->second;
  }
  return names;
}

/// One empty row per distinct site name, in order of first appearance; `group_of_site[s]` is the row of
/// site s.
inline std::vector<flat_row> flat_rows_by_name(const std::vector<site_desc>& sites, std::vector<std::size_t>& group_of_site) {
  std::vector<std::string> names = group_sites_by_name(sites, group_of_site);
  std::vector<flat_row> rows(names.size());
  for (std::size_t g = 0; g < names.size(); ++g) rows[g].name = std::move(names[g]);
  return rows;
}

/// Which of an instance's figures the tables take from the records: all, or (with a fold) not the host
/// ones, and with a fold of device spans not the device span and self either.
struct record_share {
  bool host = true;
  bool device = true;
  static record_share of(const folded_paths* fold) noexcept {
    if (fold == nullptr || !fold->present) return {};
    return {false, !fold->device};
  }
};

/// One instance's declared work into a row's (or a path's) sums.
inline void add_instance_work(declared_work& w, const scope_instance& s) noexcept {
  if (!s.has_work) return;
  const work_timing timing = s.device == device_status::ok          ? work_timing::device
                             : s.device == device_status::not_timed ? work_timing::host
                                                                    : work_timing::unmeasured;
  w.add(s.work_bytes, s.work_flops, timing, s.host_total_ns(), s.device_span_ns(), s.device_id);
}

/// A fold node's declared work, its host time from ticks to ns.
inline declared_work work_in_ns(const declared_work& w, double ns_per_tick) noexcept {
  declared_work out = w;
  if (ns_per_tick != 1.0) out.host_ns = static_cast<std::int64_t>(static_cast<double>(w.host_ns) * ns_per_tick + 0.5);
  return out;
}

/// The four distributions behind a row's (or a path's) statistics. `host_scale`: ns per unit of host and
/// host_self (1, or ns per tick when they come from the fold).
struct row_distributions {
  distribution host, host_self, device, device_self;
  double host_scale = 1.0;
  void add(const scope_instance& s, record_share take = {}) noexcept {
    if (take.host) {
      host.add(s.host_total_ns());
      host_self.add(s.host_self_ns);
    }
    if (take.device && s.device == device_status::ok) {
      device.add(s.device_span_ns());
      device_self.add(s.device_self_ns);
    }
  }
  template <class Row>
  void store(Row& row) const noexcept {
    row.host = stats_of(host, host_scale);
    row.host_self = stats_of(host_self, host_scale);
    row.device = stats_of(device);
    row.device_self = stats_of(device_self);
  }
};

/// Add one instance to its row. `outermost`: no open ancestor has the same name, so the inclusive
/// totals take it. Its times join the row's distributions, those `take` leaves out come from the fold.
inline void add_to_flat_row(flat_row& row, const scope_instance& s, bool outermost, row_distributions& dist, record_share take) {
  if (take.host) {
    ++row.calls;
    row.host_self_ns += s.host_self_ns;
    if (outermost) row.host_total_ns += s.host_total_ns();
    add_instance_work(row.work, s);  // with a fold, the work comes from it
  }
  if (outermost) {
    row.kernels += s.kernels;
    row.copies += s.copies;
    row.device_busy_ns += s.device_busy_ns;
  }
  row.device_busy_self_ns += s.device_busy_self_ns;
  dist.add(s, take);
  switch (s.device) {
    case device_status::ok:
      if (!take.device) break;
      ++row.device_calls;
      if (outermost) row.device_total_ns += s.device_span_ns();
      row.device_self_ns += s.device_self_ns;
      break;
    case device_status::captured: ++row.device_captured; break;
    case device_status::invalid: ++row.device_invalid; break;
    default: break;
  }
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

/// The fold's host figures into the flat rows: every path node joins the row of its name; its inclusive
/// total only where no ancestor on its path has the same name. Returns the host self time added (ns).
inline std::int64_t add_fold_to_flat_rows(const folded_paths& fold, const std::vector<std::size_t>& group_of_site,
                                          std::vector<flat_row>& rows, std::vector<row_distributions>& dist) {
  const path_tree& t = fold.tree;
  const double k = fold.ns_per_tick;
  const auto ns = [k](std::int64_t v) { return k == 1.0 ? v : static_cast<std::int64_t>(static_cast<double>(v) * k + 0.5); };
  const auto group = [&](std::uint32_t site) { return site < group_of_site.size() ? group_of_site[site] : std::size_t{0}; };
  std::int64_t all_self = 0;
  for (std::uint32_t id = 1; id <= t.size() && !rows.empty(); ++id) {
    const path_tree::node& n = t.at(id);
    const std::size_t g = group(n.site);
    bool outermost = true;
    for (std::uint32_t p = n.parent; p != path_tree::root && outermost; p = t.at(p).parent) outermost = group(t.at(p).site) != g;
    flat_row& row = rows[g];
    row.calls += n.stats.host_total.stats.count;
    const std::int64_t self = ns(n.stats.host_self.stats.sum);
    row.host_self_ns += self;
    all_self += self;
    if (outermost) row.host_total_ns += ns(n.stats.host_total.stats.sum);
    dist[g].host.merge(n.stats.host_total);
    dist[g].host_self.merge(n.stats.host_self);
    dist[g].host_scale = k;
    row.work.merge(work_in_ns(n.stats.work, k));
    if (fold.device && n.stats.device_total.stats.count != 0) {
      row.device_calls += n.stats.device_total.stats.count;
      row.device_self_ns += n.stats.device_self.stats.sum;
      if (outermost) row.device_total_ns += n.stats.device_total.stats.sum;
      dist[g].device.merge(n.stats.device_total);
      dist[g].device_self.merge(n.stats.device_self);
    }
  }
  return all_self;
}

/// The flat table of `in` (instances in pre-order, self times and CUPTI counts done). With a fold, the
/// host figures come from it (every scope since reset()), and the device span and self too when it holds
/// them; the rest (CUPTI counts, captured and invalid scopes) from `in`.
inline std::vector<flat_row> build_flat_rows(const std::vector<site_desc>& sites, const std::vector<scope_instance>& in,
                                             const folded_paths* fold = nullptr) {
  const record_share take = record_share::of(fold);
  const bool with_host = take.host;
  std::vector<std::size_t> group_of_site;
  std::vector<flat_row> rows = flat_rows_by_name(sites, group_of_site);
  const std::size_t groups = rows.size();
  std::vector<row_distributions> dist(groups);
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
    add_to_flat_row(rows[g], s, active[g] == 0, dist[g], take);
    if (with_host) all_self += s.host_self_ns;
    ++active[g];
    stack.push_back(g);
  }
  if (!with_host) all_self = add_fold_to_flat_rows(*fold, group_of_site, rows, dist);
  finish_flat_rows(rows, dist, all_self);
  return rows;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
