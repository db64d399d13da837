// scopeprof: what device timing keeps per CUDA device and per thread (SCOPEPROF_WITH_CUDA=1): the probe
// for a usable GPU, a device's private stream and reference events, its pool of free events, and each
// thread's small cache of events taken from that pool.
//
// Events are created in chunks only when the pool is empty; collect() gives resolved ones back, a thread
// gives its cache back when it exits, and reference events are destroyed once no record needs them, so
// the events in existence stay bounded by what is in flight plus the caches.
#pragma once

#include <scopeprof/backends/cuda_driver.hpp>
#include <scopeprof/backends/cuda_events.hpp>
#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/bounded_ring.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/device_peak.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

#if SCOPEPROF_WITH_CUDA

/// A device's free events: 1 MiB per device used, room for 32768 timed scopes between collects; what
/// does not fit waits in the device's overflow list.
using event_pool = bounded_ring<cudaEvent_t, 65536>;

/// An event recorded on the device's otherwise empty private stream, with the host time at which it was
/// seen complete (an upper bound of its device time): device spans are placed on the host timeline by
/// their offset from one. `generation` names it in the records of the scopes that began against it.
struct reference_event {
  std::uint32_t generation = 0;
  cudaEvent_t event = nullptr;
  std::int64_t host_ns = 0;
};

/// Per CUDA device: private stream, reference events, event pool, failure state.
struct device_context {
  std::mutex mu;
  int ordinal = 0;
  std::atomic<bool> ready{false};
  std::atomic<bool> failed{false};  // a CUDA error made this device's events unusable
  std::string failure;              // under mu
  cudaStream_t private_stream = nullptr;
  // Oldest first; changed by prepare_device() (before `ready`) and by collect() (serialised) only.
  std::vector<reference_event> references;
  std::uint32_t next_generation = 0;
  std::atomic<std::uint32_t> current_generation{0};  // the newest reference: what new scopes begin against
  event_pool free_events;
  std::vector<cudaEvent_t> overflow_events;  // under mu: returned events that found the pool full
  std::atomic<std::uint64_t> events_created{0};    // pool events (reference events are counted apart)
  std::atomic<std::uint64_t> events_destroyed{0};
  std::uint64_t scopes_timed = 0;  // resolved spans, for the report header
  device_peak peak;                // under mu: spec figures once read (peak.device >= 0), measured ones
                                   // once calibrated (impl/cuda_peak.hpp)
};

struct device_registry {
  std::mutex mu;
  bool probed = false;
  int count = 0;
  std::string off_reason;  // why device timing is off, when it is
  std::vector<std::unique_ptr<device_context>> devices;
  std::atomic<std::uint64_t> skipped{0};  // scopes that wanted device time but did not get it
  std::uint64_t wait_ms = 5000;           // longest collect() waits for a stream's newest event
  // Records reset() discarded while their events were still on the GPU: collect() resolves them (so
  // their events go back to the pool) and then forgets them. Under the registry's collect_mu.
  std::vector<device_record> retired;
  // One-time set-up (driver probe, a device's first use, event creation), and the part of it that ran
  // inside enclosing scopes (host ticks; the scope being entered re-reads its begin time after it).
  std::atomic<std::int64_t> setup_ns{0};
  std::atomic<std::uint64_t> setup_in_scopes_ticks{0};
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

/// Times one stretch of set-up for the report header.
class setup_timer {
 public:
  setup_timer() noexcept : start_(steady_now_ns()) {}
  ~setup_timer() { the_devices().setup_ns.fetch_add(steady_now_ns() - start_, std::memory_order_relaxed); }
  setup_timer(const setup_timer&) = delete;
  setup_timer& operator=(const setup_timer&) = delete;

 private:
  std::int64_t start_;
};

inline void fail_device(device_context& ctx, const std::string& what, cudaError_t e) noexcept {
  try {
    std::lock_guard<std::mutex> lock(ctx.mu);
    if (!ctx.failed.load(std::memory_order_relaxed)) {
      ctx.failure = what + ": " + cuda_error_text(e);
      ctx.failed.store(true, std::memory_order_release);
      warn("device timing stopped on GPU " + std::to_string(ctx.ordinal) + ": " + ctx.failure);
    }
  } catch (...) {
    ctx.failed.store(true, std::memory_order_release);
  }
}


/// Record a new reference event on the private stream (the calling thread's current device must be the
/// context's) and wait, briefly, to see it complete: the stream is empty and non-blocking, so it waits
/// for none of the program's work.
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
    const std::uint32_t generation = ctx.next_generation++;
    ctx.references.push_back({generation, ev, steady_now_ns()});
    ctx.current_generation.store(generation, std::memory_order_release);
  } catch (...) {
    cudaEventDestroy(ev);
    return cudaErrorMemoryAllocation;
  }
  return cudaSuccess;
}

/// First use of a device: private stream and first reference event.
SCOPEPROF_NOINLINE inline bool prepare_device(device_context& ctx) noexcept {
  setup_timer timed;
  std::lock_guard<std::mutex> lock(ctx.mu);
  if (ctx.ready.load(std::memory_order_acquire) || ctx.failed.load(std::memory_order_relaxed))
    return ctx.ready.load(std::memory_order_relaxed);
  const cudaError_t pending = cudaPeekAtLastError();
  cudaError_t e = cudaStreamCreateWithFlags(&ctx.private_stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = add_reference(ctx);
  if (e != cudaSuccess) {
    forget_our_error(pending);
    try {
      ctx.failure = "could not set up device timing: " + cuda_error_text(e);
    } catch (...) {
    }
    ctx.failed.store(true, std::memory_order_release);
    return false;
  }
  ctx.ready.store(true, std::memory_order_release);
  return true;
}

/// SCOPEPROF_CALIBRATE=1: measure each device's peaks on its first use (impl/cuda_peak.hpp).
inline std::atomic<bool> g_calibrate_on_first_use{false};
/// Measure the peaks of `ctx`'s device (the calling thread's current device); the result and how it was
/// taken go into ctx.peak. Returns true when both figures were measured.
SCOPEPROF_API bool calibrate_context(device_context& ctx) noexcept;

/// The device's context, prepared on first use (`prepared_now` says so); nullptr if it cannot be used.
inline device_context* context_for(int device, bool& prepared_now) noexcept {
  device_registry& d = the_devices();
  if (device < 0 || device >= d.count) return nullptr;
  device_context* ctx = d.devices[static_cast<std::size_t>(device)].get();
  if (SCOPEPROF_UNLIKELY(!ctx->ready.load(std::memory_order_acquire))) {
    prepared_now = true;
    if (!prepare_device(*ctx)) return nullptr;
    if (g_calibrate_on_first_use.load(std::memory_order_relaxed)) calibrate_context(*ctx);
  }
  return ctx->failed.load(std::memory_order_acquire) ? nullptr : ctx;
}

inline void destroy_event(device_context& ctx, cudaEvent_t ev) noexcept {
  const cudaError_t pending = cudaPeekAtLastError();
  if (cudaEventDestroy(ev) != cudaSuccess) forget_our_error(pending);
  ctx.events_destroyed.fetch_add(1, std::memory_order_relaxed);
}

/// Return an event to its device's pool (to the overflow list if the pool is full; destroyed if even
/// that fails).
inline void pool_event(device_context& ctx, cudaEvent_t ev) noexcept {
  if (ctx.free_events.put(ev)) return;
  try {
    std::lock_guard<std::mutex> lock(ctx.mu);
    ctx.overflow_events.push_back(ev);
    return;
  } catch (...) {
  }
  destroy_event(ctx, ev);
}

/// Return a thread's cached events to their device pool.
inline void flush_event_cache(thread_event_cache& cache) noexcept {
  if (cache.count != 0 && cache.device >= 0) {
    device_context* ctx = the_devices().devices[static_cast<std::size_t>(cache.device)].get();
    for (std::uint32_t i = 0; i < cache.count; ++i) pool_event(*ctx, cache.events[i]);
  }
  cache.count = 0;
}

/// Make a chunk of events on the context's device (the calling thread may have another one current).
inline void create_events(thread_event_cache& cache, device_context& ctx) noexcept {
  setup_timer timed;
  const cudaError_t pending = cudaPeekAtLastError();
  int current = -1;
  const bool switch_device = cudaGetDevice(&current) == cudaSuccess && current != ctx.ordinal;
  if (switch_device && cudaSetDevice(ctx.ordinal) != cudaSuccess) {
    forget_our_error(pending);
    return;
  }
  while (cache.count < event_cache_size) {
    cudaEvent_t ev = nullptr;
    if (cudaEventCreate(&ev) != cudaSuccess) break;
    cache.events[cache.count++] = ev;
    ctx.events_created.fetch_add(1, std::memory_order_relaxed);
  }
  if (switch_device) cudaSetDevice(current);
  forget_our_error(pending);
}

/// Refill the thread's cache from the device pool (lock-free); only when the pool is empty, create a chunk
/// of events (not a steady state: collect() gives resolved events back). `created` says if it had to.
SCOPEPROF_NOINLINE inline bool refill_event_cache(thread_event_cache& cache, device_context& ctx, bool& created) noexcept {
  if (cache.device != ctx.ordinal) {
    flush_event_cache(cache);
    cache.device = ctx.ordinal;
  }
  while (cache.count < event_cache_size && ctx.free_events.take(cache.events[cache.count])) ++cache.count;
  if (cache.count > 0) return true;
  // The pool is empty: more than its capacity is in flight, or the events are still to be created.
  try {
    std::lock_guard<std::mutex> lock(ctx.mu);
    while (cache.count < event_cache_size && !ctx.overflow_events.empty()) {
      cache.events[cache.count++] = ctx.overflow_events.back();
      ctx.overflow_events.pop_back();
    }
  } catch (...) {
  }
  if (cache.count > 0) return true;
  created = true;
  create_events(cache, ctx);
  return cache.count > 0;
}

inline cudaEvent_t take_event(device_context& ctx, bool& created) noexcept {
  thread_event_cache& cache = t_event_cache;
  if (SCOPEPROF_UNLIKELY(cache.device != ctx.ordinal || cache.count == 0) && !refill_event_cache(cache, ctx, created))
    return nullptr;
  return cache.events[--cache.count];
}

/// A never-recorded event for a scope inside a graph capture: the graph's replays record it, and until the
/// first one it must not look complete (a pooled event still holds its last recording, which would give a
/// stale span). Created in relaxed capture mode (no disturbance to a global-mode capture); set-up time.
inline cudaEvent_t fresh_event(device_context& ctx, bool& created) noexcept {
  setup_timer timed;
  const cudaError_t pending = cudaPeekAtLastError();
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  const bool exchanged = cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess;
  cudaEvent_t ev = nullptr;
  if (cudaEventCreate(&ev) == cudaSuccess) {
    ctx.events_created.fetch_add(1, std::memory_order_relaxed);
    created = true;
  } else {
    ev = nullptr;
  }
  if (exchanged) cudaThreadExchangeStreamCaptureMode(&mode);
  forget_our_error(pending);
  return ev;
}

inline void give_back_event(cudaEvent_t ev, int device) noexcept {
  thread_event_cache& cache = t_event_cache;
  if (cache.device == device && cache.count < event_cache_size) cache.events[cache.count++] = ev;
  else pool_event(*the_devices().devices[static_cast<std::size_t>(device)], ev);
}

/// A thread's first scope, before its begin time is read: if the thread already has a CUDA context, set up
/// its device and fill its event cache now, so that no scope carries that one-time cost.
inline void device_thread_attach() noexcept {
  if (g_device_timing.load(std::memory_order_acquire) != device_timing_on || !g_driver.ok) return;
  CUdevice device = -1;
  if (!current_device(g_driver, device)) return;  // no context yet: its first CUDA call is still to come
  bool prepared_now = false, created = false;
  device_context* ctx = context_for(static_cast<int>(device), prepared_now);
  if (ctx == nullptr) return;
  thread_event_cache& cache = t_event_cache;
  if (cache.device != ctx->ordinal || cache.count == 0) refill_event_cache(cache, *ctx, created);
}

/// A thread's exit: its cached events go back to the pool.
inline void device_thread_exit() noexcept { flush_event_cache(t_event_cache); }

/// Events of one device: pool events created and destroyed (created - destroyed exist now: in the pool,
/// in threads' caches or in flight) and the reference events held (counted apart).
struct device_event_census {
  std::uint64_t created = 0;
  std::uint64_t destroyed = 0;
  std::size_t references = 0;
};

/// For tests and the report header. Call with no collect() running.
inline device_event_census event_census(int device) noexcept {
  device_registry& d = the_devices();
  device_event_census c;
  if (device < 0 || device >= d.count) return c;
  device_context& ctx = *d.devices[static_cast<std::size_t>(device)];
  c.created = ctx.events_created.load(std::memory_order_relaxed);
  c.destroyed = ctx.events_destroyed.load(std::memory_order_relaxed);
  c.references = ctx.references.size();
  return c;
}

#endif  // SCOPEPROF_WITH_CUDA

}  // namespace detail
SCOPEPROF_NAMESPACE_END
