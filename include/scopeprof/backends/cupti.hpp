// scopeprof: CUPTI collector (SCOPEPROF_WITH_CUPTI=1): every kernel, memcpy and memset a scope launched,
// attributed to the innermost scope through CUPTI external correlation (kind CUSTOM2; Kineto uses CUSTOM0
// and CUSTOM1).
//
//   scopeprof::set_cupti(true);     // or SCOPEPROF_CUPTI=1; off by default: scopeprof never touches CUPTI
//   ... scopes launching kernels ...
//   auto r = scopeprof::collect();  // device busy and kernel counts per scope, kernel summary
//   scopeprof::set_cupti(false);    // release CUPTI, so a later torch profiler or Nsight run can have it
//
// libcupti is loaded at run time (dlopen: a copy already in the process first, e.g. the torch wheel's, then
// libcupti.so.13 and libcupti.so; SCOPEPROF_CUPTI_LIBRARY=PATH overrides), so only the CUPTI headers are
// needed to build. CUPTI allows one subscriber per process: scopeprof subscribes first, and if another tool
// holds CUPTI (Nsight Systems, Nsight Compute, compute-sanitizer, a torch profiler session) it collects
// nothing and every report says "withheld" with the cause. A probe (a 4-byte memset on a private stream,
// tagged with its own external id) at the start and at every collect() checks that records still arrive;
// when they stop (another collector re-registered CUPTI's process-wide buffers) the CUPTI data is marked
// invalid instead of giving partial sums.
//
// This header is what a scope sees: the switch read at every entry and three out-of-line calls taken only
// while the collector is on. The collector itself is in backends/cupti/ (state, buffers, session, collect).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/scope_hooks.hpp>

#include <atomic>
#include <cstdint>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Set by scopeprof::torch_profile once a torch profiler session with CUDA activity has started in this
/// process: Kineto keeps CUPTI from then on, which names the holder when the collector is withheld.
inline std::atomic<bool> g_kineto_cuda_started{false};

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI
/// Read at every scope entry (relaxed): non-zero while the collector is on.
inline std::atomic<std::uint8_t> g_cupti_on{0};

/// Push this scope's external id; returns it, or 0 when nothing was pushed.
SCOPEPROF_API std::uint64_t cupti_push(thread_buffer& b) noexcept;
/// Pop it again at scope exit (on the thread that pushed it).
SCOPEPROF_API void cupti_pop(std::uint64_t id) noexcept;
/// Remember which host record the external id belongs to (after the host record got its index).
SCOPEPROF_API void cupti_store(std::uint64_t id, std::uint64_t host_index) noexcept;

/// The CUPTI collector's scope hook (scope_hooks.hpp): inside the host time, around the CUDA event pair,
/// so the work the scope launches carries its external id. Off: one relaxed load and a branch.
struct cupti_hook {
  static constexpr hook_place place = hook_place::inside;
  std::uint64_t id = 0;  // 0: nothing pushed
  SCOPEPROF_ALWAYS_INLINE void enter(const hook_entry& e) noexcept {
    if (SCOPEPROF_UNLIKELY(g_cupti_on.load(std::memory_order_relaxed) != 0)) id = cupti_push(e.buffer);
  }
  SCOPEPROF_ALWAYS_INLINE void leave() noexcept {
    if (SCOPEPROF_UNLIKELY(id != 0)) cupti_pop(id);
  }
  SCOPEPROF_ALWAYS_INLINE void store(thread_buffer&, std::uint64_t host_index) noexcept {
    if (SCOPEPROF_UNLIKELY(id != 0)) cupti_store(id, host_index);
  }
};

#else
using cupti_hook = no_hook<3>;
#endif

}  // namespace detail

/// @brief Switch the CUPTI collector on or off at run time (builds with SCOPEPROF_WITH_CUPTI=1; a no-op
/// elsewhere). On: kernels, copies and memsets are attributed to the innermost scope that launched them.
/// Off: CUPTI is released (record kinds disabled, subscriber slot given back); what was collected stays in
/// the next reports. If CUPTI is held by another tool, nothing is collected and reports say "withheld".
///
///   scopeprof::set_cupti(true);  run();  auto r = scopeprof::collect();  scopeprof::set_cupti(false);
SCOPEPROF_API void set_cupti(bool on) noexcept;

/// @brief True while the CUPTI collector is collecting.
SCOPEPROF_API bool cupti_enabled() noexcept;

SCOPEPROF_NAMESPACE_END
