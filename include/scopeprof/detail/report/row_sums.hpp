// scopeprof: report builder helper: what the per-name and per-path rows sum: sites grouped by name, which
// figures come from the records and which from the fold, and the distributions behind a row's statistics.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/distribution.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report/stats.hpp>
#include <scopeprof/report_types.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
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

}  // namespace detail
SCOPEPROF_NAMESPACE_END
