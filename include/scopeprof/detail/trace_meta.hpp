// scopeprof: what the Chrome trace writer needs besides the report: the time encoding that keeps nesting
// exact in binary floating point, the primitives that write events into the sink's memory (shared by
// format/chrome_trace.hpp and detail/trace_steps.hpp), the process's rank and world size from the
// environment, its process id, and the wall-clock time of ts 0.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>

#include <chrono>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#if defined(_WIN32)
#include <process.h>
#else
#include <unistd.h>
#endif

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

// ---- rank and world size ----

struct trace_rank {
  std::int64_t rank = 0;
  std::int64_t world_size = 1;
  std::string source;  // the variable the rank came from, empty when none was set
};

inline bool env_nonnegative(const char* name, std::int64_t& out) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return false;
  const char* end = v + std::strlen(v);
  std::int64_t x = 0;
  const auto r = std::from_chars(v, end, x);
  if (r.ec != std::errc() || r.ptr != end || x < 0) return false;
  out = x;
  return true;
}

/// The rank and world size of this process from the launcher's variables, the first set (and a
/// non-negative integer) of: RANK/WORLD_SIZE (torchrun, torch.distributed), OMPI_COMM_WORLD_RANK/SIZE
/// (Open MPI), PMI_RANK/PMI_SIZE (MPICH, Intel MPI), SLURM_PROCID/SLURM_NTASKS (Slurm). A world size that
/// is missing or not above the rank becomes rank + 1. None set: rank 0 of 1.
inline trace_rank trace_rank_from_env() {
  static constexpr const char* pairs[][2] = {{"RANK", "WORLD_SIZE"},
                                             {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                             {"PMI_RANK", "PMI_SIZE"},
                                             {"SLURM_PROCID", "SLURM_NTASKS"}};
  trace_rank r;
  for (const auto& p : pairs) {
    std::int64_t rank = 0, world = 0;
    if (!env_nonnegative(p[0], rank)) continue;
    r.rank = rank;
    r.world_size = env_nonnegative(p[1], world) && world > rank ? world : rank + 1;
    r.source = p[0];
    break;
  }
  return r;
}

// ---- process and wall clock ----

inline std::int64_t trace_process_id() noexcept {
#if defined(_WIN32)
  return static_cast<std::int64_t>(::_getpid());
#else
  return static_cast<std::int64_t>(::getpid());
#endif
}

/// Unix time (ns) of the steady-clock instant `origin_ns`, from one pairing of the two clocks per process
/// (so every trace of a report says the same). False when it does not fit.
inline bool trace_base_unix_ns(std::int64_t origin_ns, std::int64_t& out) noexcept {
  static const std::int64_t unix_minus_steady = [] {
    const std::int64_t steady = steady_now_ns();
    const std::int64_t unix_ns = static_cast<std::int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
    return unix_ns - steady;
  }();
  if ((unix_minus_steady > 0 && origin_ns > INT64_MAX - unix_minus_steady) ||
      (unix_minus_steady < 0 && origin_ns < INT64_MIN - unix_minus_steady))
    return false;
  out = origin_ns + unix_minus_steady;
  return true;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
