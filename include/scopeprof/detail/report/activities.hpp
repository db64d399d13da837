// scopeprof: report builder pass 3 (CUPTI evidence valid only): kernels, copies and memsets attributed
// to the innermost scope that launched them, and each scope's counts with its children's added.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/demangle.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The names demangled, once per name.
inline std::vector<std::string> demangle_all(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const auto& n : names) out.push_back(demangle(n));
  return out;
}

/// The instance a raw record was attributed to (`instance_of[thread][record]`), or -1.
inline std::int64_t launching_instance(const raw_activity& a, const std::vector<std::vector<std::int64_t>>& instance_of) {
  if (a.thread < 0 || static_cast<std::size_t>(a.thread) >= instance_of.size() || a.record < 0) return -1;
  const auto& of_thread = instance_of[static_cast<std::size_t>(a.thread)];
  if (static_cast<std::size_t>(a.record) >= of_thread.size()) return -1;
  return of_thread[static_cast<std::size_t>(a.record)];
}

/// The records with a known name and a non-negative duration, by begin time, each with its launching
/// instance; that instance's own counts (kernels_self, copies, device_busy_self_ns) grow by it.
inline std::vector<device_activity> attribute_activities(const std::vector<raw_activity>& raw, std::size_t names,
                                                         const std::vector<std::vector<std::int64_t>>& instance_of,
                                                         std::vector<scope_instance>& in) {
  std::vector<device_activity> out;
  out.reserve(raw.size());
  for (const raw_activity& a : raw) {
    if (a.name >= names || a.end_ns < a.begin_ns) continue;
    device_activity d;
    d.kind = a.kind;
    d.name = a.name;
    d.device = a.device;
    d.stream = a.stream;
    d.graph = a.graph;
    d.begin_ns = a.begin_ns;
    d.end_ns = a.end_ns;
    d.correlation = a.correlation;
    if (a.launch_name < names && a.launch_end_ns >= a.launch_begin_ns) {
      d.launch_name = a.launch_name;
      d.launch_driver = a.launch_driver;
      d.launch_thread = a.launch_thread;
      d.launch_begin_ns = a.launch_begin_ns;
      d.launch_end_ns = a.launch_end_ns;
    }
    d.instance = launching_instance(a, instance_of);
    if (d.instance >= 0) {
      scope_instance& s = in[static_cast<std::size_t>(d.instance)];
      if (d.kind == activity_kind::kernel) ++s.kernels_self;
      else ++s.copies;
      s.device_busy_self_ns += d.duration_ns();
    }
    out.push_back(d);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const device_activity& a, const device_activity& b) { return a.begin_ns < b.begin_ns; });
  return out;
}

/// Inclusive counts: kernels, copies and device_busy_ns of a scope add its children's. `copies` holds
/// the scope's own count on entry. Instances are in pre-order, so children come after their parent.
inline void add_children_activity(std::vector<scope_instance>& in) {
  for (auto& s : in) {
    s.kernels = s.kernels_self;
    s.device_busy_ns = s.device_busy_self_ns;
  }
  for (std::size_t i = in.size(); i-- > 0;) {  // bottom-up: reverse pre-order
    const auto& c = in[i];
    if (c.parent < 0) continue;
    auto& p = in[static_cast<std::size_t>(c.parent)];
    p.kernels += c.kernels;
    p.copies += c.copies;
    p.device_busy_ns += c.device_busy_ns;
  }
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
