// scopeprof: the CUDA-event backend's entry points (SCOPEPROF_WITH_CUDA=1): the probe for a usable GPU
// and the scope's three boundaries. Both events are taken from the thread's cache when the scope begins,
// so any one-time set-up (a device's first use, creating events) happens before the scope's begin time is
// re-read and is charged to no scope but the ones around it. Streams that are being captured into a CUDA
// graph get external event-record nodes (cudaEventRecordExternal); their events are never queried while
// the capture is open and never reused, because every replay of the graph records them again.
//
// Errors never reach the program: a failing CUDA call switches device timing off for that device, the
// reason goes into the report header, and the program's own pending error is left as it was.
#pragma once

#include <scopeprof/backends/cuda_device.hpp>
#include <scopeprof/backends/cuda_driver.hpp>
#include <scopeprof/backends/cuda_events.hpp>
#include <scopeprof/backends/cuda_resolve.hpp>
#include <scopeprof/backends/torch.hpp>
#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

SCOPEPROF_DETAIL_COLD_BEGIN
SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

#if SCOPEPROF_WITH_CUDA

/// Is there a usable device at all? Once per process, before the first device-timed scope reads its begin
/// time. No driver or no GPU: off, with the reason in every report.
SCOPEPROF_NOINLINE SCOPEPROF_API void probe_devices() noexcept {
  device_registry& d = the_devices();
  try {
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.probed) return;
    d.probed = true;
    setup_timer timed;
    const cudaError_t pending = cudaPeekAtLastError();
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    rearm_exit_report();  // the runtime may have registered its own teardown just now
    if (e != cudaSuccess || n <= 0) {
      forget_our_error(pending);
      d.off_reason = e != cudaSuccess ? "n/a (no usable CUDA device: " + cuda_error_text(e) + ")" : "n/a (no CUDA device)";
      g_device_timing.store(device_timing_off, std::memory_order_release);
      return;
    }
    load_driver_calls();
    forget_our_error(pending);
    d.count = n;
    for (int i = 0; i < n; ++i) {
      d.devices.push_back(std::make_unique<device_context>());
      d.devices.back()->ordinal = i;
    }
    g_thread_attach_hook.store(&device_thread_attach, std::memory_order_release);
    g_thread_exit_hook.store(&device_thread_exit, std::memory_order_release);
    g_device_drain.store(&cuda_drain_hooks, std::memory_order_release);
    g_device_timing.store(device_timing_on, std::memory_order_release);
  } catch (...) {
    g_device_timing.store(device_timing_off, std::memory_order_release);
  }
}

/// The stream a scope without one is timed on: torch's current stream on `device` in builds with
/// LibTorch's CUDA part, else the default stream of the scope's own translation unit (legacy, or
/// per-thread when that TU is built with --default-stream per-thread).
SCOPEPROF_ALWAYS_INLINE cudaStream_t default_stream_policy(cudaStream_t stream, int device, bool per_thread) noexcept {
  if (stream != nullptr) return stream;
#if SCOPEPROF_TORCH_CUDA
  if (cudaStream_t t = torch_current_stream(device)) return t;
#else
  (void)device;
#endif
  return per_thread ? cudaStreamPerThread : nullptr;
}

inline void note_skipped() noexcept { the_devices().skipped.fetch_add(1, std::memory_order_relaxed); }

/// One-time set-up just ran inside the scope being entered: its begin time is read again, after the
/// set-up, and time the scopes around it carry is counted for the report header.
SCOPEPROF_NOINLINE inline std::uint64_t begin_after_setup(std::uint64_t begin_ticks) noexcept {
  const std::uint64_t now = read_ticks();
  const thread_buffer* b = t_buffer;
  if (b != nullptr && b->depth.load(std::memory_order_relaxed) > 1)
    the_devices().setup_in_scopes_ticks.fetch_add(now - begin_ticks, std::memory_order_relaxed);
  return now;
}

/// Scope entry, after the host begin time: decide (sampling), take both events, record the begin event.
/// Never waits. Steady state: three driver calls (current context, capture status, event record).
SCOPEPROF_NOINLINE SCOPEPROF_API void device_begin(device_scope& s, site_info& site, cudaStream_t stream,
                                                   std::uint64_t& begin_ticks) noexcept {
  bool setup = false;
  if (SCOPEPROF_UNLIKELY(g_device_timing.load(std::memory_order_acquire) == device_timing_uninitialised)) {
    probe_devices();
    setup = true;
  }
  if (g_device_timing.load(std::memory_order_relaxed) != device_timing_on) return;
  const std::uint32_t every = site.device_every.load(std::memory_order_relaxed);
  if (every == 0) return;
  if (every > 1 && site.device_entries.fetch_add(1, std::memory_order_relaxed) % every != 0) return;
  boundary_calls calls;
  int device = -1;
  if (!calls.device(device)) return note_skipped();
  device_context* ctx = context_for(device, setup);
  if (ctx == nullptr) return note_skipped();
  stream = default_stream_policy(stream, device, site.per_thread_stream);
  unsigned long long capture_id = 0;
  if (!calls.capture_state(stream, capture_id)) return note_skipped();
  // Inside a capture, events no scope has recorded before (backends/cuda_device.hpp: fresh_event).
  const bool captured = capture_id != 0;
  cudaEvent_t begin = captured ? fresh_event(*ctx, setup) : take_event(*ctx, setup);
  cudaEvent_t end = begin == nullptr ? nullptr : captured ? fresh_event(*ctx, setup) : take_event(*ctx, setup);
  if (end == nullptr) {
    if (begin != nullptr) give_back_event(begin, device);
    return note_skipped();
  }
  if (SCOPEPROF_UNLIKELY(setup)) begin_ticks = begin_after_setup(begin_ticks);
  const int code = calls.record(begin, stream, capture_id != 0);
  if (code != 0) {
    give_back_event(begin, device);
    give_back_event(end, device);
    // CUresult and cudaError_t share their codes for these errors.
    if (!local_error(code)) fail_device(*ctx, "cuEventRecord", static_cast<cudaError_t>(code));
    return note_skipped();
  }
  s.begin = begin;
  s.end = end;
  s.stream = stream;
  s.capture_id = capture_id;
  s.device = device;
  s.generation = ctx->current_generation.load(std::memory_order_acquire);
}

/// Scope exit, before the host end time is read: record the end event. Returns it (null on failure).
SCOPEPROF_NOINLINE SCOPEPROF_API cudaEvent_t device_end(device_scope& s) noexcept {
  device_context& ctx = *the_devices().devices[static_cast<std::size_t>(s.device)];
  int code = -1;
  if (!ctx.failed.load(std::memory_order_relaxed)) {
    boundary_calls calls = boundary_calls::for_end();
    code = calls.record(s.end, s.stream, s.capture_id != 0);
    if (code != 0 && !local_error(code)) fail_device(ctx, "cuEventRecord", static_cast<cudaError_t>(code));
  }
  if (code == 0) return s.end;
  give_back_event(s.end, s.device);
  if (s.capture_id == 0) give_back_event(s.begin, s.device);  // (a captured one may still be recorded by replays)
  note_skipped();
  return nullptr;
}

/// After the host record is stored: keep the event pair for collect().
SCOPEPROF_NOINLINE SCOPEPROF_API void device_store(thread_buffer& b, const device_scope& s, cudaEvent_t end_event,
                                                   std::uint64_t host_index) noexcept {
  device_record* slot = device_slot(b);
  if (slot == nullptr) {
    if (s.capture_id == 0) {
      give_back_event(s.begin, s.device);
      give_back_event(end_event, s.device);
    }
    the_registry().device_records_skipped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  slot->host_index = host_index;
  slot->begin_event = s.begin;
  slot->end_event = end_event;
  slot->stream = s.stream;
  slot->capture_id = s.capture_id;
  slot->device = s.device;
  slot->reference = s.generation;
  slot->state = dev_pending;
  device_commit(b);
}

#endif  // SCOPEPROF_WITH_CUDA

}  // namespace detail

/// @brief Switch device timing on or off for every scope (CUDA builds; a no-op otherwise).
SCOPEPROF_API void set_device_timing(bool on) noexcept {
#if SCOPEPROF_WITH_CUDA
  if (!on) {
    detail::g_device_timing.store(detail::device_timing_off, std::memory_order_release);
    return;
  }
  detail::device_registry& d = detail::the_devices();
  std::lock_guard<std::mutex> lock(d.mu);
  if (d.off_reason.empty())
    detail::g_device_timing.store(d.probed ? detail::device_timing_on : detail::device_timing_uninitialised,
                                  std::memory_order_release);
#else
  (void)on;
#endif
}

SCOPEPROF_NAMESPACE_END
SCOPEPROF_DETAIL_COLD_END
