// scopeprof: report builder helper: a streaming distribution as the report's duration_stats and histogram.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/distribution.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The report's statistics of `d` (values times `scale`: a fold kept in host clock ticks gives ns per
/// tick): exact count/sum/min/max/mean/stddev, quantiles within 1/129.
inline duration_stats stats_of(const distribution& d, double scale = 1.0) noexcept {
  duration_stats s;
  const running_stats& r = d.stats;
  s.count = r.count;
  if (r.count == 0) return s;
  const auto ns = [scale](std::int64_t v) {
    return scale == 1.0 ? v : static_cast<std::int64_t>(static_cast<double>(v) * scale + (v >= 0 ? 0.5 : -0.5));
  };
  s.sum = ns(r.sum);
  s.min = ns(r.min);
  s.max = ns(r.max);
  s.mean = r.mean() * scale;
  s.stddev = r.stddev() * scale;
  // The histogram counts a negative value as 0 (never the case for durations); clamp to the exact range.
  const auto q = [&](double p) {
    std::int64_t v = d.histogram.quantile(p);
    if (v < r.min) v = r.min;
    if (v > r.max) v = r.max;
    return static_cast<double>(ns(v));
  };
  s.median = q(0.5);
  s.p90 = q(0.9);
  s.p99 = q(0.99);
  return s;
}

/// The non-empty buckets of `d`'s histogram, ascending and disjoint (bounds times `scale`, as in
/// stats_of()). With less than 1 ns per unit (a fast clock's ticks), buckets narrower than a nanosecond
/// round to the same ns: such a bucket joins the one before it, so no two buckets share a value.
inline std::vector<histogram_bin> histogram_of(const distribution& d, double scale = 1.0) {
  std::vector<histogram_bin> bins;
  d.histogram.for_each_bucket([&](std::int64_t lower, std::int64_t upper, std::uint64_t count) {
    if (scale == 1.0) {
      bins.push_back({lower, upper, count});
      return;
    }
    const auto lo = static_cast<std::int64_t>(static_cast<double>(lower) * scale + 0.5);
    const auto hi = (std::max)(lo, static_cast<std::int64_t>(static_cast<double>(upper + 1) * scale + 0.5) - 1);
    if (!bins.empty() && lo <= bins.back().upper_ns) {
      bins.back().upper_ns = hi;  // ends ascend, so hi is at least the bucket's upper bound
      bins.back().count += count;
      return;
    }
    bins.push_back({lo, hi, count});
  });
  return bins;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
