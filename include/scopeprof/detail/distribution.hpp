// scopeprof: one quantity's distribution in constant memory: exact count, sum, min, max, mean and standard
// deviation (running_stats) and quantiles within 1/129 relative (log_histogram). The report's statistics
// (duration_stats) are read from these, so every table figure is either exact or within that bound.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/log_histogram.hpp>
#include <scopeprof/detail/running_stats.hpp>

#include <cstdint>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Relative error bound of every quantile a distribution reports (log_histogram's 1/129).
constexpr double quantile_relative_error = 1.0 / 129.0;

/// One quantity's distribution: exact count/sum/min/max/mean/stddev and quantiles within 1/129.
struct distribution {
  running_stats stats;
  log_histogram histogram;
  void add(std::int64_t v) noexcept {
    stats.add(v);
    histogram.record(v);
  }
  void merge(const distribution& o) noexcept {
    stats.merge(o.stats);
    histogram.merge(o.histogram);
  }
  /// Empty again; the histogram keeps its window. Nothing to do when nothing was added (every value the
  /// histogram counts, loses or takes as negative came through add() or merge(), which count it in `stats`).
  void clear() noexcept {
    if (stats.count == 0) return;
    stats = running_stats{};
    histogram.clear();
  }
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
