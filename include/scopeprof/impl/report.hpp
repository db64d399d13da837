// scopeprof: the report's cold code: statistics and build_report() (raw snapshot to report).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report_builder.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN

SCOPEPROF_API duration_stats duration_stats::of(std::vector<std::int64_t> values) {
    duration_stats s;
    s.count = values.size();
    if (values.empty()) return s;
    std::sort(values.begin(), values.end());
    s.min = values.front();
    s.max = values.back();
    long double sum = 0;
    for (auto v : values) sum += v;
    s.sum = static_cast<std::int64_t>(sum);
    s.mean = static_cast<double>(sum / values.size());
    const std::size_t n = values.size();
    s.median = n % 2 ? static_cast<double>(values[n / 2])
                     : (static_cast<double>(values[n / 2 - 1]) + static_cast<double>(values[n / 2])) / 2.0;
    long double sq = 0;
    for (auto v : values) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(static_cast<double>(sq / n));
    return s;
  }

SCOPEPROF_API report detail::build_report(raw_snapshot raw) { return report_builder::build(std::move(raw)); }

SCOPEPROF_NAMESPACE_END
