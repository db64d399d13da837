// scopeprof: a log-linear histogram of non-negative int64 durations (ns) with a fixed relative error, for
// quantiles of any number of scopes in memory that depends on the spread of the values, not their count.
//
// Buckets. Values 0..127 have one bucket each (exact). A value v >= 128 with highest set bit h (7..62) goes
// to one of 64 equal sub-buckets of [2^h, 2^(h+1)), chosen by the 6 bits below h: width w = 2^(h-6), lower
// bound L = m*w with m = v >> (h-6) in 64..127, index (h-6)*64 + m. The index is one bit scan and a shift
// (no floating point); 0..INT64_MAX takes 3712 buckets. Indices 64..127 of both rules agree (w = 1).
//
// Error bound. A bucket [L, U] (U = L + w - 1) reports r = L + floor(w*m / (2m+1)), the integer next to the
// harmonic mean 2LU/(L+U), which minimises the worst relative error. For every integer x in [L, U]:
//     |r - x| <= x / (2m+1) <= x / 129   (0.7752%),
// since r - L <= w*m/(2m+1) = L/(2m+1), and U - r <= (w*(m+1) - 1)/(2m+1) = U/(2m+1) (the floor loses
// at most 2m/(2m+1)). No other integer r has a smaller worst error (checked for every bucket by the tests).
// Below 128 the error is 0. Quantiles are clamped to the exact min and max, which only brings them closer to
// the true value; rank 1 and rank count() return the exact min and max.
//
// Storage: one std::vector<uint64_t> holding the window [lo, hi] of bucket indices seen so far, grown on
// demand with half an octave (32 buckets) of slack on the side it grows. Values spanning 3 octaves need about
// 200-260 counters (2 KiB); all 57 octaves 3712 (29.7 KiB).
#pragma once

#include <scopeprof/config.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Log-linear histogram of int64 nanoseconds; quantiles within 1/129 relative of the true value.
class log_histogram {
 public:
  /// Values below this are counted exactly.
  static constexpr std::int64_t exact_below = 128;
  /// Sub-buckets per power of two above exact_below.
  static constexpr std::uint32_t sub_buckets = 64;
  /// Buckets needed for 0..INT64_MAX (the last one ends at INT64_MAX).
  static constexpr std::uint32_t max_buckets = 3712;
  /// Buckets added beyond the new value whenever the window grows.
  static constexpr std::uint32_t growth_slack = 32;

  /// Index of the bucket holding v (v >= 0).
  static constexpr std::uint32_t bucket_index(std::int64_t v) noexcept {
    const auto u = static_cast<std::uint64_t>(v);
    if (u < static_cast<std::uint64_t>(exact_below)) return static_cast<std::uint32_t>(u);
    const int shift = highest_bit(u) - 6;
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(shift) << 6) + (u >> shift));
  }
  /// Smallest value of bucket i.
  static constexpr std::int64_t bucket_lower(std::uint32_t i) noexcept {
    if (i < exact_below) return i;
    return static_cast<std::int64_t>(static_cast<std::uint64_t>((i & 63u) + 64u) << ((i >> 6) - 1));
  }
  /// Largest value of bucket i (inclusive; INT64_MAX for the last bucket).
  static constexpr std::int64_t bucket_upper(std::uint32_t i) noexcept {
    if (i < exact_below) return i;
    const std::uint64_t w = std::uint64_t{1} << ((i >> 6) - 1);
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(bucket_lower(i)) + (w - 1));
  }
  /// The value bucket i reports: within 1/(2m+1) <= 1/129 relative of every value in it (see the top).
  static constexpr std::int64_t bucket_value(std::uint32_t i) noexcept {
    if (i < exact_below) return i;
    const std::uint64_t m = (i & 63u) + 64u;
    const std::uint64_t w = std::uint64_t{1} << ((i >> 6) - 1);
    return bucket_lower(i) + static_cast<std::int64_t>(w * m / (2 * m + 1));  // w*m < 2^63
  }

  /// Counts v n times. v < 0 is counted as 0 (and in negatives()). Allocates only when v lies outside the
  /// window; if that allocation fails the n values go to lost() instead.
  void record(std::int64_t v, std::uint64_t n = 1) noexcept {
    if (n == 0) return;
    if (v < 0) {
      negatives_ += n;
      v = 0;
    }
    const std::uint32_t i = bucket_index(v);
    const std::size_t off = static_cast<std::size_t>(i - lo_);  // wraps (huge) when i < lo_
    if (SCOPEPROF_LIKELY(off < counts_.size())) {
      counts_[off] += n;
    } else if (cover(i, i)) {
      counts_[i - lo_] += n;
    } else {
      lost_ += n;
      return;
    }
    note(v, v, n);
  }

  /// Adds every count of `o` (as if its values had been recorded here), and its lost() and negatives().
  void merge(const log_histogram& o) noexcept {
    const std::uint64_t total = o.total_, lost = o.lost_, negatives = o.negatives_;  // `o` may be *this
    lost_ += lost;
    negatives_ += negatives;
    if (total == 0) return;
    const std::uint32_t first = bucket_index(o.min_), last = bucket_index(o.max_);
    const bool inside = !counts_.empty() && first >= lo_ && last - lo_ < counts_.size();  // the usual case
    if (!inside && !cover(first, last)) {
      lost_ += total;
      return;
    }
    for (std::uint32_t i = first; i <= last; ++i) counts_[i - lo_] += o.counts_[i - o.lo_];
    note(o.min_, o.max_, total);
  }

  /// Values counted (not lost).
  std::uint64_t count() const noexcept { return total_; }
  /// Values dropped because the window could not grow (out of memory).
  std::uint64_t lost() const noexcept { return lost_; }
  /// Negative values seen (each counted as 0).
  std::uint64_t negatives() const noexcept { return negatives_; }
  /// Exact smallest and largest value counted (0 when empty).
  std::int64_t(min)() const noexcept { return total_ ? min_ : 0; }
  std::int64_t(max)() const noexcept { return total_ ? max_ : 0; }

  /// Nearest rank: the k-th smallest value, k = clamp(ceil(q * count()), 1, count()), so q = 0 gives the min
  /// and q = 1 the max (both exact). Otherwise the bucket_value() of its bucket clamped to [min(), max()]:
  /// within 1/129 of the true k-th value. 0 when empty. q outside [0, 1] (or NaN) is clamped (NaN as 0).
  std::int64_t quantile(double q) const noexcept {
    if (total_ == 0) return 0;
    const std::uint64_t k = rank(q, total_);
    if (k == 1) return min_;
    if (k == total_) return max_;
    const std::size_t first = bucket_index(min_) - lo_, last = bucket_index(max_) - lo_;
    std::uint64_t seen = 0;
    for (std::size_t j = first; j <= last; ++j) {
      seen += counts_[j];
      if (seen >= k) {
        const std::int64_t r = bucket_value(static_cast<std::uint32_t>(j + lo_));
        return r < min_ ? min_ : (r > max_ ? max_ : r);
      }
    }
    return max_;  // not reached: the counts between min and max add up to count()
  }

  /// The 1-based nearest rank quantile() uses for q over n >= 1 values.
  static std::uint64_t rank(double q, std::uint64_t n) noexcept {
    if (!(q > 0.0)) return 1;
    const double r = std::ceil(q * static_cast<double>(n));
    if (r <= 1.0) return 1;
    if (r >= static_cast<double>(n)) return n;
    return static_cast<std::uint64_t>(r);
  }

  /// Counters held (the window's width), empty or not.
  std::size_t bucket_count() const noexcept { return counts_.size(); }
  /// Bytes this histogram occupies: the object and its counter storage.
  std::size_t memory_bytes() const noexcept { return sizeof(*this) + counts_.capacity() * sizeof(std::uint64_t); }

  /// Forgets every value and counter; keeps the window, so refilling it does not allocate.
  void clear() noexcept {
    if (total_ != 0) {  // every non-zero counter lies between min's and max's buckets
      const auto first = counts_.begin() + (bucket_index(min_) - lo_), last = counts_.begin() + (bucket_index(max_) - lo_);
      std::fill(first, last + 1, std::uint64_t{0});
    }
    total_ = lost_ = negatives_ = 0;
    min_ = (std::numeric_limits<std::int64_t>::max)();
    max_ = 0;
  }

  /// Calls f(lower, upper, count) for each non-empty bucket in ascending order (bounds inclusive), e.g. to
  /// serialize: recording each `lower` `count` times rebuilds the same buckets.
  template <class F>
  void for_each_bucket(F&& f) const {
    for (std::size_t j = 0; j < counts_.size(); ++j) {
      if (counts_[j] == 0) continue;
      const auto i = static_cast<std::uint32_t>(j + lo_);
      f(bucket_lower(i), bucket_upper(i), counts_[j]);
    }
  }

 private:
  static constexpr int highest_bit(std::uint64_t u) noexcept {  // u != 0
#if defined(__GNUC__) || defined(__clang__)
    return 63 - __builtin_clzll(u);
#else
    int h = 0;
    for (int s = 32; s > 0; s >>= 1) {
      if (u >> s) {
        u >>= s;
        h += s;
      }
    }
    return h;
#endif
  }

  void note(std::int64_t lo, std::int64_t hi, std::uint64_t n) noexcept {
    total_ += n;
    if (lo < min_) min_ = lo;
    if (hi > max_) max_ = hi;
  }

  /// Grows the window to hold buckets [a, b] (a <= b), with growth_slack on each side it extends. False,
  /// with nothing changed, when the allocation fails.
  SCOPEPROF_NOINLINE bool cover(std::uint32_t a, std::uint32_t b) noexcept {
    const bool empty = counts_.empty();
    const std::uint32_t hi = empty ? 0 : lo_ + static_cast<std::uint32_t>(counts_.size()) - 1;
    std::uint32_t new_lo = empty ? a : (std::min)(a, lo_);
    std::uint32_t new_hi = empty ? b : (std::max)(b, hi);
    if (empty || new_lo < lo_) new_lo = new_lo > growth_slack ? new_lo - growth_slack : 0;
    if (empty || new_hi > hi) new_hi = (std::min)(new_hi + growth_slack, max_buckets - 1);
    if (!empty && new_lo == lo_ && new_hi == hi) return true;
    try {
      std::vector<std::uint64_t> next(std::size_t{new_hi} - new_lo + 1, 0);
      std::copy(counts_.begin(), counts_.end(), next.begin() + (empty ? 0 : lo_ - new_lo));
      counts_.swap(next);
      lo_ = new_lo;
      return true;
    } catch (...) {  // std::bad_alloc
      return false;
    }
  }

  std::vector<std::uint64_t> counts_;  // counts_[j]: bucket lo_ + j
  std::uint32_t lo_ = 0;
  std::uint64_t total_ = 0;
  std::uint64_t lost_ = 0;
  std::uint64_t negatives_ = 0;
  std::int64_t min_ = (std::numeric_limits<std::int64_t>::max)();
  std::int64_t max_ = 0;
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
