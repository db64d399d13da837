// Shared helpers of the GPU tests and the device benchmark: a device check that leaves no CUDA error
// behind, and a kernel that runs for a known wall-clock time, measured by the GPU's own global timer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

namespace scopeprof_gpu {

/// The GPU's global nanosecond timer (%globaltimer).
__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Busy-waits for `ns` nanoseconds of %globaltimer time. With `out`, writes the start and end it saw, so
/// a test can compare the scope's device span with the kernel's own measurement.
__global__ void spin_kernel(unsigned long long ns, unsigned long long* out) {
  const unsigned long long start = global_timer_ns();
  unsigned long long now = start;
  while (now - start < ns) now = global_timer_ns();
  if (out != nullptr) {
    out[0] = start;
    out[1] = now;
  }
}

/// Launches one spin kernel (one thread) on `stream`.
inline cudaError_t spin(double us, cudaStream_t stream = nullptr, unsigned long long* out = nullptr) {
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(us * 1000.0), out);
  return cudaGetLastError();
}

/// True when a CUDA device is usable; otherwise `why` says what the runtime answered. The error that
/// cudaGetDeviceCount leaves behind (no driver, no device) is cleared, so later checks start clean.
inline bool device_available(std::string& why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  (void)cudaGetLastError();
  if (e != cudaSuccess) {
    why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    return false;
  }
  if (n <= 0) {
    why = "cudaGetDeviceCount reported 0 devices";
    return false;
  }
  why.clear();
  return true;
}

}  // namespace scopeprof_gpu
