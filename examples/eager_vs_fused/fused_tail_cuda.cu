// The fused elementwise tail of eager_vs_fused_torch: one kernel, 3 full-tensor passes (read x, read the
// residual, write y), where the eager ATen ops take five kernels and 11 passes. No LibTorch header here:
// eager_vs_fused_torch.cpp registers this launcher as the CUDA kernel of scopeprof_example::fused_tail.
#include "fused_tail_cuda.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace {

__device__ __forceinline__ float tail_function(float x, float r) {
  // The eager ops one by one, each rounded as its own kernel rounds it (no contraction into an FMA):
  // relu (clamp_min 0), mul 2, add 1, sqrt, add residual.
  float v = fmaxf(x, 0.0f);
  v = __fmul_rn(v, 2.0f);
  v = __fadd_rn(v, 1.0f);
  return __fadd_rn(sqrtf(v), r);
}

// Grid-stride loop over float4, then a scalar tail for sizes not divisible by 4 (as in eager_vs_fused.cu).
__global__ void fused_tail_kernel(const float* __restrict__ x, const float* __restrict__ r, float* __restrict__ y,
                                  std::size_t n) {
  const std::size_t n4 = n / 4;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  for (std::size_t i = first; i < n4; i += stride) {
    const float4 u = reinterpret_cast<const float4*>(x)[i];
    const float4 v = reinterpret_cast<const float4*>(r)[i];
    reinterpret_cast<float4*>(y)[i] =
        make_float4(tail_function(u.x, v.x), tail_function(u.y, v.y), tail_function(u.z, v.z), tail_function(u.w, v.w));
  }
  for (std::size_t i = n4 * 4 + first; i < n; i += stride) y[i] = tail_function(x[i], r[i]);
}

// Pointers not 16-byte aligned (views with a storage offset): one float per iteration.
__global__ void fused_tail_scalar_kernel(const float* __restrict__ x, const float* __restrict__ r,
                                         float* __restrict__ y, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    y[i] = tail_function(x[i], r[i]);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace

cudaError_t launch_fused_tail(const float* x, const float* r, float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  int device = 0, sms = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e != cudaSuccess) return e;
  e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (e != cudaSuccess) return e;
  // As eager_vs_fused.cu: 256 threads, 8 blocks per SM, fewer when the tensor is too small to fill them.
  const int threads = 256;
  const bool vectorised = aligned16(x) && aligned16(r) && aligned16(y);
  const std::size_t items = vectorised ? (n + 3) / 4 : n;
  const std::size_t wanted = (items + threads - 1) / threads;
  const int blocks = static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(wanted, static_cast<std::size_t>(sms) * 8)));
  if (vectorised)
    fused_tail_kernel<<<blocks, threads, 0, stream>>>(x, r, y, n);
  else
    fused_tail_scalar_kernel<<<blocks, threads, 0, stream>>>(x, r, y, n);
  return cudaGetLastError();
}
