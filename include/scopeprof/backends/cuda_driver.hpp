// scopeprof: the CUDA calls device timing makes, and how it keeps the program's error state as it was
// (SCOPEPROF_WITH_CUDA=1).
//
// A scope's boundaries call the driver directly, through entry points fetched once via the runtime
// (nothing links libcuda): cheaper than the runtime wrappers, and driver calls never touch the runtime's
// per-thread last error, so the hot path needs no error bookkeeping. Where the entry points are missing
// (a driver or toolkit older than CUDA 12) or the thread has no current context yet, the same steps go
// through the runtime, which peeks at the pending error first and clears only an error of its own.
#pragma once

#include <scopeprof/config.hpp>

#if SCOPEPROF_WITH_CUDA
#include <cuda.h>  // driver API types only: the entry points are fetched through the runtime
#include <cuda_runtime_api.h>

#include <string>

#if CUDART_VERSION < 11010
#error "scopeprof's device timing needs the CUDA runtime 11.1 or newer (cudaEventRecordWithFlags); build with SCOPEPROF_WITH_CUDA=0"
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Keep the program's view of cudaGetLastError as it would be without us: clear an error we caused,
/// unless the program already had one pending.
inline void forget_our_error(cudaError_t pending_before) noexcept {
  if (pending_before == cudaSuccess) (void)cudaGetLastError();
}

inline std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
}

/// Errors that mean "this stream or event is not usable here" (a stream of another device or context,
/// a destroyed stream), as opposed to a device that stopped working.
inline bool local_error(int code) noexcept {
  return code == cudaErrorInvalidResourceHandle || code == cudaErrorInvalidValue;
}

/// The driver calls a device-timed scope makes. Written once by probe_devices(), before device timing
/// is switched on; `ok` is false when any is missing, and scopes then use the runtime.
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
inline driver_calls g_driver;

template <class Fn>
inline bool driver_entry(const char* symbol, Fn& fn) noexcept {
  void* p = nullptr;
  // 12000: the ABI of these calls has been stable since CUDA 12.0; default-stream flags: handle 0 is the
  // legacy stream, and the per-thread stream is passed explicitly as cudaStreamPerThread.
#if CUDART_VERSION >= 12050
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || p == nullptr)
    return false;
#elif CUDART_VERSION >= 12000
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPoint(symbol, &p, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess || p == nullptr)
    return false;
#else
  (void)symbol;  // CUDA 11: the runtime path serves (cudaGetDriverEntryPoint has another signature there)
  (void)fn;
  (void)p;
  return false;
#endif
  fn = reinterpret_cast<Fn>(p);
  return true;
}

inline void load_driver_calls() noexcept {
  driver_calls c;
  c.ok = driver_entry("cuCtxGetCurrent", c.ctx_get_current) && driver_entry("cuCtxGetDevice", c.ctx_get_device) &&
         driver_entry("cuStreamIsCapturing", c.stream_is_capturing) && driver_entry("cuEventRecord", c.event_record) &&
         driver_entry("cuEventRecordWithFlags", c.event_record_with_flags);
  if (c.ok) g_driver = c;
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

/// One CUDA path for a scope boundary: the driver entry points, or the runtime with the program's pending
/// error kept (`pending` is what cudaPeekAtLastError said before our first runtime call).
class boundary_calls {
 public:
  /// The thread's current device: false if none can be named (the runtime said so with an error).
  bool device(int& device) noexcept {
    if (SCOPEPROF_LIKELY(g_driver.ok)) {
      CUdevice d = -1;
      if (current_device(g_driver, d)) {
        device = static_cast<int>(d);
        return true;
      }
    }
    driver_ = false;
    pending_ = cudaPeekAtLastError();
    if (cudaGetDevice(&device) == cudaSuccess) return true;
    forget_our_error(pending_);
    return false;
  }

  /// Is the stream being captured into a graph (then `capture_id` is the capture's id)? False when the
  /// stream cannot be recorded on now: an error, or a capture that was invalidated.
  bool capture_state(cudaStream_t stream, unsigned long long& capture_id) noexcept;

  /// Record `ev` on `stream`: an external event-record node in a captured stream. Returns the error code.
  int record(cudaEvent_t ev, cudaStream_t stream, bool captured) noexcept {
    if (driver_)
      return static_cast<int>(captured ? g_driver.event_record_with_flags(ev, stream, CU_EVENT_RECORD_EXTERNAL)
                                       : g_driver.event_record(ev, stream));
    const cudaError_t e = captured ? cudaEventRecordWithFlags(ev, stream, cudaEventRecordExternal) : cudaEventRecord(ev, stream);
    if (e != cudaSuccess) forget_our_error(pending_);
    return static_cast<int>(e);
  }

  /// For the scope's end: the runtime only where the driver calls are missing (the context exists by then).
  static boundary_calls for_end() noexcept {
    boundary_calls b;
    if (!g_driver.ok) {
      b.driver_ = false;
      b.pending_ = cudaPeekAtLastError();
    }
    return b;
  }

 private:
  bool driver_ = true;
  cudaError_t pending_ = cudaSuccess;
};

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

inline bool boundary_calls::capture_state(cudaStream_t stream, unsigned long long& capture_id) noexcept {
  capture_id = 0;
  if (driver_) {
    // Also guards the legacy stream: querying it while another stream captures in global mode returns an
    // error (and records nothing), where recording on it would invalidate that capture.
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (g_driver.stream_is_capturing(stream, &status) != CUDA_SUCCESS || status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
      return false;
    return status != CU_STREAM_CAPTURE_STATUS_ACTIVE || (capture_id = capture_id_of(stream)) != 0;
  }
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  const cudaError_t e = cudaStreamGetCaptureInfo(stream, &status, &id);
  if (e != cudaSuccess) {
    forget_our_error(pending_);
    return false;
  }
  if (status == cudaStreamCaptureStatusInvalidated) return false;
  capture_id = status == cudaStreamCaptureStatusActive ? id : 0;
  return true;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END

#endif  // SCOPEPROF_WITH_CUDA
