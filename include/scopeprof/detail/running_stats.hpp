// scopeprof: streaming count, sum, min, max, mean and standard deviation of int64 values (nanoseconds), in
// constant memory. Welford's update for one value; Chan, Golub and LeVeque's pairwise combination for merging
// two partial results (per thread, per collect), so the order of folding does not matter beyond rounding.
#pragma once

#include <scopeprof/config.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Streaming statistics of int64 values. count, sum, min and max are exact (sum: see below); mean and the
/// deviation are doubles. Empty: count 0, sum 0, min INT64_MAX, max INT64_MIN, mean 0, stddev 0.
struct running_stats {
  std::uint64_t count = 0;
  /// Exact while the true total fits an int64. Each addition saturates at INT64_MAX (INT64_MIN) instead of
  /// wrapping: non-negative nanoseconds reach it after 2^63 ns, about 292 years of summed time (or after two
  /// values near 2^62). mean() and stddev() do not use it and stay right past that.
  std::int64_t sum = 0;
  std::int64_t min = (std::numeric_limits<std::int64_t>::max)();
  std::int64_t max = (std::numeric_limits<std::int64_t>::min)();

  /// Adds one value (Welford's update).
  void add(std::int64_t v) noexcept {
    ++count;
    sum = saturating_add(sum, v);
    if (v < min) min = v;
    if (v > max) max = v;
    const double x = static_cast<double>(v);
    const double d = x - mean_;
    mean_ += d / static_cast<double>(count);
    m2_ += d * (x - mean_);
  }

  /// Adds every value `o` holds, as if they had been add()ed here (Chan et al.). Merging an empty one
  /// changes nothing; merging into an empty one copies `o`.
  void merge(const running_stats& o) noexcept {
    if (o.count == 0) return;
    if (count == 0) {
      *this = o;
      return;
    }
    const double na = static_cast<double>(count);
    const double nb = static_cast<double>(o.count);
    const double n = na + nb;
    const double d = o.mean_ - mean_;
    mean_ += d * (nb / n);
    m2_ += o.m2_ + d * d * (na * (nb / n));
    count += o.count;
    sum = saturating_add(sum, o.sum);
    if (o.min < min) min = o.min;
    if (o.max > max) max = o.max;
  }

  /// Arithmetic mean (0 when empty). Rounded to double, not derived from `sum`.
  double mean() const noexcept { return count ? mean_ : 0.0; }
  /// Population variance: the sum of squared deviations divided by count, not count - 1 (0 when empty).
  double variance() const noexcept { return count ? (m2_ > 0 ? m2_ / static_cast<double>(count) : 0.0) : 0.0; }
  /// Population standard deviation, sqrt(variance()).
  double stddev() const noexcept { return std::sqrt(variance()); }

  /// a + b clamped to the int64 range.
  static std::int64_t saturating_add(std::int64_t a, std::int64_t b) noexcept {
    constexpr std::int64_t hi = (std::numeric_limits<std::int64_t>::max)();
    constexpr std::int64_t lo = (std::numeric_limits<std::int64_t>::min)();
    if (b > 0 && a > hi - b) return hi;
    if (b < 0 && a < lo - b) return lo;
    return a + b;
  }

 private:
  double mean_ = 0.0;  // running mean
  double m2_ = 0.0;    // sum of squared deviations from the running mean
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
