// The Mann-Whitney U test on histograms (cli/rank_test.hpp): U and its variance against brute force over
// the individual values, significance on shifted samples only, too few calls, and counts of 10^8.
#include "rank_test.hpp"

// After rank_test.hpp (<scopeprof.hpp>): with LibTorch it brings glog, whose CHECK would replace doctest's.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace {

using scopeprof::histogram_bin;
using scopeprof_cli::mann_whitney;

// One bucket per distinct value: the histogram of exactly these values.
std::vector<histogram_bin> exact_histogram(const std::vector<std::int64_t>& values) {
  std::map<std::int64_t, std::uint64_t> counts;
  for (auto v : values) ++counts[v];
  std::vector<histogram_bin> h;
  for (const auto& [v, n] : counts) h.push_back({v, v, n});
  return h;
}

// Every call of every bucket, at the bucket's midpoint (what the test assumes).
std::vector<double> expanded(const std::vector<histogram_bin>& h) {
  std::vector<double> v;
  for (const auto& b : h)
    for (std::uint64_t i = 0; i < b.count; ++i) v.push_back((static_cast<double>(b.lower_ns) + b.upper_ns) / 2);
  return v;
}

double brute_force_u(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a)
    for (double y : b) u += y > x ? 1.0 : y == x ? 0.5 : 0.0;
  return u;
}

// The exact permutation variance of U given the mid-ranks of the pooled sample (ties included), an
// independent route to the tie-corrected variance the test uses.
double brute_force_variance(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled = a;
  pooled.insert(pooled.end(), b.begin(), b.end());
  std::sort(pooled.begin(), pooled.end());
  const double n = static_cast<double>(pooled.size()), n1 = static_cast<double>(a.size()),
               n2 = static_cast<double>(b.size());
  double sum_sq = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j] == pooled[i]) ++j;
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    sum_sq += static_cast<double>(j - i) * mid_rank * mid_rank;
    i = j;
  }
  return n1 * n2 / (n * (n - 1)) * sum_sq - n1 * n2 * (n + 1) * (n + 1) / (4 * (n - 1));
}

std::vector<std::int64_t> normal_values(unsigned seed, double mean, double sd, int n) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(mean, sd);
  std::vector<std::int64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(std::llround(d(rng)));
  return v;
}

}  // namespace

TEST_CASE("cli rank test: identical samples are not significant") {
  const auto h = exact_histogram(normal_values(1, 100000, 5000, 1000));
  const auto t = mann_whitney(h, h);
  CHECK(t.tested);
  CHECK(t.n_a == 1000);
  CHECK(t.n_b == 1000);
  CHECK(t.u == doctest::Approx(500000.0));
  CHECK(t.effect == doctest::Approx(0.5));
  CHECK(t.p_value > 0.99);
  CHECK(t.z == doctest::Approx(0.0));
}

TEST_CASE("cli rank test: shifted samples are significant, in the right direction") {
  const auto a = exact_histogram(normal_values(1, 100000, 5000, 1000));
  const auto b = exact_histogram(normal_values(2, 120000, 5000, 1000));
  const auto t = mann_whitney(a, b);
  CHECK(t.tested);
  CHECK(t.p_value < 1e-6);
  CHECK(t.z > 0);
  CHECK(t.effect > 0.95);
  const auto back = mann_whitney(b, a);  // the same test the other way round
  CHECK(back.z == doctest::Approx(-t.z));
  CHECK(back.effect == doctest::Approx(1 - t.effect));
  CHECK(back.p_value == doctest::Approx(t.p_value));
}

TEST_CASE("cli rank test: U and the p-value match brute force over the individual values") {
  // Ties inside each side, ties across sides (value 30, the bucket [38, 42] against the value 40) and
  // buckets given out of order.
  const std::vector<histogram_bin> a = {{30, 30, 2}, {10, 10, 3}, {38, 42, 2}, {20, 20, 1}, {55, 55, 1}, {5, 5, 1}};
  const std::vector<histogram_bin> b = {{40, 40, 3}, {30, 30, 1}, {60, 60, 2}, {25, 25, 2}, {70, 70, 1}, {12, 12, 1}};
  const auto va = expanded(a), vb = expanded(b);
  REQUIRE(va.size() == 10);
  REQUIRE(vb.size() == 10);
  const auto t = mann_whitney(a, b);
  REQUIRE(t.tested);
  const double u = brute_force_u(va, vb);
  CHECK(t.u == doctest::Approx(u));
  CHECK(t.effect == doctest::Approx(u / 100));
  const double sigma = std::sqrt(brute_force_variance(va, vb));
  const double shift = u - 50;
  const double z = (shift > 0 ? 1 : -1) * std::max(0.0, std::fabs(shift) - 0.5) / sigma;
  CHECK(t.z == doctest::Approx(z));
  CHECK(t.p_value == doctest::Approx(std::erfc(std::fabs(z) / std::sqrt(2.0))));
}

TEST_CASE("cli rank test: fewer than 8 calls on a side gives no p-value") {
  const auto many = exact_histogram(normal_values(3, 1000, 100, 100));
  const auto t = mann_whitney(exact_histogram({1, 2, 3, 4, 5, 6, 7}), many);
  CHECK_FALSE(t.tested);
  CHECK(std::isnan(t.p_value));
  CHECK(t.effect == doctest::Approx(1.0));  // still described: every B above every A
  CHECK(mann_whitney(exact_histogram({1, 2, 3, 4, 5, 6, 7, 8}), many).tested);
  const auto empty = mann_whitney({}, many);
  CHECK_FALSE(empty.tested);
  CHECK(std::isnan(empty.effect));
}

TEST_CASE("cli rank test: every value tied is not significant") {
  const std::vector<histogram_bin> h = {{1000, 1015, 50}};
  const auto t = mann_whitney(h, h);
  CHECK(t.tested);
  CHECK(t.p_value == 1.0);
}

TEST_CASE("cli rank test: counts of 10^8 in a bucket do not overflow") {
  const std::uint64_t n = 100000000;
  const std::vector<histogram_bin> a = {{100000, 101562, n}};
  const std::vector<histogram_bin> b = {{100000, 101562, n}, {200000, 203124, n}};
  const auto t = mann_whitney(a, b);
  CHECK(t.n_a == n);
  CHECK(t.n_b == 2 * n);
  CHECK(t.u == doctest::Approx(1.5e16));  // n*n ties count half, n*n pairs B above
  CHECK(t.effect == doctest::Approx(0.75));
  CHECK(std::isfinite(t.z));
  CHECK(t.z > 0);
  CHECK(t.p_value < 1e-6);
  const auto tied = mann_whitney(a, a);
  CHECK(tied.p_value == 1.0);
  const auto apart = mann_whitney(a, {{200000, 203124, n}});
  CHECK(apart.effect == 1.0);
  CHECK(apart.p_value < 1e-6);
  CHECK_FALSE(std::isnan(apart.p_value));
}
