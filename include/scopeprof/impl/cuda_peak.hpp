// scopeprof: what each device can do at best (device_peak.hpp), for the "% of peak" of declared work. The
// spec figures come from the device's attributes, read once per device at the first report. The measured
// ones come from calibrate_device() (or SCOPEPROF_CALIBRATE=1, on a device's first use): a device-to-device
// copy and an FP32 FMA kernel, each timed with a CUDA event pair on a private stream, best of a few runs.
// The kernel is PTX text loaded through the runtime (cudaLibraryLoadData), so the library needs no CUDA
// compiler. Calibration waits for its own events only, never for the program's work; the figures are
// clean only when the GPU is otherwise idle, which is why it is opt-in and best called before the work.
// Compiled once (SCOPEPROF_IMPLEMENTATION) or inline (header-only).
#pragma once

#include <scopeprof/backends/cuda_device.hpp>
#include <scopeprof/backends/cuda_driver.hpp>
#include <scopeprof/backends/cuda_events.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/device_peak.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <string>

SCOPEPROF_DETAIL_COLD_BEGIN
SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

#if SCOPEPROF_WITH_CUDA

/// The spec figures of device `ordinal` from its attributes (NaN where one is missing).
inline device_peak spec_peak_of(int ordinal) {
  device_peak p;
  p.device = ordinal;
  const auto attr = [ordinal](cudaDeviceAttr a) {
    int v = 0;
    return cudaDeviceGetAttribute(&v, a, ordinal) == cudaSuccess ? v : 0;
  };
  p.cc_major = attr(cudaDevAttrComputeCapabilityMajor);
  p.cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  p.sm_count = attr(cudaDevAttrMultiProcessorCount);
  p.sm_clock_hz = 1e3 * attr(cudaDevAttrClockRate);
  p.memory_clock_hz = 1e3 * attr(cudaDevAttrMemoryClockRate);
  p.bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  p.l2_bytes = attr(cudaDevAttrL2CacheSize);
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, ordinal) == cudaSuccess) p.name = prop.name;
  if (p.memory_clock_hz > 0 && p.bus_width_bits > 0) p.spec_bytes_per_s = p.memory_clock_hz * 2 * p.bus_width_bits / 8;
  const int lanes = fp32_lanes_per_sm(p.cc_major, p.cc_minor);
  if (lanes > 0 && p.sm_count > 0 && p.sm_clock_hz > 0) p.spec_flops_per_s = 2.0 * lanes * p.sm_count * p.sm_clock_hz;
  return p;
}

/// The FMA kernel: 8 independent chains per thread, 32 FMAs per loop trip; the sum is stored so nothing is
/// optimised away. FLOPs = 2 * 32 * iterations * threads.
constexpr const char* calibration_ptx = R"(.version 7.0
.target sm_75
.address_size 64
.visible .entry scopeprof_fma_peak(.param .u64 out, .param .u32 iters)
{
  .reg .pred %p;
  .reg .b32 %i, %n, %t, %c, %w, %g;
  .reg .f32 %a<8>, %s;
  .reg .b64 %o, %off;
  mov.u32 %t, %tid.x;
  cvt.rn.f32.u32 %a0, %t;
  add.f32 %a1, %a0, 0f3F800000;
  add.f32 %a2, %a1, 0f3F800000;
  add.f32 %a3, %a2, 0f3F800000;
  add.f32 %a4, %a3, 0f3F800000;
  add.f32 %a5, %a4, 0f3F800000;
  add.f32 %a6, %a5, 0f3F800000;
  add.f32 %a7, %a6, 0f3F800000;
  ld.param.u32 %n, [iters];
  mov.u32 %i, 0;
LOOP:
)"
                                          R"(FMA8
FMA8
FMA8
FMA8
  add.u32 %i, %i, 1;
  setp.lt.u32 %p, %i, %n;
  @%p bra LOOP;
  add.f32 %s, %a0, %a1;
  add.f32 %s, %s, %a2;
  add.f32 %s, %s, %a3;
  add.f32 %s, %s, %a4;
  add.f32 %s, %s, %a5;
  add.f32 %s, %s, %a6;
  add.f32 %s, %s, %a7;
  mov.u32 %c, %ctaid.x;
  mov.u32 %w, %ntid.x;
  mad.lo.u32 %g, %c, %w, %t;
  mul.wide.u32 %off, %g, 4;
  ld.param.u64 %o, [out];
  cvta.to.global.u64 %o, %o;
  add.u64 %o, %o, %off;
  st.global.f32 [%o], %s;
  ret;
}
)";

/// calibration_ptx with each FMA8 line expanded to eight independent FMAs (a = a * 0.99999994 + 1e-7).
inline std::string calibration_source() {
  std::string eight;
  for (int k = 0; k < 8; ++k) {
    const std::string r = "%a" + std::to_string(k);
    eight += "  fma.rn.f32 " + r + ", " + r + ", 0f3F7FFFFF, 0f33D6BF95;\n";
  }
  std::string src = calibration_ptx;
  for (std::size_t at; (at = src.find("FMA8\n")) != std::string::npos;) src.replace(at, 5, eight);
  return src;
}

/// Times `launch` (which enqueues on `stream`) between two events, best of `runs` after one warm-up; in ms,
/// or a negative value on an error (`e` says which).
template <class Launch>
float best_ms(cudaStream_t stream, int runs, Launch&& launch, cudaError_t& e) {
  cudaEvent_t a = nullptr, b = nullptr;
  float best = -1;
  if ((e = cudaEventCreate(&a)) != cudaSuccess || (e = cudaEventCreate(&b)) != cudaSuccess) {
    if (a != nullptr) cudaEventDestroy(a);
    return -1;
  }
  for (int run = 0; run <= runs && e == cudaSuccess; ++run) {
    float ms = 0;
    if ((e = cudaEventRecord(a, stream)) != cudaSuccess || (e = launch()) != cudaSuccess ||
        (e = cudaEventRecord(b, stream)) != cudaSuccess || (e = cudaEventSynchronize(b)) != cudaSuccess ||
        (e = cudaEventElapsedTime(&ms, a, b)) != cudaSuccess)
      break;
    if (run > 0 && (best < 0 || ms < best)) best = ms;
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return e == cudaSuccess ? best : -1;
}

/// Device-to-device copy bandwidth (read + write bytes per second) on the current device; 0 and `why` on
/// failure.
inline double measure_copy(cudaStream_t stream, const device_peak& p, std::string& why) {
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) free_bytes = 0;
  std::size_t n = (std::max)(std::size_t{256} << 20, static_cast<std::size_t>(8 * (std::max<std::int64_t>)(p.l2_bytes, 0)));
  if (free_bytes != 0) n = (std::min)(n, free_bytes / 4);
  void* src = nullptr;
  void* dst = nullptr;
  cudaError_t e = cudaMalloc(&src, n);
  if (e == cudaSuccess) e = cudaMalloc(&dst, n);
  float ms = -1;
  if (e == cudaSuccess) e = cudaMemsetAsync(src, 1, n, stream);
  if (e == cudaSuccess)
    ms = best_ms(stream, 5, [&] { return cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream); }, e);
  if (dst != nullptr) cudaFree(dst);
  if (src != nullptr) cudaFree(src);
  if (e != cudaSuccess || ms <= 0) {
    why = "copy: " + (e != cudaSuccess ? cuda_error_text(e) : std::string("no time"));
    return 0;
  }
  return 2.0 * static_cast<double>(n) / (static_cast<double>(ms) * 1e-3);
}

/// FP32 FMA throughput (FLOP per second) on the current device; 0 and `why` on failure.
inline double measure_fma(cudaStream_t stream, const device_peak& p, std::string& why) {
#if CUDART_VERSION >= 12000
  const std::string src = calibration_source();
  cudaLibrary_t lib = nullptr;
  cudaKernel_t kernel = nullptr;
  cudaError_t e = cudaLibraryLoadData(&lib, src.c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0);
  if (e == cudaSuccess) e = cudaLibraryGetKernel(&kernel, lib, "scopeprof_fma_peak");
  const unsigned blocks = static_cast<unsigned>((std::max)(p.sm_count, 1) * 8), threads = 256;
  unsigned iters = 16384;
  void* out = nullptr;
  if (e == cudaSuccess) e = cudaMalloc(&out, std::size_t{blocks} * threads * sizeof(float));
  float ms = -1;
  if (e == cudaSuccess) {
    void* args[] = {&out, &iters};
    ms = best_ms(stream, 3, [&] {
      return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(blocks), dim3(threads), args, 0, stream);
    }, e);
  }
  if (out != nullptr) cudaFree(out);
  if (lib != nullptr) cudaLibraryUnload(lib);
  if (e != cudaSuccess || ms <= 0) {
    why = "FMA kernel: " + (e != cudaSuccess ? cuda_error_text(e) : std::string("no time"));
    return 0;
  }
  return 2.0 * 32.0 * iters * blocks * threads / (static_cast<double>(ms) * 1e-3);
#else
  (void)stream;
  (void)p;
  why = "FMA kernel: needs the CUDA 12 runtime (cudaLibraryLoadData)";
  return 0;
#endif
}

/// The spec figures of `ctx` (read once), under ctx.mu.
inline void ensure_spec_locked(device_context& ctx) {
  if (ctx.peak.device >= 0) return;
  const std::string note = ctx.peak.measured_note;
  const double bw = ctx.peak.measured_bytes_per_s, fl = ctx.peak.measured_flops_per_s;
  ctx.peak = spec_peak_of(ctx.ordinal);
  ctx.peak.measured_note = note;
  ctx.peak.measured_bytes_per_s = bw;
  ctx.peak.measured_flops_per_s = fl;
}

SCOPEPROF_API bool calibrate_context(device_context& ctx) noexcept {
  try {
    device_peak p;
    {
      std::lock_guard<std::mutex> lock(ctx.mu);
      if (!ctx.peak.measured_note.empty()) return std::isfinite(ctx.peak.measured_bytes_per_s);  // done already
      ctx.peak.measured_note = "calibrating";
      ensure_spec_locked(ctx);
      p = ctx.peak;
    }
    setup_timer timed;
    const cudaError_t pending = cudaPeekAtLastError();
    cudaStream_t stream = nullptr;
    std::string copy_why, fma_why;
    double bw = 0, fl = 0;
    const cudaError_t e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) {
      bw = measure_copy(stream, p, copy_why);
      fl = measure_fma(stream, p, fma_why);
      cudaStreamDestroy(stream);
    } else {
      copy_why = fma_why = cuda_error_text(e);
    }
    forget_our_error(pending);
    std::lock_guard<std::mutex> lock(ctx.mu);
    ctx.peak.measured_bytes_per_s = bw > 0 ? bw : std::nan("");
    ctx.peak.measured_flops_per_s = fl > 0 ? fl : std::nan("");
    ctx.peak.measured_note = "device-to-device copy and FP32 FMA kernel, CUDA events, best of 5 and 3 runs";
    if (!copy_why.empty() || !fma_why.empty())
      ctx.peak.measured_note += " (failed: " + copy_why + (copy_why.empty() || fma_why.empty() ? "" : "; ") + fma_why + ")";
    return bw > 0 && fl > 0;
  } catch (...) {
    return false;
  }
}

#endif  // SCOPEPROF_WITH_CUDA

SCOPEPROF_API void add_device_peaks(raw_snapshot& raw) noexcept {
#if SCOPEPROF_WITH_CUDA
  device_registry& d = the_devices();
  if (!d.probed) return;
  for (const auto& c : d.devices) {
    if (!c || !c->ready.load(std::memory_order_acquire)) continue;
    try {
      std::lock_guard<std::mutex> lock(c->mu);
      ensure_spec_locked(*c);
      raw.peaks.push_back(c->peak);
    } catch (...) {
      // out of memory: this device's peaks are left out, and its rows show no percentage
    }
  }
#else
  (void)raw;
#endif
}

}  // namespace detail

SCOPEPROF_API bool calibrate_device(int device) noexcept {
#if SCOPEPROF_WITH_CUDA
  using namespace detail;
  initialise();
  probe_devices();
  if (g_device_timing.load(std::memory_order_acquire) != device_timing_on) {
    warn("calibrate_device: no device timing here (" + the_devices().off_reason + ")");
    return false;
  }
  const cudaError_t pending = cudaPeekAtLastError();
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) {
    forget_our_error(pending);
    return false;
  }
  if (device < 0) device = current;
  if (device != current && cudaSetDevice(device) != cudaSuccess) {
    forget_our_error(pending);
    warn("calibrate_device: device " + std::to_string(device) + " cannot be used");
    return false;
  }
  bool prepared = false;
  device_context* ctx = context_for(device, prepared);
  const bool ok = ctx != nullptr && calibrate_context(*ctx);
  if (device != current) cudaSetDevice(current);
  forget_our_error(pending);
  return ok;
#else
  (void)device;
  detail::warn("calibrate_device: this build has no device timing (SCOPEPROF_WITH_CUDA=0)");
  return false;
#endif
}

SCOPEPROF_NAMESPACE_END
SCOPEPROF_DETAIL_COLD_END
