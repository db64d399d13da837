// scopeprof: report builder helper: a streaming distribution as the report's duration_stats and histogram.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/distribution.hpp>
#include <scopeprof/report_types.hpp>

#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The report's statistics of `d`: exact count/sum/min/max/mean/stddev, quantiles within 1/129.
inline duration_stats stats_of(const distribution& d) noexcept {
  duration_stats s;
  const running_stats& r = d.stats;
  s.count = r.count;
  if (r.count == 0) return s;
  s.sum = r.sum;
  s.min = r.min;
  s.max = r.max;
  s.mean = r.mean();
  s.stddev = r.stddev();
  // The histogram counts a negative value as 0 (never the case for durations); clamp to the exact range.
  const auto q = [&](double p) {
    std::int64_t v = d.histogram.quantile(p);
    if (v < r.min) v = r.min;
    if (v > r.max) v = r.max;
    return static_cast<double>(v);
  };
  s.median = q(0.5);
  s.p90 = q(0.9);
  s.p99 = q(0.99);
  return s;
}

/// The non-empty buckets of `d`'s histogram, ascending.
inline std::vector<histogram_bin> histogram_of(const distribution& d) {
  std::vector<histogram_bin> bins;
  d.histogram.for_each_bucket([&](std::int64_t lower, std::int64_t upper, std::uint64_t count) {
    bins.push_back({lower, upper, count});
  });
  return bins;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
