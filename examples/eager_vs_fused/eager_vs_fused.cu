// eager_vs_fused: a Linear layer followed by five eager elementwise kernels versus one fused kernel,
// timed per block by scopeprof (host time and device time side by side).
//
// The eager tail runs four unary ops and one binary op with a residual tensor: 11 full-tensor passes
// (4 x read+write, then 2 reads + 1 write). The fused kernel computes the same function in 3 passes.
// The Linear (a cuBLAS GEMM) is the same in both blocks, so fusion speeds the block up far less than it
// speeds the tail up: Amdahl's law, measured.
//
//   eager_vs_fused [--preset auto|t4|large|tiny] [--m M --k K --n N] [--iters N] [--warmup N]
//                  [--trace PATH | --no-trace]
#include <scopeprof.hpp>

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

struct options {
  std::string preset = "auto";
  long m = 0, k = 0, n = 0;
  int iters = 50;
  int warmup = 5;
  std::string trace = "eager_vs_fused.trace.json";
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "eager_vs_fused: %s\n"
               "usage: eager_vs_fused [--preset auto|t4|large|tiny] [--m M --k K --n N] [--iters N] [--warmup N]\n"
               "                      [--trace PATH | --no-trace]\n",
               why);
  std::exit(2);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    const auto number = [&](long lo) {
      const std::string v = value();
      char* end = nullptr;
      const long x = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || x < lo) usage(("bad value for " + a + ": " + v).c_str());
      return x;
    };
    if (a == "--preset") o.preset = value();
    else if (a == "--m") o.m = number(1);
    else if (a == "--k") o.k = number(1);
    else if (a == "--n") o.n = number(1);
    else if (a == "--iters") o.iters = static_cast<int>(number(1));
    else if (a == "--warmup") o.warmup = static_cast<int>(number(0));
    else if (a == "--trace") o.trace = value();
    else if (a == "--no-trace") o.trace.clear();
    else if (a == "--help" || a == "-h") usage("help");
    else usage(("unknown argument " + a).c_str());
  }
  if (o.preset != "auto" && o.preset != "t4" && o.preset != "large" && o.preset != "tiny")
    usage(("unknown preset " + o.preset).c_str());
  return o;
}

double device_median_ms(const scopeprof::report& r, const char* name) {
  const scopeprof::flat_row* f = r.find(name);
  return f && f->device_calls ? f->device.median / 1e6 : std::nan("");
}
double host_median_ms(const scopeprof::report& r, const char* name) {
  const scopeprof::flat_row* f = r.find(name);
  return f ? f->host.median / 1e6 : std::nan("");
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

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

}  // namespace

int main(int argc, char** argv) {
  const options opt = parse(argc, argv);
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

  // ---- sizes -------------------------------------------------------------------------------------------
  const double l2_bytes = static_cast<double>(prop.l2CacheSize);
  std::string preset = opt.preset;
  long m = 8192, k = 2048, n = 1024;  // the seed's workload (t4)
  if (preset == "auto") preset = (static_cast<double>(m) * n * 4 >= 8 * l2_bytes) ? "t4" : "large";
  if (preset == "large") {
    // Every tensor at least 8x the L2 cache, so the eager intermediates must go through DRAM.
    const double need = 8 * l2_bytes / (static_cast<double>(n) * 4);
    m = 8192;
    while (m < need) m *= 2;
  } else if (preset == "tiny") {
    m = 1024, k = 256, n = 256;
  }
  if (opt.m) m = opt.m;
  if (opt.k) k = opt.k;
  if (opt.n) n = opt.n;
  const size_t elems = static_cast<size_t>(m) * static_cast<size_t>(n);
  const double tensor_bytes = static_cast<double>(elems) * 4;

  std::printf("eager_vs_fused on %s (sm_%d%d, %d SMs, L2 %.1f MB, %.1f GB), driver %d, runtime %d\n", prop.name,
              prop.major, prop.minor, prop.multiProcessorCount, l2_bytes / 1e6, prop.totalGlobalMem / 1e9, driver, runtime);
  std::printf("preset %s: Linear X[%ld x %ld] * W[%ld x %ld]^T -> Y[%ld x %ld] (float32), tensor %.1f MB = %.1fx L2; "
              "%d warm-up + %d timed iterations\n\n",
              preset.c_str(), m, k, n, k, m, n, tensor_bytes / 1e6, tensor_bytes / l2_bytes, opt.warmup, opt.iters);

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

  // ---- timed runs, instrumented: a scope around each block and around its two parts ----------------------
  const auto eager_block = [&] {
    PROF_SCOPE("eager block");
    {
      PROF_SCOPE("eager linear");
      linear();
    }
    {
      PROF_SCOPE("eager tail");
      eager_tail();
    }
  };
  const auto fused_block = [&] {
    PROF_SCOPE("fused block");
    {
      PROF_SCOPE("fused linear");
      linear();
    }
    {
      PROF_SCOPE("fused tail");
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
    eager_block();
    fused_block();
    {
      PROF_SCOPE("d2d copy");
      CHECK_CUDA(cudaMemcpyAsync(copy_dst, copy_src, copy_bytes, cudaMemcpyDeviceToDevice, nullptr));
    }
    raw_blocks(&ev[4 * static_cast<size_t>(i)]);
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
  const double eb = device_median_ms(rep, "eager block"), fb = device_median_ms(rep, "fused block");
  const double el = device_median_ms(rep, "eager linear"), fl = device_median_ms(rep, "fused linear");
  const double et = device_median_ms(rep, "eager tail"), ft = device_median_ms(rep, "fused tail");
  const double cp = device_median_ms(rep, "d2d copy");
  const double tail_ratio = et / ft, block_ratio = eb / fb;
  const double byte_ratio = 11.0 / 3.0;
  const double tail_share = et / eb, gemm_share = el / eb;
  const double amdahl = 1.0 / ((1.0 - tail_share) + tail_share / tail_ratio);
  const double copy_gbs = 2.0 * static_cast<double>(copy_bytes) / (cp * 1e-3) / 1e9;
  const double eager_gbs = 11.0 * tensor_bytes / (et * 1e-3) / 1e9;
  const double fused_gbs = 3.0 * tensor_bytes / (ft * 1e-3) / 1e9;
  const double raw_eb = median(raw_eager), raw_fb = median(raw_fused);

  std::printf("\nDevice time per block, medians of %d iterations (CUDA events via scopeprof):\n", opt.iters);
  std::printf("  %-34s %10s %10s %8s\n", "", "eager", "fused", "ratio");
  std::printf("  %-34s %7.4f ms %7.4f ms %7.3fx   (bytes moved 11:3 = %.3fx)\n", "elementwise tail", et, ft, tail_ratio, byte_ratio);
  std::printf("  %-34s %7.4f ms %7.4f ms %7.3fx\n", "Linear (cuBLAS GEMM)", el, fl, el / fl);
  std::printf("  %-34s %7.4f ms %7.4f ms %7.3fx\n", "complete block", eb, fb, block_ratio);
  std::printf("\nWhy the block gains so much less than the tail (Amdahl's law):\n");
  std::printf("  the GEMM is %.1f%% of the eager block and the tail %.1f%%; a %.3fx faster tail predicts a\n"
              "  %.4fx faster block; measured %.4fx.\n", 100 * gemm_share, 100 * tail_share, tail_ratio, amdahl, block_ratio);
  std::printf("\nBandwidth (bytes each tail moves / its time; the copy counts read + write):\n");
  std::printf("  device-to-device copy  %8.0f GB/s   (%.0f MB, the ceiling to compare with)\n", copy_gbs, copy_bytes / 1e6);
  std::printf("  eager tail             %8.0f GB/s   = %5.1f%% of copy\n", eager_gbs, 100 * eager_gbs / copy_gbs);
  std::printf("  fused tail             %8.0f GB/s   = %5.1f%% of copy\n", fused_gbs, 100 * fused_gbs / copy_gbs);
  std::printf("  tail ratio / byte ratio = %.1f%%\n", 100 * tail_ratio / byte_ratio);
  if (tensor_bytes < l2_bytes)
    std::printf("  note: a tensor (%.1f MB) fits in this GPU's %.1f MB L2 cache, so the eager intermediates need not\n"
                "  reach DRAM: the 11:3 byte ratio need not hold and the bandwidths above may exceed DRAM's.\n"
                "  Use --preset large for tensors well above L2.%s\n",
                tensor_bytes / 1e6, l2_bytes / 1e6,
                tail_ratio < 0.95 * byte_ratio ? " Here the tail ratio falls short of 11:3 for that reason." : "");
  std::printf("\nHost time (what an NVTX range or a CPU timer sees) beside device time, medians:\n");
  std::printf("  %-14s host %9.4f ms   device %9.4f ms\n", "eager block", host_median_ms(rep, "eager block"), eb);
  std::printf("  %-14s host %9.4f ms   device %9.4f ms\n", "eager tail", host_median_ms(rep, "eager tail"), et);
  std::printf("  %-14s host %9.4f ms   device %9.4f ms\n", "fused tail", host_median_ms(rep, "fused tail"), ft);
  std::printf("  The host range only covers launching asynchronous work (the CPU returns before the GPU finishes),\n"
              "  so it measures launch cost and queueing, not the kernels: it is not a device time.\n");
  std::printf("\nInstrumentation cost on the device: block time with scopeprof (3 scopes) vs one raw event pair,\n"
              "  no scopeprof, the two runs interleaved:\n");
  std::printf("  eager block %.4f ms vs %.4f ms (%+.2f%%); fused block %.4f ms vs %.4f ms (%+.2f%%)\n", eb, raw_eb,
              100 * (eb / raw_eb - 1), fb, raw_fb, 100 * (fb / raw_fb - 1));
  std::printf("\nReference, NOT this run: the seed's Tesla T4 (driver 580.173.02, CUDA 12.6, M=8192 K=2048 N=1024):\n"
              "  tail 1.5118 ms vs 0.4104 ms (3.68x); blocks 7.7794 ms vs 6.6554 ms (1.1689x).\n\n");

  rep.print(std::cout);
  if (!opt.trace.empty()) {
    const scopeprof::write_result wr = rep.write_chrome_trace(opt.trace);
    if (wr) std::printf("\nChrome trace written to %s (open it in ui.perfetto.dev)\n", opt.trace.c_str());
    else std::fprintf(stderr, "%s\n", wr.message().c_str());
  }
  cublasDestroy(blas);
  for (float* p : {x, w, y, res, a, b, out_eager, out_fused, copy_dst, copy_src}) cudaFree(p);
  return 0;
}
