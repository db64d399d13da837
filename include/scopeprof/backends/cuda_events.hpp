// scopeprof: device time per scope from CUDA events (SCOPEPROF_WITH_CUDA=1), what the scope sees.
//
// A timed scope records one event when it begins and one when it ends, on its stream. Nothing waits on
// the hot path: collect() resolves the pairs later, in bulk (cuda_resolve.hpp). The entry points below are
// defined in impl/cuda_events.hpp (compiled once, or inline in header-only builds); the state they work
// on (devices, pools, caches) lives in cuda_device.hpp, which the scope never sees.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/scope_hooks.hpp>

#include <atomic>
#include <cstdint>

#if SCOPEPROF_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

enum : std::uint8_t { device_timing_uninitialised = 0, device_timing_on = 1, device_timing_off = 2 };
/// Read at every scope entry in CUDA builds (relaxed).
inline std::atomic<std::uint8_t> g_device_timing{device_timing_uninitialised};

#if SCOPEPROF_WITH_CUDA

/// What a timed scope holds between its two boundaries.
struct device_scope {
  cudaEvent_t begin = nullptr;  // null: this instance is not device-timed
  cudaEvent_t end = nullptr;    // taken with the begin event, recorded at the end
  cudaStream_t stream = nullptr;
  unsigned long long capture_id = 0;  // non-zero: recorded into a graph being captured
  int device = -1;
  std::uint32_t generation = 0;  // the reference event current when the scope began
};

/// Is there a usable device at all? Once per process, before the first device-timed scope reads its begin
/// time. No driver or no GPU: off, with the reason in every report.
SCOPEPROF_API void probe_devices() noexcept;
/// Scope entry, after the host begin time: decide (sampling), take both events, record the begin event.
/// May move begin_ticks later (past one-time set-up). Never waits.
SCOPEPROF_API void device_begin(device_scope& s, site_info& site, cudaStream_t stream,
                                      std::uint64_t& begin_ticks) noexcept;
/// Scope exit, before the host end time is read: record the end event. Returns it (null on failure).
SCOPEPROF_API cudaEvent_t device_end(device_scope& s) noexcept;
/// After the host record is stored: keep the event pair for collect().
SCOPEPROF_API void device_store(thread_buffer& b, const device_scope& s, cudaEvent_t end_event,
                                      std::uint64_t host_index) noexcept;

/// The CUDA-event backend's scope hook (scope_hooks.hpp): inside the host time, so the device span starts
/// inside the host scope that launched it. A scope with no stream named is timed on the stream
/// default_stream_policy() picks.
struct device_hook {
  static constexpr hook_place place = hook_place::inside;
  device_scope s;
  SCOPEPROF_ALWAYS_INLINE void enter(const hook_entry& e) noexcept {
    if (g_device_timing.load(std::memory_order_relaxed) != device_timing_off)
      device_begin(s, e.site, e.stream, e.begin_ticks);
  }
  SCOPEPROF_ALWAYS_INLINE void leave() noexcept {
    if (s.begin != nullptr && device_end(s) == nullptr) s.begin = nullptr;  // failed: nothing to store
  }
  SCOPEPROF_ALWAYS_INLINE void store(thread_buffer& b, std::uint64_t host_index) noexcept {
    if (s.begin != nullptr) device_store(b, s, s.end, host_index);
  }
};

#else
using device_hook = no_hook<2>;
#endif  // SCOPEPROF_WITH_CUDA

}  // namespace detail

/// @brief Switch device timing on or off for every scope (CUDA builds; a no-op otherwise).
SCOPEPROF_API void set_device_timing(bool on) noexcept;

SCOPEPROF_NAMESPACE_END
