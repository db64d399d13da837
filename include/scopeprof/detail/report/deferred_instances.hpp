// scopeprof: report builder: the instances of a report built when first asked for. collect() hands the
// timeline over as 24-byte tick records (raw_snapshot.hpp) and its tables come from the fold, so nothing
// in the report needs an instance until a writer or the program asks for report::instances(); building
// them (the call tree, 128 bytes per instance) is most of what collect() would otherwise cost.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report/instances.hpp>
#include <scopeprof/detail/report/self_times.hpp>
#include <scopeprof/report_types.hpp>

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// One thread's tick records as raw instances, host times through `conv`.
inline std::vector<raw_instance> expand_tick_records(const tick_records& t, const tick_converter& conv) {
  std::vector<raw_instance> out(t.records.size());
  for (std::size_t i = 0; i < t.records.size(); ++i) {
    const tick_record& r = t.records[i];
    raw_instance& x = out[i];
    x.site = r.site;
    x.depth = r.depth;
    x.host_begin_ns = conv.to_ns(r.begin_ticks);
    x.host_end_ns = conv.to_ns(r.end_ticks);
  }
  for (const positioned_device& d : t.device) {
    if (d.position >= out.size()) continue;
    raw_instance& x = out[d.position];
    x.device = d.status;
    x.device_id = d.device;
    x.stream = d.stream;
    x.device_begin_ns = d.begin_ns;
    x.device_end_ns = d.end_ns;
  }
  for (const positioned_work& w : t.work) {
    if (w.position >= out.size()) continue;
    raw_instance& x = out[w.position];
    x.has_work = true;
    x.work_bytes = w.bytes;
    x.work_flops = w.flops;
  }
  return out;
}

/// Every thread's instances in report order (thread by thread, pre-order), with host and device self
/// times. `orphans`: how many the call tree placed at the root.
inline std::vector<scope_instance> instances_of_threads(std::vector<tick_records>& threads, const tick_converter& conv,
                                                        std::uint64_t* orphans = nullptr) {
  std::size_t total = 0;
  bool any_device = false;
  for (const tick_records& t : threads) {
    total += t.records.size();
    for (const positioned_device& d : t.device) any_device |= d.status == device_status::ok;
  }
  std::vector<scope_instance> out;
  out.reserve(total);
  std::uint64_t placed_at_root = 0;
  for (std::size_t t = 0; t < threads.size(); ++t) {
    const std::vector<raw_instance> recs = expand_tick_records(threads[t], conv);
    threads[t] = tick_records();  // its memory back before the next thread's
    placed_at_root += append_thread_instances(recs, static_cast<std::uint32_t>(t), out);
  }
  if (any_device) compute_device_self(out);
  if (orphans != nullptr) *orphans = placed_at_root;
  return out;
}

/// A report's instances, built once, on the first call of get(), from whichever thread makes it.
class deferred_instances {
 public:
  deferred_instances(std::vector<tick_records> threads, const tick_converter& conv)
      : threads_(std::move(threads)), conv_(conv) {}

  /// The instances; empty if memory ran out building them (failed() then says so).
  const std::vector<scope_instance>& get() noexcept {
    try {
      std::call_once(once_, [this]() noexcept {
        try {
          instances_ = instances_of_threads(threads_, conv_);
        } catch (...) {
          std::vector<scope_instance>().swap(instances_);
          failed_ = true;
        }
        std::vector<tick_records>().swap(threads_);
      });
    } catch (...) {
      failed_ = true;  // call_once itself could not run (no thread support): nothing was built
    }
    return instances_;
  }
  bool failed() const noexcept { return failed_; }

 private:
  std::once_flag once_;
  std::vector<tick_records> threads_;
  tick_converter conv_;
  std::vector<scope_instance> instances_;
  bool failed_ = false;
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
