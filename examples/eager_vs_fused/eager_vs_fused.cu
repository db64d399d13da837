// eager_vs_fused: a Linear layer followed by five eager elementwise kernels versus one fused kernel,
// timed per block by scopeprof (host time and device time side by side).
//
// The eager tail runs four unary ops and one binary op with a residual tensor: 11 full-tensor passes
// (4 x read+write, then 2 reads + 1 write). The fused kernel computes the same function in 3 passes.
// The Linear (a cuBLAS GEMM) is the same in both blocks, so fusion speeds the block up far less than it
// speeds the tail up: Amdahl's law, measured.
//
//   eager_vs_fused [--preset auto|t4|large|tiny] [--m M --k K --n N] [--iters N] [--warmup N]
//                  [--trace PATH | --no-trace] [--no-calibrate] [--only eager|fused]
//
// --only runs one variant under the scope names block, linear and tail, so that two runs compare:
//   SCOPEPROF_REPORT=eager.json eager_vs_fused --only eager; SCOPEPROF_REPORT=fused.json eager_vs_fused --only fused
//   scopeprof diff eager.json fused.json
#include <scopeprof.hpp>

#include "comparison.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// ---- kernels: grid-stride loops over float4, a scalar tail for sizes not divisible by 4 -------------

template <class Op>
__global__ void unary_kernel(const float* __restrict__ x, float* __restrict__ y, size_t n, Op op) {
  const size_t n4 = n / 4;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4; i += stride) {
    float4 v = reinterpret_cast<const float4*>(x)[i];
    v.x = op(v.x), v.y = op(v.y), v.z = op(v.z), v.w = op(v.w);
    reinterpret_cast<float4*>(y)[i] = v;
  }
  for (size_t i = n4 * 4 + blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) y[i] = op(x[i]);
}

__global__ void add_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ y, size_t n) {
  const size_t n4 = n / 4;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4; i += stride) {
    const float4 u = reinterpret_cast<const float4*>(a)[i];
    const float4 v = reinterpret_cast<const float4*>(b)[i];
    reinterpret_cast<float4*>(y)[i] = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
  }
  for (size_t i = n4 * 4 + blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) y[i] = a[i] + b[i];
}

struct relu_op { __device__ float operator()(float v) const { return fmaxf(v, 0.0f); } };
struct twice_op { __device__ float operator()(float v) const { return v * 2.0f; } };
struct plus_one_op { __device__ float operator()(float v) const { return v + 1.0f; } };
struct sqrt_op { __device__ float operator()(float v) const { return sqrtf(v); } };

__device__ __forceinline__ float tail_function(float x, float r) {
  // The same operations, in the same order, as the five eager kernels.
  float v = fmaxf(x, 0.0f);
  v = __fmul_rn(v, 2.0f);
  v = __fadd_rn(v, 1.0f);
  return __fadd_rn(sqrtf(v), r);
}

__global__ void fused_kernel(const float* __restrict__ x, const float* __restrict__ r, float* __restrict__ y, size_t n) {
  const size_t n4 = n / 4;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4; i += stride) {
    const float4 u = reinterpret_cast<const float4*>(x)[i];
    const float4 v = reinterpret_cast<const float4*>(r)[i];
    reinterpret_cast<float4*>(y)[i] =
        make_float4(tail_function(u.x, v.x), tail_function(u.y, v.y), tail_function(u.z, v.z), tail_function(u.w, v.w));
  }
  for (size_t i = n4 * 4 + blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    y[i] = tail_function(x[i], r[i]);
}

__global__ void fill_kernel(float* y, size_t n, unsigned seed, float scale) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
    h ^= h >> 13, h *= 0x5bd1e995u, h ^= h >> 15;
    y[i] = (static_cast<float>(h & 0xFFFFFF) / 16777216.0f - 0.5f) * scale;
  }
}

// ---- plumbing ------------------------------------------------------------------------------------------

#define CHECK_CUDA(call)                                                                              \
  do {                                                                                                \
    const cudaError_t e_ = (call);                                                                    \
    if (e_ != cudaSuccess) {                                                                          \
      std::fprintf(stderr, "eager_vs_fused: %s failed: %s\n", #call, cudaGetErrorString(e_));         \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)
#define CHECK_CUBLAS(call)                                                                            \
  do {                                                                                                \
    const cublasStatus_t s_ = (call);                                                                 \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                                \
      std::fprintf(stderr, "eager_vs_fused: %s failed: status %d\n", #call, static_cast<int>(s_));    \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)

int host_only(const char* reason) {
  std::printf("eager_vs_fused: no CUDA device here (%s).\n"
              "Running host-only: the scopes below still measure host time; every device column says n/a.\n"
              "Run this binary on a machine with an NVIDIA GPU (a Tesla T4, an H100/H200, ...) for the comparison.\n\n",
              reason);
  for (int i = 0; i < 3; ++i) {
    PROF_SCOPE("eager block");
    { PROF_SCOPE("eager linear"); }
    { PROF_SCOPE("eager tail"); }
  }
  scopeprof::collect().print(std::cout);
  return 0;
}

/// --only eager|fused: one variant's blocks under the names block, linear and tail, so that the runs of the
/// two variants compare scope by scope (`scopeprof diff eager.json fused.json`).
template <class Linear, class Tail>
void run_variant(const eager_vs_fused::options& opt, const Linear& linear, const Tail& tail,
                 const eager_vs_fused::block_work& work, double tail_bytes) {
  const auto block = [&] {
    PROF_SCOPE("block");
    {
      PROF_SCOPE_WORK("linear", work.linear_bytes, work.linear_flops);
      linear();
    }
    {
      PROF_SCOPE_WORK("tail", tail_bytes, work.tail_flops);
      tail();
    }
  };
  for (int i = 0; i < opt.warmup; ++i) block();
  CHECK_CUDA(cudaDeviceSynchronize());
  scopeprof::reset();
  for (int i = 0; i < opt.iters; ++i) {
    PROF_STEP();
    block();
  }
  PROF_STEP();
  const scopeprof::report rep = scopeprof::collect();
  std::printf("%s tail only, scopes block > linear, tail (compare two runs: SCOPEPROF_REPORT=A.json for each, then "
              "scopeprof diff A.json B.json)\n\n", opt.only.c_str());
  rep.print(std::cout);
  if (!opt.trace.empty()) {
    if (const scopeprof::write_result w = rep.write_chrome_trace(opt.trace); !w)
      std::fprintf(stderr, "eager_vs_fused: %s\n", w.message().c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const eager_vs_fused::options opt = eager_vs_fused::parse(argc, argv, "eager_vs_fused", false);
  int device_count = 0;
  const cudaError_t probe = cudaGetDeviceCount(&device_count);
  if (probe != cudaSuccess || device_count == 0) {
    (void)cudaGetLastError();
    return host_only(probe != cudaSuccess ? cudaGetErrorString(probe) : "no device");
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);

  // ---- sizes ------------------------------------------------------------------------------------------
  const double l2_bytes = static_cast<double>(prop.l2CacheSize);
  const eager_vs_fused::workload wl = eager_vs_fused::choose(opt, l2_bytes);
  const std::string& preset = wl.preset;
  const long m = wl.m, k = wl.k, n = wl.n;
  const size_t elems = wl.elems;
  const double tensor_bytes = wl.tensor_bytes;

  std::printf("eager_vs_fused on %s (sm_%d%d, %d SMs, L2 %.1f MB, %.1f GB), driver %d, runtime %d\n", prop.name,
              prop.major, prop.minor, prop.multiProcessorCount, l2_bytes / 1e6, prop.totalGlobalMem / 1e9, driver, runtime);
  std::printf("preset %s: Linear X[%ld x %ld] * W[%ld x %ld]^T -> Y[%ld x %ld] (float32), tensor %.1f MB = %.1fx L2; "
              "%d warm-up + %d timed iterations\n\n",
              preset.c_str(), m, k, n, k, m, n, tensor_bytes / 1e6, tensor_bytes / l2_bytes, opt.warmup, opt.iters);
  const eager_vs_fused::block_work work = eager_vs_fused::work_of(wl, false);

  // ---- buffers -----------------------------------------------------------------------------------------
  float *x, *w, *y, *res, *a, *b, *out_eager, *out_fused, *copy_dst;
  const size_t copy_bytes = std::max<size_t>(elems * 4, size_t{256} << 20);
  CHECK_CUDA(cudaMalloc(&x, sizeof(float) * static_cast<size_t>(m) * k));
  CHECK_CUDA(cudaMalloc(&w, sizeof(float) * static_cast<size_t>(n) * k));
  for (float** p : {&y, &res, &a, &b, &out_eager, &out_fused}) CHECK_CUDA(cudaMalloc(p, sizeof(float) * elems));
  CHECK_CUDA(cudaMalloc(&copy_dst, copy_bytes));
  float* copy_src = nullptr;
  CHECK_CUDA(cudaMalloc(&copy_src, copy_bytes));
  const int threads = 256;
  const int blocks = prop.multiProcessorCount * 8;
  fill_kernel<<<blocks, threads>>>(x, static_cast<size_t>(m) * k, 1u, 1.0f);
  fill_kernel<<<blocks, threads>>>(w, static_cast<size_t>(n) * k, 2u, 2.0f / std::sqrt(static_cast<float>(k)));
  fill_kernel<<<blocks, threads>>>(res, elems, 3u, 1.0f);
  fill_kernel<<<blocks, threads>>>(copy_src, copy_bytes / 4, 4u, 1.0f);
  CHECK_CUDA(cudaGetLastError());
  cublasHandle_t blas;
  CHECK_CUBLAS(cublasCreate(&blas));
  CHECK_CUBLAS(cublasSetStream(blas, nullptr));
  CHECK_CUBLAS(cublasSetMathMode(blas, CUBLAS_PEDANTIC_MATH));  // true fp32, like the seed's run

  const float one = 1.0f, zero = 0.0f;
  const auto linear = [&] {
    // Row-major Y = X * W^T (as torch::nn::Linear without bias), i.e. column-major Y^T = W * X^T.
    CHECK_CUBLAS(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                             &one, w, static_cast<int>(k), x, static_cast<int>(k), &zero, y, static_cast<int>(n)));
  };
  const auto eager_tail = [&] {
    unary_kernel<<<blocks, threads>>>(y, a, elems, relu_op{});
    unary_kernel<<<blocks, threads>>>(a, b, elems, twice_op{});
    unary_kernel<<<blocks, threads>>>(b, a, elems, plus_one_op{});
    unary_kernel<<<blocks, threads>>>(a, b, elems, sqrt_op{});
    add_kernel<<<blocks, threads>>>(b, res, out_eager, elems);
  };
  const auto fused_tail = [&] { fused_kernel<<<blocks, threads>>>(y, res, out_fused, elems); };

  // ---- correctness -------------------------------------------------------------------------------------
  linear();
  eager_tail();
  fused_tail();
  CHECK_CUDA(cudaDeviceSynchronize());
  {
    std::vector<float> he(elems), hf(elems);
    CHECK_CUDA(cudaMemcpy(he.data(), out_eager, elems * 4, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(hf.data(), out_fused, elems * 4, cudaMemcpyDeviceToHost));
    double max_diff = 0, max_abs = 0;
    for (size_t i = 0; i < elems; ++i) {
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(he[i] - hf[i])));
      max_abs = std::max(max_abs, static_cast<double>(std::fabs(he[i])));
    }
    std::printf("check: max |eager - fused| = %.3g (max |out| = %.3g)\n", max_diff, max_abs);
    if (!(max_diff <= 1e-6 * std::max(1.0, max_abs))) {
      std::fprintf(stderr, "eager_vs_fused: FAILED: the fused kernel does not compute what the eager tail computes\n");
      return 1;
    }
  }

  const auto release = [&] {
    cublasDestroy(blas);
    for (float* p : {x, w, y, res, a, b, out_eager, out_fused, copy_dst, copy_src}) cudaFree(p);
  };
  if (!opt.only.empty()) {
    if (opt.only == "eager") run_variant(opt, linear, eager_tail, work, work.eager_tail_bytes);
    else run_variant(opt, linear, fused_tail, work, work.fused_tail_bytes);
    release();
    return 0;
  }

  // ---- timed runs, instrumented: a scope around each block and around its two parts ----------------------
  // Each part declares its work (eager_vs_fused::block_work): the report turns it into GB/s and TFLOP/s.
  const auto eager_block = [&] {
    PROF_SCOPE("eager block");
    {
      PROF_SCOPE_WORK("eager linear", work.linear_bytes, work.linear_flops);
      linear();
    }
    {
      PROF_SCOPE_WORK("eager tail", work.eager_tail_bytes, work.tail_flops);
      eager_tail();
    }
  };
  const auto fused_block = [&] {
    PROF_SCOPE("fused block");
    {
      PROF_SCOPE_WORK("fused linear", work.linear_bytes, work.linear_flops);
      linear();
    }
    {
      PROF_SCOPE_WORK("fused tail", work.fused_tail_bytes, work.tail_flops);
      fused_tail();
    }
  };
  // The same blocks without scopeprof, each timed by one raw event pair, interleaved with the instrumented
  // ones (same GPU clocks and temperature for both), to show what the instrumentation costs the GPU.
  std::vector<cudaEvent_t> ev(4 * static_cast<size_t>(opt.iters));
  for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  const auto raw_blocks = [&](cudaEvent_t* e) {
    CHECK_CUDA(cudaEventRecord(e[0], nullptr));
    linear();
    eager_tail();
    CHECK_CUDA(cudaEventRecord(e[1], nullptr));
    CHECK_CUDA(cudaEventRecord(e[2], nullptr));
    linear();
    fused_tail();
    CHECK_CUDA(cudaEventRecord(e[3], nullptr));
  };
  for (int i = 0; i < opt.warmup; ++i) eager_block(), fused_block(), raw_blocks(ev.data());
  CHECK_CUDA(cudaDeviceSynchronize());
  scopeprof::reset();
  for (int i = 0; i < opt.iters; ++i) {
    PROF_STEP();  // one step per iteration: ProfilerStep#N in the trace, host time per step in the report
    eager_block();
    fused_block();
    {
      PROF_SCOPE_WORK("d2d copy", 2.0 * static_cast<double>(copy_bytes), 0);  // read + write
      CHECK_CUDA(cudaMemcpyAsync(copy_dst, copy_src, copy_bytes, cudaMemcpyDeviceToDevice, nullptr));
    }
    raw_blocks(&ev[4 * static_cast<size_t>(i)]);
  }
  PROF_STEP();  // completes the last step
  // The device's measured peaks (a copy and an FMA kernel), beside the spec ones: once the timed work has
  // finished (calibration runs beside whatever the GPU still runs, and would slow the last iterations), and
  // before collect(), which reads them. Calibrating before the timed runs slowed the t4-size tails (data in
  // L2) by about 1% on an H100 (docs/gpu-tests.md), so it stays out of their way.
  if (opt.only.empty() && opt.calibrate) {
    CHECK_CUDA(cudaDeviceSynchronize());
    scopeprof::calibrate_device();
  }
  const scopeprof::report rep = scopeprof::collect();
  std::vector<double> raw_eager, raw_fused;
  CHECK_CUDA(cudaDeviceSynchronize());  // (collect() waited for the scopes' events, not for the raw ones)
  for (int i = 0; i < opt.iters; ++i) {
    const cudaEvent_t* e = &ev[4 * static_cast<size_t>(i)];
    float t0 = 0, t1 = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t0, e[0], e[1]));
    CHECK_CUDA(cudaEventElapsedTime(&t1, e[2], e[3]));
    raw_eager.push_back(t0);
    raw_fused.push_back(t1);
  }
  for (auto& e : ev) cudaEventDestroy(e);

  // ---- what the run says ---------------------------------------------------------------------------------
  eager_vs_fused::print_comparison(rep, wl, l2_bytes, static_cast<double>(copy_bytes), raw_eager, raw_fused, opt.iters,
                                   {"Linear (cuBLAS GEMM)", "the GEMM", ""}, opt.trace);
  release();
  return 0;
}
