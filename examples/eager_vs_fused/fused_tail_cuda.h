// The fused elementwise tail of eager_vs_fused_torch as a plain CUDA launcher: no torch types, so the
// kernel's translation unit (fused_tail_cuda.cu) is compiled by nvcc without any LibTorch header.
//
//   y[i] = sqrt(2 * relu(x[i]) + 1) + r[i]   (the same operations, in the same order, as the eager tail)
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

/// @brief Launches the fused tail over n floats on `stream` (nothing when n is 0). float4 loads and stores
/// when all three pointers are 16-byte aligned, a scalar kernel otherwise. Returns the launch error
/// (cudaGetLastError after the launch); errors of the running kernel surface at the next synchronisation.
cudaError_t launch_fused_tail(const float* x, const float* r, float* y, std::size_t n, cudaStream_t stream);
