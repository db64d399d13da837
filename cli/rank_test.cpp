// Mann-Whitney U on histograms. The statistic is counted over tie groups (one group per distinct bucket
// midpoint on either side), so it costs O(buckets log buckets) for the sort and O(buckets) after it.
// Sums run in long double: U reaches n_a*n_b (10^16 and more) and the tie term t^3 (10^24), beyond the
// exact range of double; only their ratios matter, and those keep full precision.
#include "rank_test.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scopeprof_cli {
namespace {

struct tagged_bucket {
  long double mid = 0;  // the value every call of the bucket is taken to have
  long double count = 0;
  bool from_b = false;
};

std::vector<tagged_bucket> merged_buckets(const std::vector<scopeprof::histogram_bin>& a,
                                          const std::vector<scopeprof::histogram_bin>& b) {
  std::vector<tagged_bucket> all;
  all.reserve(a.size() + b.size());
  // lower/2 + upper/2 rather than (lower + upper)/2: no overflow, and exact in long double.
  for (const auto& x : a)
    all.push_back({static_cast<long double>(x.lower_ns) / 2 + static_cast<long double>(x.upper_ns) / 2,
                   static_cast<long double>(x.count), false});
  for (const auto& x : b)
    all.push_back({static_cast<long double>(x.lower_ns) / 2 + static_cast<long double>(x.upper_ns) / 2,
                   static_cast<long double>(x.count), true});
  std::sort(all.begin(), all.end(),
            [](const tagged_bucket& l, const tagged_bucket& r) { return l.mid < r.mid; });
  return all;
}

struct rank_sums {
  long double n_a = 0, n_b = 0;
  long double u_b = 0;       // pairs with b > a, plus half the tied pairs
  long double tie_term = 0;  // sum over tie groups of t^3 - t
};

// One pass over the sorted buckets: each group of equal midpoints adds the pairs it wins against every
// A value below it, half its own tied pairs, and its share of the tie correction.
rank_sums sum_ranks(const std::vector<tagged_bucket>& all) {
  rank_sums s;
  for (std::size_t i = 0; i < all.size();) {
    long double group_a = 0, group_b = 0;
    const long double mid = all[i].mid;
    for (; i < all.size() && all[i].mid == mid; ++i) (all[i].from_b ? group_b : group_a) += all[i].count;
    s.u_b += group_b * s.n_a + 0.5L * group_a * group_b;
    const long double t = group_a + group_b;
    s.tie_term += t * (t * t - 1);
    s.n_a += group_a;
    s.n_b += group_b;
  }
  return s;
}

// Variance of U under the null hypothesis, tie-corrected; 0 when every value is tied (or N < 2).
long double null_variance(const rank_sums& s) {
  const long double n = s.n_a + s.n_b;
  if (n < 2) return 0;
  const long double bracket = (n + 1) - s.tie_term / (n * (n - 1));
  // All values tied makes the bracket 0 up to rounding: treat a remainder that small as exactly 0.
  if (bracket <= (n + 1) * 1e-12L) return 0;
  return s.n_a * s.n_b / 12 * bracket;
}

}  // namespace

rank_test_result mann_whitney(const std::vector<scopeprof::histogram_bin>& a,
                              const std::vector<scopeprof::histogram_bin>& b) {
  const rank_sums s = sum_ranks(merged_buckets(a, b));
  rank_test_result r;
  for (const auto& x : a) r.n_a += x.count;
  for (const auto& x : b) r.n_b += x.count;
  const long double pairs = s.n_a * s.n_b;
  r.u = static_cast<double>(s.u_b);
  r.effect = pairs > 0 ? static_cast<double>(s.u_b / pairs) : std::numeric_limits<double>::quiet_NaN();
  r.tested = r.n_a >= rank_test_min_calls && r.n_b >= rank_test_min_calls;
  if (!r.tested) {
    r.p_value = std::numeric_limits<double>::quiet_NaN();
    return r;
  }
  const long double variance = null_variance(s);
  if (variance <= 0) {  // no information to tell the samples apart: nothing is significant
    r.p_value = 1;
    return r;
  }
  const long double shift = s.u_b - pairs / 2;
  // Continuity correction: move |shift| half a unit toward 0 (U moves in steps of 1/2 with ties).
  const long double corrected = std::max(0.0L, std::fabs(shift) - 0.5L);
  r.z = static_cast<double>((shift < 0 ? -corrected : corrected) / std::sqrt(variance));
  r.p_value = std::erfc(std::fabs(r.z) / std::sqrt(2.0));
  return r;
}

}  // namespace scopeprof_cli
