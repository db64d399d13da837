// scopeprof: what the Chrome trace writer needs besides the report: the time encoding that keeps nesting
// exact in binary floating point, the primitives that write events into the sink's memory (shared by
// format/chrome_trace.hpp and detail/trace_steps.hpp). Which process wrote it (rank, pid, wall clock of ts 0)
// is the report's process(): detail/process_identity.hpp.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

// ---- time: ts and dur in units of 1/1024 microsecond ----
//
// Viewers add ts and dur in doubles (speedscope, chrome://tracing, Perfetto's importer, pandas in HTA), and
// speedscope also subtracts the smallest ts first. A decimal such as 1234.567 has no exact double, so the
// sums round, and a child that ends in the same nanosecond as its parent can end after it. Multiples of
// 2^-10 microsecond are exact doubles (below 2^43 us, about 101 days), so every sum and difference of them
// is exact: nesting and order survive any such arithmetic. Each instant is written as
// units = ceil(ns * 1024 / 1000): strictly increasing in ns (1.024 units per ns), and
// floor(value * 1000) gives the nanosecond back exactly.

/// The trace value of `ns` nanoseconds, in 1/1024 microsecond: ceil(ns * 128 / 125), exact for any int64
/// whose result fits.
inline std::int64_t trace_units(std::int64_t ns) noexcept {
  std::int64_t q = ns / 125, r = ns % 125;
  if (r < 0) {
    r += 125;
    --q;
  }
  return q * 128 + (r * 128 + 124) / 125;
}

/// The nanosecond a trace value names: floor(units * 1000 / 1024) (the inverse of trace_units).
inline std::int64_t trace_units_to_ns(std::int64_t units) noexcept {
  std::int64_t q = units / 128, r = units % 128;
  if (r < 0) {
    r += 128;
    --q;
  }
  return q * 125 + (r * 125) / 128;
}

/// Longest text write_trace_units() writes: a sign, 17 digits, the point and ten decimals.
constexpr std::size_t max_trace_time_chars = 30;

/// `units` / 1024 in decimal, exact and as short as exact allows ("12", "12.5", "0.0009765625").
inline char* write_trace_units(char* p, std::int64_t units) noexcept {
  std::uint64_t a = static_cast<std::uint64_t>(units);
  if (units < 0) {
    *p++ = '-';
    a = static_cast<std::uint64_t>(-(units + 1)) + 1u;
  }
  p = std::to_chars(p, p + 20, a >> 10).ptr;
  std::uint64_t frac = (a & 1023u) * 9765625u;  // 2^-10 = 0.0009765625: ten decimals
  if (frac == 0) return p;
  *p = '.';
  char* q = p + 10;
  while (frac % 10u == 0) {  // trailing zeros are dropped
    frac /= 10u;
    --q;
  }
  char* end = q + 1;
  for (char* d = q; d > p; --d, frac /= 10u) *d = static_cast<char>('0' + frac % 10u);
  return end;
}

/// A time (ns from the trace's origin) as written in ts, or a duration as the difference of two such.
inline char* write_trace_time(char* p, std::int64_t ns) noexcept { return write_trace_units(p, trace_units(ns)); }
inline char* write_trace_dur(char* p, std::int64_t begin_ns, std::int64_t end_ns) noexcept {
  return write_trace_units(p, trace_units(end_ns) - trace_units(begin_ns));
}

// ---- writing events: straight into memory the sink reserved, no string per event ----

/// The literal's bytes at p (no terminating zero); returns the end.
template <std::size_t N>
inline char* trace_put(char* p, const char (&literal)[N]) noexcept {
  std::memcpy(p, literal, N - 1);
  return p + (N - 1);
}
inline char* trace_put(char* p, std::string_view s) noexcept {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}
inline char* trace_put_uint(char* p, std::uint64_t v) noexcept { return std::to_chars(p, p + 20, v).ptr; }
inline char* trace_put_int(char* p, std::int64_t v) noexcept { return std::to_chars(p, p + 21, v).ptr; }

/// `,\n{"ph":"X","cat":"<cat>","name":<name><track>,"ts":T,"dur":D` (name a JSON literal, track
/// `,"pid":P,"tid":T`, times in ns from the trace's origin); the caller writes the rest and the `}`.
inline char* write_trace_slice(char* p, std::string_view cat, std::string_view name, std::string_view track,
                               std::int64_t begin_ns, std::int64_t end_ns) noexcept {
  p = trace_put(p, ",\n{\"ph\":\"X\",\"cat\":\"");
  p = trace_put(p, cat);
  p = trace_put(p, "\",\"name\":");
  p = trace_put(p, name);
  p = trace_put(p, track);
  p = trace_put(p, ",\"ts\":");
  p = write_trace_time(p, begin_ns);
  p = trace_put(p, ",\"dur\":");
  return write_trace_dur(p, begin_ns, end_ns);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
