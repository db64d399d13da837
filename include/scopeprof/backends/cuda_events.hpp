// scopeprof: device time per scope from CUDA events (SCOPEPROF_WITH_CUDA=1).
//
// A timed scope records one event when it begins and one when it ends, on its stream. Nothing waits on
// the hot path: collect() resolves the pairs later, in bulk, and places them on the host timeline through
// a per-device reference event. Events come from per-device pools, refilled in chunks and recycled by
// collect(), so a steady state creates none. Streams that are being captured into a CUDA graph get
// external event-record nodes (cudaEventRecordExternal); their events are never queried while the
// capture is open and never reused, because every replay of the graph records them again.
//
// Errors never reach the program: a failing CUDA call switches device timing off for that device, the
// reason goes into the report header, and the program's own pending error (cudaPeekAtLastError) is left
// as it would have been without scopeprof.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/recorder.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#if SCOPEPROF_WITH_CUDA
#include <cuda_runtime_api.h>
#endif

namespace scopeprof {
namespace detail {

enum : std::uint8_t { device_timing_uninitialised = 0, device_timing_on = 1, device_timing_off = 2 };
/// Read at every scope entry in CUDA builds (relaxed).
inline std::atomic<std::uint8_t> g_device_timing{device_timing_uninitialised};

#if SCOPEPROF_WITH_CUDA

/// Per CUDA device: reference event, private stream, event pool, failure state.
struct device_context {
  std::mutex mu;
  int ordinal = 0;
  std::atomic<bool> ready{false};
  bool failed = false;  // a CUDA error made this device's events unusable
  std::string failure;
  cudaStream_t private_stream = nullptr;
  // Reference events, each recorded on the otherwise empty private stream with the host time at which it
  // was seen complete. collect() adds one, and new scopes place their begin event against the newest, so
  // offsets stay short (cudaEventElapsedTime is a float in ms: precision falls as offsets grow).
  std::vector<std::pair<cudaEvent_t, std::int64_t>> references;
  std::atomic<std::uint32_t> current_reference{0};
  std::vector<cudaEvent_t> free_events;
  std::uint64_t events_created = 0;
  std::uint64_t scopes_timed = 0;  // resolved spans, for the report header
};

struct device_registry {
  std::mutex mu;
  bool probed = false;
  int count = 0;
  std::string off_reason;  // why device timing is off, when it is
  std::vector<std::unique_ptr<device_context>> devices;
  std::atomic<std::uint64_t> skipped{0};  // scopes that wanted device time but did not get it
  std::uint64_t pending = 0;              // unresolved at the last collect (still running on the GPU)
  std::uint64_t wait_ms = 5000;           // longest collect() waits for a stream's newest event
};

inline device_registry& the_devices() {
  static device_registry* d = new device_registry();
  return *d;
}

constexpr std::uint32_t event_cache_size = 32;
struct thread_event_cache {
  int device = -1;
  std::uint32_t count = 0;
  cudaEvent_t events[event_cache_size] = {};
};
inline thread_local thread_event_cache t_event_cache;

/// Keep the program's view of cudaGetLastError as it would be without us: clear an error we caused,
/// unless the program already had one pending.
inline void forget_our_error(cudaError_t pending_before) noexcept {
  if (pending_before == cudaSuccess) (void)cudaGetLastError();
}

inline std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

inline void fail_device(device_context& ctx, const std::string& what, cudaError_t e) noexcept {
  try {
    std::lock_guard<std::mutex> lock(ctx.mu);
    if (!ctx.failed) {
      ctx.failed = true;
      ctx.failure = what + ": " + cuda_error_text(e);
      warn("device timing stopped on GPU " + std::to_string(ctx.ordinal) + ": " + ctx.failure);
    }
  } catch (...) {
  }
}

/// First device-timed scope of the process: is there a device at all? (No driver, no GPU: off, said once.)
SCOPEPROF_NOINLINE inline void probe_devices() noexcept {
  device_registry& d = the_devices();
  try {
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.probed) return;
    d.probed = true;
    const cudaError_t pending = cudaPeekAtLastError();
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n <= 0) {
      forget_our_error(pending);
      d.off_reason = e != cudaSuccess ? "n/a (no usable CUDA device: " + cuda_error_text(e) + ")" : "n/a (no CUDA device)";
      g_device_timing.store(device_timing_off, std::memory_order_release);
      return;
    }
    d.count = n;
    for (int i = 0; i < n; ++i) {
      d.devices.push_back(std::make_unique<device_context>());
      d.devices.back()->ordinal = i;
    }
    g_device_timing.store(device_timing_on, std::memory_order_release);
  } catch (...) {
    g_device_timing.store(device_timing_off, std::memory_order_release);
  }
}

/// First use of a device: private stream, reference event and its host time. The reference event is
/// recorded on an empty non-blocking stream, so it completes at once and waits for none of the program's
/// work; its host time is taken when completion is seen, an upper bound, so a mapped device interval
/// is never placed before the host scope that launched it.
/// Record a reference event on the private stream and wait (briefly: the stream is empty) to see it done.
inline cudaError_t add_reference(device_context& ctx) noexcept {
  cudaEvent_t ev = nullptr;
  cudaError_t e = cudaEventCreate(&ev);
  if (e == cudaSuccess) e = cudaEventRecord(ev, ctx.private_stream);
  if (e == cudaSuccess) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while ((e = cudaEventQuery(ev)) == cudaErrorNotReady && std::chrono::steady_clock::now() < deadline) {
    }
  }
  if (e != cudaSuccess) {
    if (ev != nullptr) cudaEventDestroy(ev);
    return e;
  }
  try {
    ctx.references.emplace_back(ev, steady_now_ns());
  } catch (...) {
    cudaEventDestroy(ev);
    return cudaErrorMemoryAllocation;
  }
  ctx.current_reference.store(static_cast<std::uint32_t>(ctx.references.size() - 1), std::memory_order_release);
  return cudaSuccess;
}

/// First use of a device: private stream and first reference event. The reference completes at once
/// and waits for none of the program's work (non-blocking, empty stream); its host time is taken when
/// completion is seen, an upper bound, so a mapped device interval never starts before the host scope
/// that launched it.
SCOPEPROF_NOINLINE inline bool prepare_device(device_context& ctx) noexcept {
  std::lock_guard<std::mutex> lock(ctx.mu);
  if (ctx.ready.load(std::memory_order_acquire) || ctx.failed) return ctx.ready.load(std::memory_order_relaxed);
  const cudaError_t pending = cudaPeekAtLastError();
  cudaError_t e = cudaStreamCreateWithFlags(&ctx.private_stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = add_reference(ctx);
  if (e != cudaSuccess) {
    forget_our_error(pending);
    ctx.failed = true;
    try {
      ctx.failure = "could not set up device timing: " + cuda_error_text(e);
    } catch (...) {
    }
    return false;
  }
  ctx.ready.store(true, std::memory_order_release);
  return true;
}

inline device_context* context_for(int device) noexcept {
  device_registry& d = the_devices();
  if (device < 0 || device >= d.count) return nullptr;
  device_context* ctx = d.devices[static_cast<std::size_t>(device)].get();
  if (SCOPEPROF_UNLIKELY(!ctx->ready.load(std::memory_order_acquire)) && !prepare_device(*ctx)) return nullptr;
  return ctx->failed ? nullptr : ctx;
}

/// Return the calling thread's cached events to their device pool.
inline void flush_event_cache(thread_event_cache& cache) noexcept {
  if (cache.count == 0 || cache.device < 0) return;
  device_context* ctx = the_devices().devices[static_cast<std::size_t>(cache.device)].get();
  try {
    std::lock_guard<std::mutex> lock(ctx->mu);
    ctx->free_events.insert(ctx->free_events.end(), cache.events, cache.events + cache.count);
  } catch (...) {
  }
  cache.count = 0;
}

/// Refill the thread's event cache from the device pool, creating a chunk of events when it is empty.
SCOPEPROF_NOINLINE inline bool refill_event_cache(thread_event_cache& cache, device_context& ctx) noexcept {
  if (cache.device != ctx.ordinal) {
    flush_event_cache(cache);
    cache.device = ctx.ordinal;
  }
  try {
    std::lock_guard<std::mutex> lock(ctx.mu);
    while (cache.count < event_cache_size && !ctx.free_events.empty()) {
      cache.events[cache.count++] = ctx.free_events.back();
      ctx.free_events.pop_back();
    }
    if (cache.count > 0) return true;
    const cudaError_t pending = cudaPeekAtLastError();
    for (std::uint32_t i = 0; i < event_cache_size; ++i) {
      cudaEvent_t ev = nullptr;
      const cudaError_t e = cudaEventCreate(&ev);
      if (e != cudaSuccess) {
        forget_our_error(pending);
        break;
      }
      cache.events[cache.count++] = ev;
      ++ctx.events_created;
    }
  } catch (...) {
  }
  return cache.count > 0;
}

inline cudaEvent_t take_event(device_context& ctx) noexcept {
  thread_event_cache& cache = t_event_cache;
  if (SCOPEPROF_UNLIKELY(cache.device != ctx.ordinal || cache.count == 0) && !refill_event_cache(cache, ctx))
    return nullptr;
  return cache.events[--cache.count];
}

inline void give_back_event(cudaEvent_t ev, int device) noexcept {
  thread_event_cache& cache = t_event_cache;
  if (cache.device == device && cache.count < event_cache_size) cache.events[cache.count++] = ev;
  else {
    device_context* ctx = the_devices().devices[static_cast<std::size_t>(device)].get();
    try {
      std::lock_guard<std::mutex> lock(ctx->mu);
      ctx->free_events.push_back(ev);
    } catch (...) {
    }
  }
}

/// What a timed scope holds between its two boundaries.
struct device_scope {
  cudaEvent_t begin = nullptr;  // null: this instance is not device-timed
  cudaStream_t stream = nullptr;
  unsigned long long capture_id = 0;
  int device = -1;
  std::uint32_t reference = 0;
};

inline cudaError_t record_event(cudaEvent_t ev, cudaStream_t stream, bool captured) noexcept {
  return captured ? cudaEventRecordWithFlags(ev, stream, cudaEventRecordExternal) : cudaEventRecord(ev, stream);
}

/// Scope entry: decide (sampling) and record the begin event. Never waits.
SCOPEPROF_NOINLINE inline void device_begin(device_scope& s, site_info& site, cudaStream_t stream) noexcept {
  if (SCOPEPROF_UNLIKELY(g_device_timing.load(std::memory_order_acquire) == device_timing_uninitialised)) probe_devices();
  if (g_device_timing.load(std::memory_order_relaxed) != device_timing_on) return;
  const std::uint32_t every = site.device_every.load(std::memory_order_relaxed);
  if (every == 0) return;
  if (every > 1 && site.device_entries.fetch_add(1, std::memory_order_relaxed) % every != 0) return;
  const cudaError_t pending = cudaPeekAtLastError();
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    forget_our_error(pending);
    the_devices().skipped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  device_context* ctx = context_for(device);
  if (ctx == nullptr) {
    the_devices().skipped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long capture_id = 0;
  cudaError_t e = cudaStreamGetCaptureInfo(stream, &status, &capture_id);
  if (e != cudaSuccess || status == cudaStreamCaptureStatusInvalidated) {
    if (e != cudaSuccess) forget_our_error(pending);
    the_devices().skipped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const bool captured = status == cudaStreamCaptureStatusActive;
  cudaEvent_t ev = take_event(*ctx);
  if (ev == nullptr) {
    the_devices().skipped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  e = record_event(ev, stream, captured);
  if (e != cudaSuccess) {
    forget_our_error(pending);
    give_back_event(ev, device);
    if (e != cudaErrorInvalidResourceHandle && e != cudaErrorInvalidValue) fail_device(*ctx, "cudaEventRecord", e);
    the_devices().skipped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  s.begin = ev;
  s.stream = stream;
  s.device = device;
  s.reference = ctx->current_reference.load(std::memory_order_acquire);
  s.capture_id = captured ? capture_id : 0;
}

/// Scope exit, before the host end time is read: record the end event. Returns it (null on failure).
SCOPEPROF_NOINLINE inline cudaEvent_t device_end(device_scope& s) noexcept {
  device_context* ctx = the_devices().devices[static_cast<std::size_t>(s.device)].get();
  cudaEvent_t ev = ctx->failed ? nullptr : take_event(*ctx);
  if (ev != nullptr) {
    const cudaError_t pending = cudaPeekAtLastError();
    const cudaError_t e = record_event(ev, s.stream, s.capture_id != 0);
    if (e != cudaSuccess) {
      forget_our_error(pending);
      give_back_event(ev, s.device);
      ev = nullptr;
      if (e != cudaErrorInvalidResourceHandle) fail_device(*ctx, "cudaEventRecord", e);
    }
  }
  if (ev == nullptr) {
    if (s.capture_id == 0) give_back_event(s.begin, s.device);  // (a captured one may still be recorded by replays)
    the_devices().skipped.fetch_add(1, std::memory_order_relaxed);
  }
  return ev;
}

/// After the host record is stored: keep the event pair for collect().
SCOPEPROF_NOINLINE inline void device_store(thread_buffer& b, const device_scope& s, cudaEvent_t end_event,
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
  slot->reference = s.reference;
  slot->state = dev_pending;
  device_commit(b);
}

/// collect(): resolve every pending record it is given. Waits at most wait_ms per (device, stream) for
/// the newest event; never touches an event whose capture is still open; recycles resolved events.
inline void resolve_device_records(std::vector<device_record*>& records) noexcept {
  device_registry& d = the_devices();
  if (records.empty() || d.count == 0) return;
  const cudaError_t pending = cudaPeekAtLastError();
  int saved_device = 0;
  const bool have_saved_device = cudaGetDevice(&saved_device) == cudaSuccess;
  // Relaxed capture mode for this thread: our queries must not disturb a capture running elsewhere.
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  const bool mode_swapped = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
  try {
    // Newest non-captured record per (device, stream): once it is done, the stream's earlier ones are too.
    std::map<std::pair<int, void*>, device_record*> newest;
    for (device_record* r : records)
      if (r->capture_id == 0 && r->end_event != nullptr && r->state == dev_pending) newest[{r->device, r->stream}] = r;
    for (auto& [key, r] : newest) {
      device_context* ctx = d.devices[static_cast<std::size_t>(key.first)].get();
      if (!ctx->ready.load(std::memory_order_acquire) || ctx->failed) continue;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(d.wait_ms);
      cudaError_t e;
      while ((e = cudaEventQuery(static_cast<cudaEvent_t>(r->end_event))) == cudaErrorNotReady &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(50));
      if (e != cudaSuccess && e != cudaErrorNotReady) fail_device(*ctx, "cudaEventQuery", e);
    }
    d.pending = 0;
    for (device_record* r : records) {
      if (r->state != dev_pending && r->state != dev_captured) continue;
      device_context* ctx = d.devices[static_cast<std::size_t>(r->device)].get();
      if (ctx->failed || !ctx->ready.load(std::memory_order_acquire) || r->reference >= ctx->references.size()) {
        r->state = dev_invalid;
        continue;
      }
      if (r->capture_id != 0) {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        unsigned long long id = 0;
        const cudaError_t ce = cudaStreamGetCaptureInfo(static_cast<cudaStream_t>(r->stream), &status, &id);
        if (ce == cudaSuccess && status != cudaStreamCaptureStatusNone && id == r->capture_id) {
          r->state = dev_captured;  // still being captured: not even a query
          continue;
        }
      }
      float span_ms = 0, offset_ms = 0;
      cudaError_t e = cudaEventElapsedTime(&span_ms, static_cast<cudaEvent_t>(r->begin_event),
                                           static_cast<cudaEvent_t>(r->end_event));
      if (e == cudaSuccess)
        e = cudaEventElapsedTime(&offset_ms, ctx->references[r->reference].first,
                                 static_cast<cudaEvent_t>(r->begin_event));
      if (e == cudaErrorNotReady) {
        // Not run yet: a captured graph not replayed, or work still queued behind something slow.
        if (r->capture_id != 0) r->state = dev_captured;
        else ++d.pending;
        continue;
      }
      if (e != cudaSuccess) {
        if (e != cudaErrorInvalidResourceHandle) fail_device(*ctx, "cudaEventElapsedTime", e);
        r->state = dev_invalid;
        continue;
      }
      r->begin_ns = ctx->references[r->reference].second + static_cast<std::int64_t>(static_cast<double>(offset_ms) * 1e6);
      r->end_ns = r->begin_ns + static_cast<std::int64_t>(static_cast<double>(span_ms) * 1e6 + 0.5);
      ++ctx->scopes_timed;
      if (r->capture_id == 0) {
        // Captured events stay with the graph: every replay records them again.
        give_back_event(static_cast<cudaEvent_t>(r->begin_event), r->device);
        give_back_event(static_cast<cudaEvent_t>(r->end_event), r->device);
        r->begin_event = r->end_event = nullptr;
        r->state = dev_resolved;
      } else {
        r->state = dev_resolved;  // the latest replay's span; a later collect may see a later replay
      }
    }
    flush_event_cache(t_event_cache);
    // A fresh reference for the scopes that start from now on.
    for (auto& ctx : d.devices)
      if (ctx->ready.load(std::memory_order_acquire) && !ctx->failed && cudaSetDevice(ctx->ordinal) == cudaSuccess)
        (void)add_reference(*ctx);
  } catch (...) {
  }
  if (mode_swapped) cudaThreadExchangeStreamCaptureMode(&mode);
  if (have_saved_device) cudaSetDevice(saved_device);
  forget_our_error(pending);
}

/// The report header's line about device time.
inline std::string device_evidence(bool& valid) {
  device_registry& d = the_devices();
  std::lock_guard<std::mutex> lock(d.mu);
  valid = false;
  const std::uint8_t state = g_device_timing.load(std::memory_order_acquire);
  if (!d.off_reason.empty()) return d.off_reason;
  if (state == device_timing_off) return "n/a (device timing switched off: SCOPEPROF_DEVICE=0 or set_device_timing(false))";
  if (!d.probed) return "n/a (no scope has asked for device time yet)";
  std::string s = "CUDA events (span between a scope's boundaries on its stream)";
  std::string failures;
  std::uint64_t timed = 0;
  for (const auto& ctx : d.devices) {
    std::lock_guard<std::mutex> clock(ctx->mu);
    timed += ctx->scopes_timed;
    if (ctx->failed) failures += "; GPU " + std::to_string(ctx->ordinal) + " INVALID after " + ctx->failure;
  }
  valid = failures.empty();
  s += ", " + std::to_string(timed) + " spans resolved";
  if (d.pending) s += ", " + std::to_string(d.pending) + " still running (n/a, next collect)";
  const std::uint64_t skipped = d.skipped.load(std::memory_order_relaxed) + the_registry().device_records_skipped.load();
  if (skipped) s += ", " + std::to_string(skipped) + " scopes not timed (event pool or record cap)";
  return s + failures;
}

#else  // !SCOPEPROF_WITH_CUDA

inline void resolve_device_records(std::vector<device_record*>&) noexcept {}

#endif

}  // namespace detail

/// @brief Switch device timing on or off for every scope (CUDA builds; a no-op otherwise).
inline void set_device_timing(bool on) noexcept {
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

}  // namespace scopeprof
