// scopeprof: the report's cold code: duration_stats::of(), build_report() (raw snapshot to report) and the
// report's instances, built when first asked for.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report/deferred_instances.hpp>
#include <scopeprof/detail/report/stats.hpp>
#include <scopeprof/detail/report_builder.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/report_types.hpp>

#include <cstdint>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN

SCOPEPROF_API duration_stats duration_stats::of(std::vector<std::int64_t> values) {
  detail::distribution d;
  for (const std::int64_t v : values) d.add(v);
  return detail::stats_of(d);
}

SCOPEPROF_API report detail::build_report(raw_snapshot raw) { return report_builder::build(std::move(raw)); }

SCOPEPROF_API const std::vector<scope_instance>& report::instances() const noexcept {
  return deferred_ == nullptr ? instances_ : deferred_->get();
}

SCOPEPROF_API bool report::instances_lost() const noexcept {
  if (deferred_ == nullptr) return false;
  deferred_->get();
  return deferred_->failed();
}

SCOPEPROF_NAMESPACE_END
