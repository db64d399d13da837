// scopeprof: the host clock. Scopes read a raw tick counter (the invariant TSC on x86-64, the virtual
// counter on AArch64, steady_clock elsewhere); ticks become nanoseconds only at collect time, from a
// calibration of the counter against std::chrono::steady_clock over the whole run.
#pragma once

#include <scopeprof/config.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64)
#define SCOPEPROF_ARCH_X86_64 1
#if defined(_MSC_VER)
#include <intrin.h>
#define SCOPEPROF_DETAIL_RDTSC() __rdtsc()
#else
#include <cpuid.h>
// The compiler's builtin, not <x86intrin.h>: that header costs more to parse than the rest of the hot path.
#define SCOPEPROF_DETAIL_RDTSC() __builtin_ia32_rdtsc()
#endif
#elif defined(__aarch64__)
#define SCOPEPROF_ARCH_AARCH64 1
#endif

SCOPEPROF_NAMESPACE_BEGIN

/// @brief Which counter stamps host time. Chosen once, at start-up (SCOPEPROF_CLOCK=auto|tsc|steady).
enum class clock_kind : std::uint8_t {
  steady = 0,   ///< std::chrono::steady_clock, ticks are nanoseconds
  tsc = 1,      ///< x86-64 invariant time-stamp counter (rdtsc)
  cntvct = 2,   ///< AArch64 virtual counter (cntvct_el0)
};

inline const char* to_string(clock_kind k) noexcept {
  switch (k) {
    case clock_kind::tsc: return "invariant TSC (rdtsc)";
    case clock_kind::cntvct: return "AArch64 virtual counter (cntvct_el0)";
    default: return "std::chrono::steady_clock";
  }
}

namespace detail {

inline std::int64_t steady_now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// True when the CPU promises a constant-rate TSC that keeps counting in deep sleep states.
inline bool cpu_has_invariant_tsc() noexcept {
#if defined(SCOPEPROF_ARCH_X86_64) && defined(_MSC_VER)
  int regs[4] = {};  // eax, ebx, ecx, edx
  __cpuid(regs, static_cast<int>(0x80000000u));
  if (static_cast<unsigned>(regs[0]) < 0x80000007u) return false;
  __cpuid(regs, static_cast<int>(0x80000007u));
  return (static_cast<unsigned>(regs[3]) & (1u << 8)) != 0;
#elif defined(SCOPEPROF_ARCH_X86_64)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  if (!__get_cpuid(0x80000007u, &a, &b, &c, &d)) return false;
  return (d & (1u << 8)) != 0;
#else
  return false;
#endif
}

inline bool clock_kind_available(clock_kind k) noexcept {
  switch (k) {
    case clock_kind::steady: return true;
    case clock_kind::tsc: return cpu_has_invariant_tsc();
#if defined(SCOPEPROF_ARCH_AARCH64)
    case clock_kind::cntvct: return true;
#endif
    default: return false;
  }
}

inline clock_kind best_clock_kind() noexcept {
#if defined(SCOPEPROF_ARCH_X86_64)
  if (cpu_has_invariant_tsc()) return clock_kind::tsc;
#elif defined(SCOPEPROF_ARCH_AARCH64)
  return clock_kind::cntvct;
#endif
  return clock_kind::steady;
}

// Read on every scope boundary: a plain byte, written once before the first scope.
inline clock_kind g_clock_kind = clock_kind::steady;

SCOPEPROF_ALWAYS_INLINE std::uint64_t read_ticks() noexcept {
#if defined(SCOPEPROF_ARCH_X86_64)
  if (SCOPEPROF_LIKELY(g_clock_kind == clock_kind::tsc)) return SCOPEPROF_DETAIL_RDTSC();
#elif defined(SCOPEPROF_ARCH_AARCH64)
  if (SCOPEPROF_LIKELY(g_clock_kind == clock_kind::cntvct)) {
    // isb: the counter read is not speculated ahead of the code before it (the scope's begin would
    // otherwise be read early and its end late by whatever the pipeline reorders).
    std::uint64_t v;
    asm volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
  }
#endif
  return static_cast<std::uint64_t>(steady_now_ns());
}

/// A (ticks, steady ns) pair read as close together as the machine allows: the steady reading is the
/// midpoint of two reads around the tick read, keeping the tightest of a few tries.
struct clock_anchor {
  std::uint64_t ticks = 0;
  std::int64_t ns = 0;
};

inline clock_anchor read_anchor() noexcept {
  clock_anchor best{};
  std::int64_t best_width = INT64_MAX;
  for (int i = 0; i < 7; ++i) {
    const std::int64_t a = steady_now_ns();
    const std::uint64_t t = read_ticks();
    const std::int64_t b = steady_now_ns();
    if (b - a < best_width) {
      best_width = b - a;
      best.ticks = t;
      best.ns = a + (b - a) / 2;
    }
  }
  return best;
}

}  // namespace detail

/// @brief Converts raw ticks into steady_clock nanoseconds, from two anchors taken far apart.
///
/// The conversion is linear through the start anchor: ns = start.ns + (ticks - start.ticks) * ns_per_tick.
struct tick_converter {
  clock_kind kind = clock_kind::steady;
  detail::clock_anchor start{};
  double ns_per_tick = 1.0;

  std::int64_t to_ns(std::uint64_t ticks) const noexcept {
    if (kind == clock_kind::steady) return static_cast<std::int64_t>(ticks);
    const double d = static_cast<double>(static_cast<std::int64_t>(ticks - start.ticks)) * ns_per_tick;
    return start.ns + static_cast<std::int64_t>(d >= 0 ? d + 0.5 : d - 0.5);
  }

  /// Build from a start anchor and an end anchor (the end is read now when omitted).
  static tick_converter between(clock_kind kind, detail::clock_anchor start, detail::clock_anchor end) noexcept {
    tick_converter c;
    c.kind = kind;
    c.start = start;
    if (kind != clock_kind::steady && end.ticks > start.ticks && end.ns > start.ns)
      c.ns_per_tick = static_cast<double>(end.ns - start.ns) / static_cast<double>(end.ticks - start.ticks);
    return c;
  }
};

SCOPEPROF_NAMESPACE_END
