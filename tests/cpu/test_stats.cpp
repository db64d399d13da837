// Streaming statistics primitives (detail/running_stats.hpp, detail/log_histogram.hpp), checked against
// independent computations: a two-pass mean and deviation in long double, exact nearest-rank quantiles
// from sorted copies, and bucket bounds derived here by a loop rather than the headers' bit tricks.
// Nothing in the umbrella includes these headers yet, so the single-header suite has none of this.
#if __has_include(<scopeprof/detail/running_stats.hpp>)
#include <scopeprof/detail/log_histogram.hpp>
#include <scopeprof/detail/running_stats.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::detail::log_histogram;
using scopeprof::detail::running_stats;
using values = std::vector<std::int64_t>;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

struct dist {
  std::string name;
  values v;
};

/// The data sets every check runs over. Durations are non-negative; `signed` only feeds running_stats.
std::vector<dist> distributions(bool with_signed) {
  std::mt19937_64 rng(0x5eed5ca1eULL);
  const std::size_t n = 20000;
  std::vector<dist> out;
  auto make = [&](const char* name, auto gen) {
    values v(n);
    for (auto& x : v) x = gen();
    out.push_back({name, std::move(v)});
  };
  std::uniform_int_distribution<std::int64_t> uni(0, 1000000), tiny(0, 127);
  std::uniform_int_distribution<std::int64_t> huge((std::int64_t{1} << 62) - (std::int64_t{1} << 58),
                                                   (std::int64_t{1} << 62) + (std::int64_t{1} << 58));
  std::uniform_real_distribution<double> exponent(2.0, 8.0);  // 100 ns .. 100 ms: 6 orders of magnitude
  std::normal_distribution<double> fast(1e4, 500.0), slow(5e6, 1e5);
  std::bernoulli_distribution pick_slow(0.3);
  make("uniform", [&] { return uni(rng); });
  make("small exact", [&] { return tiny(rng); });
  make("log spread", [&] { return std::llround(std::pow(10.0, exponent(rng))); });
  make("bimodal", [&] { return std::max<std::int64_t>(0, std::llround(pick_slow(rng) ? slow(rng) : fast(rng))); });
  make("constant", [] { return std::int64_t{4242}; });
  make("huge", [&] { return huge(rng); });
  out.push_back({"single", {777}});
  out.push_back({"two far apart", {5, 1000000000}});
  if (with_signed) {
    std::uniform_int_distribution<std::int64_t> sgn(-1000000, 1000000);
    make("signed", [&] { return sgn(rng); });
  }
  return out;
}

// ---- running_stats ---------------------------------------------------------------------------------------

struct exact_stats {
  std::uint64_t count = 0;
  std::int64_t sum = 0, min = 0, max = 0;
  long double mean = 0, stddev = 0;
};

/// Two passes in long double; the sum clamped to int64 the way the header documents (non-negative data
/// saturates at INT64_MAX; the signed data set never leaves the range).
exact_stats two_pass(const values& v) {
  exact_stats e;
  e.count = v.size();
  if (v.empty()) return e;
  long double total = 0;
  bool over = false;
  std::int64_t s = 0;
  for (std::int64_t x : v) {
    total += static_cast<long double>(x);
    if (x > 0 && s > kMax - x) over = true;
    if (!over) s += x;
  }
  e.sum = over ? kMax : s;
  e.min = *std::min_element(v.begin(), v.end());
  e.max = *std::max_element(v.begin(), v.end());
  e.mean = total / static_cast<long double>(v.size());
  long double sq = 0;
  for (std::int64_t x : v) sq += (static_cast<long double>(x) - e.mean) * (static_cast<long double>(x) - e.mean);
  e.stddev = std::sqrt(sq / static_cast<long double>(v.size()));
  return e;
}

bool close(long double got, long double want, long double rel) {
  if (want == 0) return got == 0;
  return std::fabs(got - want) <= rel * std::fabs(want);
}

void check_equal(const running_stats& s, const exact_stats& e, long double rel) {
  CHECK(s.count == e.count);
  CHECK(s.sum == e.sum);
  if (e.count) {
    CHECK(s.min == e.min);
    CHECK(s.max == e.max);
  }
  CHECK(close(s.mean(), e.mean, rel));
  CHECK(close(s.stddev(), e.stddev, rel));
}

running_stats one_pass(const values& v, std::size_t from, std::size_t to) {
  running_stats s;
  for (std::size_t i = from; i < to; ++i) s.add(v[i]);
  return s;
}

}  // namespace

TEST_CASE("stats: running_stats matches a two-pass computation") {
  for (const dist& d : distributions(true)) {
    CAPTURE(d.name);
    check_equal(one_pass(d.v, 0, d.v.size()), two_pass(d.v), 1e-9L);
  }
}

TEST_CASE("stats: running_stats merge equals one pass over the union") {
  std::mt19937_64 rng(7);
  for (const dist& d : distributions(true)) {
    CAPTURE(d.name);
    const exact_stats want = two_pass(d.v);
    // Two halves at a random cut, both orders.
    const std::size_t cut = std::uniform_int_distribution<std::size_t>(0, d.v.size())(rng);
    running_stats a = one_pass(d.v, 0, cut), b = one_pass(d.v, cut, d.v.size());
    running_stats ab = a, ba = b;
    ab.merge(b);
    ba.merge(a);
    check_equal(ab, want, 1e-9L);
    check_equal(ba, want, 1e-9L);
    // Many uneven pieces folded pairwise, as per-thread partial results would be.
    std::vector<running_stats> parts;
    for (std::size_t from = 0; from < d.v.size();) {
      const std::size_t to = std::min(d.v.size(), from + 1 + from / 3);
      parts.push_back(one_pass(d.v, from, to));
      from = to;
    }
    while (parts.size() > 1) {
      std::vector<running_stats> next;
      for (std::size_t i = 0; i + 1 < parts.size(); i += 2) {
        next.push_back(parts[i]);
        next.back().merge(parts[i + 1]);
      }
      if (parts.size() % 2) next.push_back(parts.back());
      parts.swap(next);
    }
    check_equal(parts.front(), want, 1e-9L);
  }
}

TEST_CASE("stats: running_stats empty, single value and saturated sum") {
  const running_stats empty;
  CHECK(empty.count == 0);
  CHECK(empty.sum == 0);
  CHECK(empty.min == kMax);
  CHECK(empty.max == std::numeric_limits<std::int64_t>::min());
  CHECK(empty.mean() == 0.0);
  CHECK(empty.stddev() == 0.0);

  running_stats x;
  for (std::int64_t v : {3, 9, 27}) x.add(v);
  running_stats e1;  // empty.merge(x) is x, bit for bit
  e1.merge(x);
  running_stats x1 = x;  // x.merge(empty) is x
  x1.merge(empty);
  for (const running_stats* s : {&e1, &x1}) {
    CHECK(s->count == 3);
    CHECK(s->sum == 39);
    CHECK(s->min == 3);
    CHECK(s->max == 27);
    CHECK(s->mean() == 13.0);
    CHECK(s->variance() == doctest::Approx((100.0 + 16.0 + 196.0) / 3.0).epsilon(1e-15));
  }
  running_stats ee;
  ee.merge(empty);
  CHECK(ee.count == 0);
  CHECK(ee.mean() == 0.0);

  running_stats one;
  one.add(-42);
  CHECK(one.mean() == -42.0);
  CHECK(one.stddev() == 0.0);
  CHECK(one.min == -42);
  CHECK(one.max == -42);

  running_stats big;
  big.add(kMax);
  big.add(1);
  CHECK(big.sum == kMax);  // saturates instead of wrapping
  CHECK(big.mean() == doctest::Approx(static_cast<double>(kMax) / 2.0));
  running_stats low;
  low.add(std::numeric_limits<std::int64_t>::min());
  low.add(-1);
  CHECK(low.sum == std::numeric_limits<std::int64_t>::min());
}

// ---- log_histogram ---------------------------------------------------------------------------------------

namespace {

/// Bucket [lower, upper] of v by the definition, with a loop for the power of two.
std::pair<std::int64_t, std::int64_t> reference_bucket(std::int64_t v) {
  if (v < 128) return {v, v};
  int h = 0;
  while (h < 62 && (std::int64_t{1} << (h + 1)) <= v) ++h;
  const std::int64_t w = std::int64_t{1} << (h - 6);
  const std::int64_t lower = v - v % w;
  return {lower, lower + (w - 1)};
}

using bucket_list = std::vector<std::pair<std::pair<std::int64_t, std::int64_t>, std::uint64_t>>;

bucket_list buckets_of(const log_histogram& h) {
  bucket_list out;
  h.for_each_bucket([&](std::int64_t lo, std::int64_t hi, std::uint64_t n) { out.push_back({{lo, hi}, n}); });
  return out;
}

bucket_list reference_buckets(const values& v) {
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint64_t> m;
  for (std::int64_t x : v) ++m[reference_bucket(x < 0 ? 0 : x)];
  return bucket_list(m.begin(), m.end());
}

log_histogram histogram_of(const values& v, std::size_t from, std::size_t to) {
  log_histogram h;
  for (std::size_t i = from; i < to; ++i) h.record(v[i]);
  return h;
}

/// got within 1/129 (and so within 1%) of want; exact below 128.
bool within_bound(std::int64_t got, std::int64_t want) {
  if (want < 128) return got == want;
  const long double diff = std::fabs(static_cast<long double>(got) - static_cast<long double>(want));
  return diff * 129 <= static_cast<long double>(want) && diff <= 0.01L * static_cast<long double>(want);
}

const double kQuantiles[] = {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0};

}  // namespace

TEST_CASE("stats: log_histogram bucket bounds and the 1/129 error bound, every bucket") {
  CHECK(log_histogram::bucket_index(0) == 0);
  CHECK(log_histogram::bucket_index(kMax) == log_histogram::max_buckets - 1);
  CHECK(log_histogram::bucket_upper(log_histogram::max_buckets - 1) == kMax);
  long double worst = 0;  // the largest relative error seen
  for (std::uint32_t i = 0; i < log_histogram::max_buckets; ++i) {
    const std::int64_t lo = log_histogram::bucket_lower(i), hi = log_histogram::bucket_upper(i);
    const std::int64_t r = log_histogram::bucket_value(i);
    const auto ref = reference_bucket(lo);
    REQUIRE(ref.first == lo);
    REQUIRE(ref.second == hi);
    REQUIRE(log_histogram::bucket_index(lo) == i);
    REQUIRE(log_histogram::bucket_index(hi) == i);
    if (i > 0) REQUIRE(log_histogram::bucket_upper(i - 1) + 1 == lo);  // contiguous, no gaps
    REQUIRE(r >= lo);
    REQUIRE(r <= hi);
    if (i < 128) {
      REQUIRE(r == lo);
      continue;
    }
    const auto width = static_cast<std::uint64_t>(hi - lo) + 1, ulo = static_cast<std::uint64_t>(lo),
               uhi = static_cast<std::uint64_t>(hi), ur = static_cast<std::uint64_t>(r);
    REQUIRE(width * 64 <= ulo);         // width at most 1/64 of the lower bound
    REQUIRE((ur - ulo) * 129 <= ulo);   // the reported value within 1/129 of the lowest value...
    REQUIRE((uhi - ur) * 129 <= uhi);   // ... and of the highest (so of every value between)
    worst = std::max({worst, static_cast<long double>(ur - ulo) / ulo, static_cast<long double>(uhi - ur) / uhi});
#if defined(__SIZEOF_INT128__)
    // No other integer does better: worst(r) <= worst(r - 1) and worst(r + 1).
    using u128 = unsigned __int128;
    auto worse = [&](std::uint64_t a, std::uint64_t b) {  // worst(a) > worst(b), as exact fractions
      auto up = [&](std::uint64_t x, u128& n, u128& d) {
        if ((x - ulo) * static_cast<u128>(uhi) >= (uhi - x) * static_cast<u128>(ulo)) { n = x - ulo; d = ulo; }
        else { n = uhi - x; d = uhi; }
      };
      u128 na, da, nb, db;
      up(a, na, da);
      up(b, nb, db);
      return na * db > nb * da;
    };
    if (ur > ulo) REQUIRE_FALSE(worse(ur, ur - 1));
    if (ur < uhi) REQUIRE_FALSE(worse(ur, ur + 1));
#endif
  }
  // The bound is reached (m = 64, width 2: [128, 129] reports 128, 1/129 below 129).
  CHECK(worst == doctest::Approx(1.0 / 129.0).epsilon(1e-12));
}

TEST_CASE("stats: log_histogram quantiles within 1% of the exact nearest rank") {
  for (const dist& d : distributions(false)) {
    CAPTURE(d.name);
    const log_histogram h = histogram_of(d.v, 0, d.v.size());
    values sorted = d.v;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    REQUIRE(h.count() == n);
    CHECK(h.min() == sorted.front());
    CHECK(h.max() == sorted.back());
    CHECK(buckets_of(h) == reference_buckets(d.v));
    for (double q : kQuantiles) {
      CAPTURE(q);
      // Nearest rank, 1-based: ceil(q n), at least 1.
      std::size_t k = 1;
      while (static_cast<double>(k) < q * static_cast<double>(n) && k < n) ++k;
      const std::int64_t want = sorted[k - 1], got = h.quantile(q);
      CAPTURE(want);
      CAPTURE(got);
      CHECK(within_bound(got, want));
    }
    CHECK(h.quantile(0.0) == sorted.front());
    CHECK(h.quantile(1.0) == sorted.back());
  }
}

TEST_CASE("stats: log_histogram nearest rank on tiny sets") {
  log_histogram h;
  CHECK(h.quantile(0.5) == 0);  // empty
  h.record(1000);
  for (double q : kQuantiles) CHECK(h.quantile(q) == 1000);
  h.record(10);
  h.record(50);  // {10, 50, 1000}: ranks ceil(3q)
  CHECK(h.quantile(0.0) == 10);
  CHECK(h.quantile(0.33) == 10);
  CHECK(h.quantile(0.34) == 50);
  CHECK(h.quantile(0.66) == 50);
  CHECK(h.quantile(0.67) == 1000);
  CHECK(h.quantile(-1.0) == 10);  // clamped
  CHECK(h.quantile(2.0) == 1000);
  CHECK(h.quantile(std::nan("")) == 10);
}

TEST_CASE("stats: log_histogram merge equals the histogram of the union, bucket by bucket") {
  std::mt19937_64 rng(11);
  for (const dist& d : distributions(false)) {
    CAPTURE(d.name);
    const log_histogram whole = histogram_of(d.v, 0, d.v.size());
    const std::size_t cut = std::uniform_int_distribution<std::size_t>(0, d.v.size())(rng);
    log_histogram a = histogram_of(d.v, 0, cut);
    const log_histogram b = histogram_of(d.v, cut, d.v.size());
    a.merge(b);
    CHECK(buckets_of(a) == buckets_of(whole));
    CHECK(buckets_of(a) == reference_buckets(d.v));
    CHECK(a.count() == whole.count());
    CHECK(a.min() == whole.min());
    CHECK(a.max() == whole.max());
    for (double q : kQuantiles) CHECK(a.quantile(q) == whole.quantile(q));
    log_histogram empty;
    empty.merge(whole);
    CHECK(buckets_of(empty) == buckets_of(whole));
  }
  // Disjoint windows far apart, the higher one merged into the lower, and the reverse.
  log_histogram lo, hi;
  lo.record(100);
  lo.record(1000);
  hi.record(std::int64_t{1} << 40);
  log_histogram lo_hi = lo, hi_lo = hi;
  lo_hi.merge(hi);
  hi_lo.merge(lo);
  CHECK(buckets_of(lo_hi) == reference_buckets({100, 1000, std::int64_t{1} << 40}));
  CHECK(buckets_of(hi_lo) == buckets_of(lo_hi));
  // Merging itself doubles every count.
  lo.merge(lo);
  CHECK(buckets_of(lo) == bucket_list{{{100, 100}, 2}, {{1000, 1007}, 2}});
  CHECK(lo.count() == 4);
}

TEST_CASE("stats: log_histogram record(v, n) equals n records of v") {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<std::int64_t> value(0, std::int64_t{1} << 45);
  std::uniform_int_distribution<std::uint64_t> times(0, 50);
  log_histogram bulk, single;
  for (int i = 0; i < 500; ++i) {
    const std::int64_t v = value(rng) >> (i % 40);
    const std::uint64_t n = times(rng);
    bulk.record(v, n);
    for (std::uint64_t k = 0; k < n; ++k) single.record(v);
  }
  CHECK(buckets_of(bulk) == buckets_of(single));
  CHECK(bulk.count() == single.count());
  CHECK(bulk.min() == single.min());
  CHECK(bulk.max() == single.max());
  for (double q : kQuantiles) CHECK(bulk.quantile(q) == single.quantile(q));
}

TEST_CASE("stats: log_histogram negative, zero and INT64_MAX") {
  log_histogram h;
  h.record(-5);
  h.record(std::numeric_limits<std::int64_t>::min(), 2);
  CHECK(h.negatives() == 3);
  CHECK(h.count() == 3);
  CHECK(h.max() == 0);
  CHECK(h.quantile(1.0) == 0);
  h.record(0);
  CHECK(buckets_of(h) == bucket_list{{{0, 0}, 4}});
  h.record(kMax);
  CHECK(h.count() == 5);
  CHECK(h.negatives() == 3);
  CHECK(h.lost() == 0);
  CHECK(h.quantile(1.0) == kMax);
  CHECK(h.quantile(0.8) == 0);  // rank ceil(0.8 * 5) = 4 of {0, 0, 0, 0, max} is 0; rank 5 the max
  CHECK(h.quantile(0.81) == kMax);
  const bucket_list b = buckets_of(h);
  REQUIRE(b.size() == 2);
  CHECK(b.back().first.first == (std::int64_t{127} << 56));
  CHECK(b.back().first.second == kMax);
  CHECK(h.bucket_count() == log_histogram::max_buckets);  // 0 and INT64_MAX: the widest window
  MESSAGE("wide (0 .. INT64_MAX) histogram: ", h.bucket_count(), " counters, ", h.memory_bytes(), " bytes");
  CHECK(h.memory_bytes() < 32 * 1024);
  log_histogram mid;  // one value near INT64_MAX among others: within the bound
  mid.record(kMax - 12345);
  mid.record(kMax);
  mid.record(1);
  CHECK(within_bound(mid.quantile(0.5), kMax - 12345));
}

TEST_CASE("stats: log_histogram memory grows with the spread, and record in the window does not allocate") {
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int64_t> narrow(100000, 799999);  // within 3 octaves (2^16.6 .. 2^19.6)
  log_histogram h;
  for (int i = 0; i < 1000; ++i) h.record(narrow(rng));
  const std::size_t counters = h.bucket_count(), bytes = h.memory_bytes();
  MESSAGE("narrow (3 octaves) histogram: ", counters, " counters, ", bytes, " bytes");
  CHECK(counters <= 3 * 64 + 2 * log_histogram::growth_slack + 1);
  CHECK(bytes < 4096);
  // Buckets [lower of 100000's, upper of 799999's] are all inside the window now: no growth for any value.
  for (int i = 0; i < 200000; ++i) h.record(narrow(rng));
  h.record(100000, 7);
  h.record(799999, 7);
  CHECK(h.bucket_count() == counters);
  CHECK(h.memory_bytes() == bytes);
  CHECK(h.count() == 201014);
  // clear() keeps the window: refilling does not allocate either.
  h.clear();
  CHECK(h.count() == 0);
  CHECK(buckets_of(h).empty());
  CHECK(h.quantile(0.5) == 0);
  for (int i = 0; i < 1000; ++i) h.record(narrow(rng));
  CHECK(h.memory_bytes() == bytes);
  // Growing downwards and upwards keeps every count where it was.
  log_histogram g;
  values seen;
  for (std::int64_t v : {5000, 4000000, 300, 1 << 30, 5000, 0, 129}) {
    g.record(v);
    seen.push_back(v);
    CHECK(buckets_of(g) == reference_buckets(seen));
  }
}

#endif  // __has_include(<scopeprof/detail/running_stats.hpp>)
