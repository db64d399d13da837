// scopeprof tool: a two-sided Mann-Whitney U (Wilcoxon rank-sum) test on two samples given as duration
// histograms. Every value of a bucket is taken as tied at the bucket's midpoint, so the test runs in time
// linear in the number of buckets whatever the number of calls (counts reach 10^8 and more).
//
//   auto t = scopeprof_cli::mann_whitney(row_a.host_histogram, row_b.host_histogram);
//   if (t.tested && t.p_value < 0.05) ...   // t.effect > 0.5: B tends to be slower
#pragma once

#include <scopeprof.hpp>

#include <cstdint>
#include <vector>

namespace scopeprof_cli {

/// Below this many calls on either side the normal approximation is too rough to report a p-value.
inline constexpr std::uint64_t rank_test_min_calls = 8;

struct rank_test_result {
  std::uint64_t n_a = 0;  ///< calls in A (sum of its bucket counts)
  std::uint64_t n_b = 0;
  /// U of B: the pairs (a, b) with b > a, plus half the pairs tied. 0..n_a*n_b; n_a*n_b/2 under no change.
  double u = 0;
  /// Standard score of U with continuity correction and tie-corrected variance (positive: B larger).
  double z = 0;
  /// Two-sided p-value; 1 when every value is tied; NaN when not tested.
  double p_value = 0;
  /// Common-language effect size P(B > A) + 0.5 P(B == A): 0.5 no shift, 1 every B above every A.
  /// NaN when a side is empty.
  double effect = 0;
  /// False when a side has fewer than rank_test_min_calls calls: then there is no p-value, and no
  /// significance may be claimed.
  bool tested = false;
};

/// The test of A against B. Buckets need not be sorted; buckets of either side with the same midpoint
/// form one group of ties.
rank_test_result mann_whitney(const std::vector<scopeprof::histogram_bin>& a,
                              const std::vector<scopeprof::histogram_bin>& b);

}  // namespace scopeprof_cli
