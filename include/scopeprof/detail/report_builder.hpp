// scopeprof: the report builder: raw per-thread records in, a report out. Runs the passes in
// detail/report/ in order; each is a pure function of what the passes before it produced.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/process_identity.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report/activities.hpp>
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
    if (!raw.folded.present) r.timeline_.kept = total;  // a snapshot built by hand: its records are the timeline
    for (std::size_t t = 0; t < raw.threads.size(); ++t) {
      r.threads_.push_back(raw.threads[t].desc);
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
    if (raw.folded.present) r.orphans_ = raw.folded.orphans;
    path_nodes paths = sum_by_path(r.sites_, r.instances_, &raw.folded);
    r.flat_ = build_flat_rows(r.sites_, paths);
    r.tree_ = lay_out_paths(paths);
    r.steps_ = build_steps(raw.steps, raw.steps_lost, r.step_stats_);
    r.process_ = process_of(raw, r);
    return r;
  }

 private:
  /// The snapshot's process (collect() fills it; a snapshot built by hand gets this process's), with
  /// every device a kept scope or a CUPTI record names.
  static process_desc process_of(raw_snapshot& raw, const report& r) {
    process_desc p = raw.process.pid != 0 ? std::move(raw.process) : current_process(raw.origin_ns);
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
