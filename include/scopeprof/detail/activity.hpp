// scopeprof: CUPTI activity records as the collector keeps them, and their attribution to scopes. Plain
// data and pure functions (no CUPTI header), so the logic is tested on machines without a GPU.
#pragma once

#include <scopeprof/report_types.hpp>

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// One kernel, memcpy or memset as received, times already on the host timeline (steady_clock ns).
struct activity_entry {
  activity_kind kind = activity_kind::kernel;
  std::uint32_t correlation = 0;  // CUDA API correlation id (for a graph's kernels: the graph launch's)
  std::int32_t device = -1;
  std::uint32_t stream = 0;
  std::uint32_t graph = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t name = 0;  // index into activity_log::names()
};

/// The runtime or driver API call that launched work (CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER), keyed by its
/// correlation id; times on the host timeline.
struct launch_entry {
  std::uint32_t name = 0;  // index into activity_log::names() ("cudaLaunchKernel", "cuLaunchKernel"...)
  bool driver = false;
  std::uint64_t thread = 0;  // OS thread id as CUPTI gives it
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

/// The name the trace gives an API call as CUPTI names it ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel"),
/// or empty for calls that launch no kernel, copy or memset (only launch calls are kept).
inline std::string launch_call_name(std::string_view cupti_name) {
  static constexpr std::string_view prefixes[] = {"cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaGraphLaunch",
                                                  "cuLaunch",   "cuMemcpy",   "cuMemset",   "cuGraphLaunch"};
  bool launch = false;
  for (std::string_view p : prefixes) launch = launch || cupti_name.substr(0, p.size()) == p;
  if (!launch) return {};
  const std::size_t v = cupti_name.rfind("_v");
  if (v != std::string_view::npos && v + 2 < cupti_name.size() &&
      cupti_name.find_first_not_of("0123456789", v + 2) == std::string_view::npos)
    cupti_name = cupti_name.substr(0, v);
  return std::string(cupti_name);
}

enum class attribute_result { attributed, outside, ignore };

struct attribution {
  std::uint64_t kernels = 0;  // attributed or not, probe records excluded
  std::uint64_t copies = 0;
  std::uint64_t outside = 0;  // launched outside any recorded scope (or its scope was dropped / discarded)
};

struct probe_check {
  bool correlation_seen = false;
  bool memset_seen = false;
};

/// Records received since the last reset(), with kernel names interned and the external ids (CUSTOM2)
/// of the CUDA API calls that launched them.
class activity_log {
 public:
  std::uint32_t intern(std::string_view name) {
    auto it = name_ids_.find(std::string(name));
    if (it != name_ids_.end()) return it->second;
    const auto id = static_cast<std::uint32_t>(names_.size());
    names_.emplace_back(name);
    name_ids_.emplace(names_.back(), id);
    return id;
  }
  void add(const activity_entry& e) { entries_.push_back(e); }
  void correlate(std::uint32_t correlation, std::uint64_t external) { external_of_[correlation] = external; }
  void add_launch(std::uint32_t correlation, const launch_entry& l) { launches_[correlation] = l; }

  const std::vector<std::string>& names() const noexcept { return names_; }
  const std::vector<activity_entry>& entries() const noexcept { return entries_; }
  std::size_t launch_count() const noexcept { return launches_.size(); }

  /// Did the probe tagged `external` come back: its external-correlation record, and a memset (received
  /// after record `from`) with the same correlation id?
  probe_check check_probe(std::uint64_t external, std::size_t from) const {
    probe_check r;
    std::uint32_t correlation = 0;
    for (const auto& [corr, ext] : external_of_)
      if (ext == external) {
        r.correlation_seen = true;
        correlation = corr;
        break;
      }
    for (std::size_t i = from; i < entries_.size(); ++i)
      if (entries_[i].kind == activity_kind::memset && (!r.correlation_seen || entries_[i].correlation == correlation)) {
        r.memset_seen = true;
        break;
      }
    return r;
  }

  /// Attribute every record: `place(external, thread, record)` says where the scope with this external id
  /// is in the snapshot. Appends to `out` and returns the counts.
  template <class Place>
  attribution attribute(Place&& place, std::vector<raw_activity>& out) const {
    attribution a;
    out.reserve(out.size() + entries_.size());
    for (const auto& e : entries_) {
      raw_activity r;
      r.kind = e.kind;
      r.name = e.name;
      r.device = e.device;
      r.stream = e.stream;
      r.graph = e.graph;
      r.begin_ns = e.begin_ns;
      r.end_ns = e.end_ns;
      r.correlation = e.correlation;
      if (const auto l = launches_.find(e.correlation); l != launches_.end()) {
        r.launch_name = l->second.name;
        r.launch_driver = l->second.driver;
        r.launch_thread = l->second.thread;
        r.launch_begin_ns = l->second.begin_ns;
        r.launch_end_ns = l->second.end_ns;
      }
      attribute_result where = attribute_result::outside;
      const auto it = external_of_.find(e.correlation);
      if (it != external_of_.end()) where = place(it->second, r.thread, r.record);
      if (where == attribute_result::ignore) continue;
      if (where == attribute_result::outside) {
        r.thread = -1;
        r.record = -1;
        ++a.outside;
      }
      if (e.kind == activity_kind::kernel) ++a.kernels;
      else ++a.copies;
      out.push_back(r);
    }
    return a;
  }

  /// Forget records whose external id `finished(external)` says belongs to a finished scope, and every
  /// record launched outside a scope; kernels of scopes still open stay for the report that has them.
  template <class Finished>
  void discard_if(Finished&& finished) {
    std::vector<activity_entry> kept;
    for (const auto& e : entries_) {
      const auto it = external_of_.find(e.correlation);
      if (it != external_of_.end() && !finished(it->second)) kept.push_back(e);
    }
    entries_.swap(kept);
    for (auto it = launches_.begin(); it != launches_.end();) {
      const auto x = external_of_.find(it->first);
      it = x == external_of_.end() || finished(x->second) ? launches_.erase(it) : std::next(it);
    }
    for (auto it = external_of_.begin(); it != external_of_.end();)
      it = finished(it->second) ? external_of_.erase(it) : std::next(it);
  }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, std::uint32_t> name_ids_;
  std::vector<activity_entry> entries_;
  std::unordered_map<std::uint32_t, std::uint64_t> external_of_;
  std::unordered_map<std::uint32_t, launch_entry> launches_;
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
