// scopeprof: the report builder: raw per-thread records in, a report out. Runs the passes in
// detail/report/ in order; each is a pure function of what the passes before it produced.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/process_identity.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report/activities.hpp>
#include <scopeprof/detail/report/deferred_instances.hpp>
#include <scopeprof/detail/report/flat_rows.hpp>
#include <scopeprof/detail/report/instances.hpp>
#include <scopeprof/detail/report/kernel_summary.hpp>
#include <scopeprof/detail/report/paths.hpp>
#include <scopeprof/detail/report/self_times.hpp>
#include <scopeprof/detail/report/steps.hpp>
#include <scopeprof/detail/report/tree_rows.hpp>
#include <scopeprof/report.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The one writer of a report's fields (report's friend); detail::build_report() calls it.
class report_builder {
 public:
  static report build(raw_snapshot raw) {
    report r;
    r.counts_ = raw.counts;
    r.timeline_ = raw.timeline;
    r.sites_ = std::move(raw.sites);
    r.sources_ = std::move(raw.sources);
    r.warnings_ = std::move(raw.warnings);
    r.origin_ns_ = raw.origin_ns;
    r.work_ = raw.work;
    r.peaks_ = std::move(raw.peaks);
    for (const raw_thread& th : raw.threads) r.threads_.push_back(th.desc);
    if (!raw.folded.present) {
      std::size_t total = 0;
      for (const raw_thread& th : raw.threads) total += th.size();
      r.timeline_.kept = total;  // a snapshot built by hand: its records are the timeline
    }
    // With the fold, the tables need no instance: unless CUPTI records must be attributed to them, they
    // are built when first asked for.
    std::vector<std::int32_t> devices;  // those the deferred instances name
    if (raw.folded.present && !r.sources_.cupti_valid && every_thread_in_ticks(raw)) devices = defer_instances(raw, r);
    else build_instances(raw, r);
    if (raw.folded.present) r.orphans_ = raw.folded.orphans;
    path_nodes paths = sum_by_path(r.sites_, r.instances_, &raw.folded);
    r.flat_ = build_flat_rows(r.sites_, paths);
    r.tree_ = lay_out_paths(paths);
    r.steps_ = build_steps(raw.steps, raw.steps_lost, r.step_stats_);
    r.process_ = process_of(raw, r, devices);
    return r;
  }

 private:
  static bool every_thread_in_ticks(const raw_snapshot& raw) noexcept {
    for (const raw_thread& th : raw.threads)
      if (!th.records.empty()) return false;
    return true;
  }

  /// The instances left for report::instances() to build; returns the devices they name.
  static std::vector<std::int32_t> defer_instances(raw_snapshot& raw, report& r) {
    std::vector<std::int32_t> devices;
    std::vector<tick_records> threads;
    threads.reserve(raw.threads.size());
    for (raw_thread& th : raw.threads) {
      for (const positioned_device& d : th.ticks.device)
        if (d.device >= 0) devices.push_back(d.device);
      threads.push_back(std::move(th.ticks));
    }
    r.deferred_ = std::make_shared<deferred_instances>(std::move(threads), raw.ticks);
    return devices;
  }

  /// The instances now (self times, CUPTI attribution and kernel summary included).
  static void build_instances(raw_snapshot& raw, report& r) {
    for (raw_thread& th : raw.threads)
      if (th.records.empty() && !th.ticks.records.empty()) {
        th.records = expand_tick_records(th.ticks, raw.ticks);
        th.ticks = tick_records();
      }
    // instance_of[t][i]: the instance of record i of thread t (CUPTI records name their scope so; only
    // filled when there are CUPTI records).
    std::vector<std::vector<std::int64_t>> instance_of(raw.threads.size());
    std::size_t total = 0;
    bool any_device = false;
    for (const auto& th : raw.threads) {
      total += th.records.size();
      for (const auto& x : th.records) any_device |= x.device == device_status::ok;
    }
    r.instances_.reserve(total);
    for (std::size_t t = 0; t < raw.threads.size(); ++t) {
      r.orphans_ += append_thread_instances(raw.threads[t].records, static_cast<std::uint32_t>(t), r.instances_,
                                            r.sources_.cupti_valid ? &instance_of[t] : nullptr);
      std::vector<raw_instance>().swap(raw.threads[t].records);
    }
    if (r.sources_.cupti_valid) {
      r.activity_names_ = std::move(raw.activity_names);
      r.activity_demangled_ = demangle_all(r.activity_names_);
      r.activities_ = attribute_activities(raw.activities, r.activity_names_.size(), instance_of, r.instances_);
      add_children_activity(r.instances_);
      r.kernel_summary_ =
          build_kernel_summary(r.sites_, r.instances_, r.activities_, r.activity_names_, r.activity_demangled_);
    }
    if (any_device) compute_device_self(r.instances_);
  }

  /// The snapshot's process (collect() fills it; a snapshot built by hand gets this process's), with
  /// every device a kept scope (`deferred`: those of instances not built yet) or a CUPTI record names.
  static process_desc process_of(raw_snapshot& raw, const report& r, const std::vector<std::int32_t>& deferred) {
    process_desc p = raw.process.pid != 0 ? std::move(raw.process) : current_process(raw.origin_ns);
    p.devices.insert(p.devices.end(), deferred.begin(), deferred.end());
    for (const auto& x : r.instances_)
      if (x.device_id >= 0) p.devices.push_back(x.device_id);
    for (const auto& a : r.activities_)
      if (a.device >= 0) p.devices.push_back(a.device);
    std::sort(p.devices.begin(), p.devices.end());
    p.devices.erase(std::unique(p.devices.begin(), p.devices.end()), p.devices.end());
    return p;
  }
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
