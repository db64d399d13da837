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
// as it would have been without scopeprof. A scope's boundaries call the driver directly (entry points
// fetched through the runtime once): cheaper than the runtime wrappers, and driver calls never touch the
// runtime's last-error state, so the hot path needs no error bookkeeping.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/backends/torch.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#if SCOPEPROF_WITH_CUDA
#include <cuda.h>  // driver API types only: the entry points are fetched through the runtime, nothing links libcuda
#include <cuda_runtime_api.h>
#endif

namespace scopeprof {
namespace detail {

enum : std::uint8_t { device_timing_uninitialised = 0, device_timing_on = 1, device_timing_off = 2 };
/// Read at every scope entry in CUDA builds (relaxed).
inline std::atomic<std::uint8_t> g_device_timing{device_timing_uninitialised};

#if SCOPEPROF_WITH_CUDA

/// A device's pool of free events: a bounded queue that any thread can take from and give back to with
/// one compare-and-swap per event and no lock (each cell carries a sequence number that says whether
/// it is ready to be written or read in the current lap), so a scope refilling its thread's cache never
/// waits for collect(). Fixed capacity; what does not fit waits in the device's overflow list.
class event_pool {
 public:
  static constexpr std::size_t capacity = 65536;  // 1 MiB per device used: 32768 timed scopes between collects
  event_pool() : cells_(new cell[capacity]) {
    for (std::size_t i = 0; i < capacity; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }
  bool put(cudaEvent_t ev) noexcept {
    std::size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & (capacity - 1)];
      const std::size_t seq = c.seq.load(std::memory_order_acquire);
      const auto lap = static_cast<std::ptrdiff_t>(seq - pos);
      if (lap == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.ev = ev;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (lap < 0) {
        return false;  // full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }
  bool take(cudaEvent_t& ev) noexcept {
    std::size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      cell& c = cells_[pos & (capacity - 1)];
      const std::size_t seq = c.seq.load(std::memory_order_acquire);
      const auto lap = static_cast<std::ptrdiff_t>(seq - (pos + 1));
      if (lap == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          ev = c.ev;
          c.seq.store(pos + capacity, std::memory_order_release);
          return true;
        }
      } else if (lap < 0) {
        return false;  // empty
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

 private:
  struct cell {
    std::atomic<std::size_t> seq{0};
    cudaEvent_t ev = nullptr;
  };
  std::unique_ptr<cell[]> cells_;
  alignas(64) std::atomic<std::size_t> head_{0};
  alignas(64) std::atomic<std::size_t> tail_{0};
};

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
  event_pool free_events;
  std::vector<cudaEvent_t> overflow_events;  // under mu: returned events that found the pool full
  std::atomic<std::uint64_t> events_created{0};
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

/// The driver calls a device-timed scope makes, fetched once through the runtime
/// (cudaGetDriverEntryPointByVersion, so nothing links libcuda). Driver calls return their error and leave
/// the runtime's per-thread last error alone: the hot path needs no cudaPeekAtLastError to keep the
/// program's error state as it was. Without them (an old driver), scopes use the runtime calls.
struct driver_calls {
  using ctx_get_current_fn = CUresult (*)(CUcontext*);
  using ctx_get_device_fn = CUresult (*)(CUdevice*);
  using stream_is_capturing_fn = CUresult (*)(CUstream, CUstreamCaptureStatus*);
  using event_record_fn = CUresult (*)(CUevent, CUstream);
  using event_record_with_flags_fn = CUresult (*)(CUevent, CUstream, unsigned int);
  ctx_get_current_fn ctx_get_current = nullptr;
  ctx_get_device_fn ctx_get_device = nullptr;
  stream_is_capturing_fn stream_is_capturing = nullptr;
  event_record_fn event_record = nullptr;
  event_record_with_flags_fn event_record_with_flags = nullptr;
  bool ok = false;
};
inline driver_calls g_driver;  // written once by probe_devices(), before device timing is switched on

template <class Fn>
inline bool driver_entry(const char* symbol, Fn& fn) noexcept {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  // 12000: the ABI of these four calls has been stable since CUDA 12.0; default-stream flags: handle 0 is
  // the legacy stream, and the per-thread stream is passed explicitly as cudaStreamPerThread.
#if CUDART_VERSION >= 12050
  if (cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || p == nullptr)
    return false;
#elif CUDART_VERSION >= 12000
  if (cudaGetDriverEntryPoint(symbol, &p, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || p == nullptr)
    return false;
#else
  (void)symbol;
  (void)fn;
  (void)p;
  (void)found;
  return false;
#endif
  fn = reinterpret_cast<Fn>(p);
  return true;
}

inline void load_driver_calls() noexcept {
  driver_calls c;
  c.ok = driver_entry("cuCtxGetCurrent", c.ctx_get_current) && driver_entry("cuCtxGetDevice", c.ctx_get_device) &&
         driver_entry("cuStreamIsCapturing", c.stream_is_capturing) &&
         driver_entry("cuEventRecord", c.event_record) && driver_entry("cuEventRecordWithFlags", c.event_record_with_flags);
  if (c.ok) g_driver = c;
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
    load_driver_calls();
    forget_our_error(pending);
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
  const cudaError_t pending = cudaPeekAtLastError();
  if (cudaEventDestroy(ev) != cudaSuccess) forget_our_error(pending);
}

/// Return the calling thread's cached events to their device pool.
inline void flush_event_cache(thread_event_cache& cache) noexcept {
  if (cache.count == 0 || cache.device < 0) return;
  device_context* ctx = the_devices().devices[static_cast<std::size_t>(cache.device)].get();
  for (std::uint32_t i = 0; i < cache.count; ++i) pool_event(*ctx, cache.events[i]);
  cache.count = 0;
}

/// Refill the thread's event cache from the device pool (lock-free); only when the pool is empty, create
/// a chunk of events (not a steady state: collect() gives resolved events back).
SCOPEPROF_NOINLINE inline bool refill_event_cache(thread_event_cache& cache, device_context& ctx) noexcept {
  if (cache.device != ctx.ordinal) {
    flush_event_cache(cache);
    cache.device = ctx.ordinal;
  }
  while (cache.count < event_cache_size && ctx.free_events.take(cache.events[cache.count])) ++cache.count;
  if (cache.count > 0) return true;
  // The pool is empty: more than its capacity is in flight, or the events are still being created.
  try {
    std::lock_guard<std::mutex> lock(ctx.mu);
    while (cache.count < event_cache_size && !ctx.overflow_events.empty()) {
      cache.events[cache.count++] = ctx.overflow_events.back();
      ctx.overflow_events.pop_back();
    }
  } catch (...) {
  }
  if (cache.count > 0) return true;
  const cudaError_t pending = cudaPeekAtLastError();
  for (std::uint32_t i = 0; i < event_cache_size; ++i) {
    cudaEvent_t ev = nullptr;
    if (cudaEventCreate(&ev) != cudaSuccess) {
      forget_our_error(pending);
      break;
    }
    cache.events[cache.count++] = ev;
    ctx.events_created.fetch_add(1, std::memory_order_relaxed);
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
  else pool_event(*the_devices().devices[static_cast<std::size_t>(device)], ev);
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

/// The stream a scope without one is timed on: torch's current stream on `device` in builds with
/// LibTorch's CUDA part, else the legacy default stream, or the calling thread's per-thread default
/// stream when the program is built with --default-stream per-thread.
SCOPEPROF_ALWAYS_INLINE cudaStream_t default_stream_policy(cudaStream_t stream, int device) noexcept {
  if (stream != nullptr) return stream;
#if SCOPEPROF_WITH_TORCH && SCOPEPROF_TORCH_CUDA
  if (cudaStream_t t = torch_current_stream(device)) return t;
#else
  (void)device;
#endif
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
  return cudaStreamPerThread;
#else
  return nullptr;
#endif
}

/// Errors that mean "this stream or event is not usable here" (a stream of another device or context,
/// a destroyed stream), as opposed to a device that stopped working.
inline bool local_error(int code) noexcept {
  return code == cudaErrorInvalidResourceHandle || code == cudaErrorInvalidValue;
}

/// Capture id of a stream being captured (runtime call, only on captured streams). 0 on failure.
SCOPEPROF_NOINLINE inline unsigned long long capture_id_of(cudaStream_t stream) noexcept {
  const cudaError_t pending = cudaPeekAtLastError();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  if (cudaStreamGetCaptureInfo(stream, &status, &id) != cudaSuccess) {
    forget_our_error(pending);
    return 0;
  }
  return status == cudaStreamCaptureStatusActive ? id : 0;
}

inline void note_skipped() noexcept { the_devices().skipped.fetch_add(1, std::memory_order_relaxed); }

/// Scope entry through the runtime API: a thread with no current CUDA context yet, or a driver without
/// the entry points. Keeps the program's pending error as it was.
SCOPEPROF_NOINLINE inline void device_begin_runtime(device_scope& s, cudaStream_t stream) noexcept {
  const cudaError_t pending = cudaPeekAtLastError();
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    forget_our_error(pending);
    return note_skipped();
  }
  device_context* ctx = context_for(device);
  if (ctx == nullptr) return note_skipped();
  stream = default_stream_policy(stream, device);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long capture_id = 0;
  cudaError_t e = cudaStreamGetCaptureInfo(stream, &status, &capture_id);
  if (e != cudaSuccess || status == cudaStreamCaptureStatusInvalidated) {
    if (e != cudaSuccess) forget_our_error(pending);
    return note_skipped();
  }
  const bool captured = status == cudaStreamCaptureStatusActive;
  cudaEvent_t ev = take_event(*ctx);
  if (ev == nullptr) return note_skipped();
  e = record_event(ev, stream, captured);
  if (e != cudaSuccess) {
    forget_our_error(pending);
    give_back_event(ev, device);
    if (!local_error(e)) fail_device(*ctx, "cudaEventRecord", e);
    return note_skipped();
  }
  s.begin = ev;
  s.stream = stream;
  s.device = device;
  s.reference = ctx->current_reference.load(std::memory_order_acquire);
  s.capture_id = captured ? capture_id : 0;
}

/// The calling thread's current context and its device, cached per thread: one driver call (a
/// thread-local read) in steady state. False when the thread has no current context yet (its first CUDA
/// call is still to come): asking the driver for its device would then be an error, which tools such as
/// compute-sanitizer report, so the caller takes the runtime path instead.
struct thread_context_cache {
  CUcontext context = nullptr;
  CUdevice device = -1;
};
inline thread_local thread_context_cache t_context_cache;

SCOPEPROF_ALWAYS_INLINE bool current_device(const driver_calls& drv, CUdevice& device) noexcept {
  CUcontext context = nullptr;
  if (drv.ctx_get_current(&context) != CUDA_SUCCESS || context == nullptr) return false;
  thread_context_cache& cache = t_context_cache;
  if (SCOPEPROF_UNLIKELY(context != cache.context)) {
    if (drv.ctx_get_device(&cache.device) != CUDA_SUCCESS) {
      cache.context = nullptr;
      return false;
    }
    cache.context = context;
  }
  device = cache.device;
  return true;
}

/// Scope entry: decide (sampling) and record the begin event. Never waits. Steady state: three driver
/// calls (current context, capture status, event record), no runtime error-state traffic.
SCOPEPROF_NOINLINE inline void device_begin(device_scope& s, site_info& site, cudaStream_t stream) noexcept {
  if (SCOPEPROF_UNLIKELY(g_device_timing.load(std::memory_order_acquire) == device_timing_uninitialised)) probe_devices();
  if (g_device_timing.load(std::memory_order_relaxed) != device_timing_on) return;
  const std::uint32_t every = site.device_every.load(std::memory_order_relaxed);
  if (every == 0) return;
  if (every > 1 && site.device_entries.fetch_add(1, std::memory_order_relaxed) % every != 0) return;
  const driver_calls& drv = g_driver;
  if (SCOPEPROF_UNLIKELY(!drv.ok)) return device_begin_runtime(s, stream);
  CUdevice device = -1;
  if (!current_device(drv, device)) return device_begin_runtime(s, stream);
  device_context* ctx = context_for(static_cast<int>(device));
  if (ctx == nullptr) return note_skipped();
  stream = default_stream_policy(stream, static_cast<int>(device));
  // Also guards the legacy stream: querying it while another stream captures in global mode returns an
  // error (and records nothing), where recording on it would invalidate that capture.
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = drv.stream_is_capturing(stream, &status);
  if (r != CUDA_SUCCESS || status == CU_STREAM_CAPTURE_STATUS_INVALIDATED) return note_skipped();
  unsigned long long capture_id = 0;
  if (status == CU_STREAM_CAPTURE_STATUS_ACTIVE && (capture_id = capture_id_of(stream)) == 0) return note_skipped();
  cudaEvent_t ev = take_event(*ctx);
  if (ev == nullptr) return note_skipped();
  r = capture_id != 0 ? drv.event_record_with_flags(ev, stream, CU_EVENT_RECORD_EXTERNAL) : drv.event_record(ev, stream);
  if (r != CUDA_SUCCESS) {
    give_back_event(ev, static_cast<int>(device));
    // CUresult and cudaError_t share their codes for these errors.
    if (!local_error(static_cast<int>(r))) fail_device(*ctx, "cuEventRecord", static_cast<cudaError_t>(r));
    return note_skipped();
  }
  s.begin = ev;
  s.stream = stream;
  s.device = static_cast<int>(device);
  s.reference = ctx->current_reference.load(std::memory_order_acquire);
  s.capture_id = capture_id;
}

/// Scope exit, before the host end time is read: record the end event. Returns it (null on failure).
SCOPEPROF_NOINLINE inline cudaEvent_t device_end(device_scope& s) noexcept {
  device_context* ctx = the_devices().devices[static_cast<std::size_t>(s.device)].get();
  cudaEvent_t ev = ctx->failed ? nullptr : take_event(*ctx);
  if (ev != nullptr) {
    const bool captured = s.capture_id != 0;
    const driver_calls& drv = g_driver;
    int code;
    if (SCOPEPROF_LIKELY(drv.ok)) {
      code = static_cast<int>(captured ? drv.event_record_with_flags(ev, s.stream, CU_EVENT_RECORD_EXTERNAL)
                                       : drv.event_record(ev, s.stream));
    } else {
      const cudaError_t pending = cudaPeekAtLastError();
      code = record_event(ev, s.stream, captured);
      if (code != cudaSuccess) forget_our_error(pending);
    }
    if (code != 0) {
      give_back_event(ev, s.device);
      ev = nullptr;
      if (!local_error(code)) fail_device(*ctx, "cudaEventRecord", static_cast<cudaError_t>(code));
    }
  }
  if (ev == nullptr) {
    if (s.capture_id == 0) give_back_event(s.begin, s.device);  // (a captured one may still be recorded by replays)
    note_skipped();
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
