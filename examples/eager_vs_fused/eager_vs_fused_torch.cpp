// eager_vs_fused_torch: the LibTorch variant of eager_vs_fused. A torch::nn::Linear followed by five eager
// ATen elementwise ops versus one fused custom operator, timed per block by scopeprof (host time and device
// time side by side), then profiled by a standalone torch profiler session.
//
// The eager tail runs four unary ops and one binary op with a residual tensor: 11 full-tensor passes
// (4 x read+write, then 2 reads + 1 write). The fused operator, scopeprof_example::fused_tail (registered
// with TORCH_LIBRARY, so the torch profiler names it), computes the same function in 3 passes. The Linear
// is the same in both blocks, so fusion speeds the block up far less than it speeds the tail up: Amdahl's
// law, measured.
//
// Without a GPU (a CPU-only LibTorch, or no device) it says so, runs the same blocks on the CPU at a small
// size, checks the CPU kernel of the custom operator against the eager ops, and exits 0.
//
//   eager_vs_fused_torch [--preset auto|t4|large|tiny] [--m M --k K --n N] [--iters N] [--warmup N]
//                        [--profile-iters N] [--trace PATH | --no-trace] [--no-calibrate] [--torch-trace-dir DIR]
#include <scopeprof.hpp>
#include <scopeprof/torch_session.hpp>

#include "comparison.hpp"

#include <ATen/Context.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>
#include <torch/library.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

// The CUDA part: a LibTorch with CUDA (SCOPEPROF_TORCH_CUDA, from the scopeprof target) and the fused
// kernel compiled by nvcc (EAGER_VS_FUSED_CUDA_KERNEL, from this example's CMakeLists).
#ifndef SCOPEPROF_TORCH_CUDA
#define SCOPEPROF_TORCH_CUDA 0
#endif
#ifndef EAGER_VS_FUSED_CUDA_KERNEL
#define EAGER_VS_FUSED_CUDA_KERNEL 0
#endif
#define EAGER_VS_FUSED_GPU (SCOPEPROF_TORCH_CUDA && SCOPEPROF_WITH_CUDA && EAGER_VS_FUSED_CUDA_KERNEL)
#if EAGER_VS_FUSED_GPU
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "fused_tail_cuda.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

// ---- the custom operator: scopeprof_example::fused_tail(x, residual) = sqrt(2 * relu(x) + 1) + residual ----

namespace {

void check_fused_tail_args(const at::Tensor& x, const at::Tensor& residual, c10::DeviceType device) {
  TORCH_CHECK(x.device().type() == device && residual.device() == x.device(),
              "scopeprof_example::fused_tail: this kernel runs on ", c10::DeviceTypeName(device),
              " and wants both tensors on one device; got x on ", x.device(), ", residual on ", residual.device());
  TORCH_CHECK(x.scalar_type() == at::kFloat && residual.scalar_type() == at::kFloat,
              "scopeprof_example::fused_tail: expects float32 tensors; got x ", x.scalar_type(), ", residual ",
              residual.scalar_type());
  TORCH_CHECK(x.sizes() == residual.sizes(), "scopeprof_example::fused_tail: x and residual must have the same shape; got ",
              x.sizes(), " and ", residual.sizes());
  TORCH_CHECK(x.is_contiguous() && residual.is_contiguous(),
              "scopeprof_example::fused_tail: expects contiguous tensors (call .contiguous() first)");
}

// The CPU kernel: a plain loop, the eager ops in the same order. (An FMA contraction of 2v + 1 would not
// change the result: 2v is exact.)
at::Tensor fused_tail_cpu(const at::Tensor& x, const at::Tensor& residual) {
  check_fused_tail_args(x, residual, c10::DeviceType::CPU);
  at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  const float* px = x.data_ptr<float>();
  const float* pr = residual.data_ptr<float>();
  float* py = y.data_ptr<float>();
  const std::int64_t n = x.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    float v = std::isnan(px[i]) ? px[i] : std::max(px[i], 0.0f);  // relu (clamp_min 0): a NaN stays NaN, as in ATen
    v = v * 2.0f;
    v = v + 1.0f;
    py[i] = std::sqrt(v) + pr[i];
  }
  return y;
}

#if EAGER_VS_FUSED_GPU
// The CUDA kernel: launched on torch's current stream of the tensors' device.
at::Tensor fused_tail_cuda(const at::Tensor& x, const at::Tensor& residual) {
  check_fused_tail_args(x, residual, c10::DeviceType::CUDA);
  const c10::cuda::CUDAGuard device_guard(x.device());
  at::Tensor y = at::empty_like(x, at::MemoryFormat::Contiguous);
  const cudaError_t e = launch_fused_tail(x.data_ptr<float>(), residual.data_ptr<float>(), y.data_ptr<float>(),
                                          static_cast<std::size_t>(x.numel()),
                                          c10::cuda::getCurrentCUDAStream(x.device().index()).stream());
  TORCH_CHECK(e == cudaSuccess, "scopeprof_example::fused_tail: kernel launch failed: ", cudaGetErrorString(e));
  return y;
}
#endif

}  // namespace

TORCH_LIBRARY(scopeprof_example, m) { m.def("fused_tail(Tensor x, Tensor residual) -> Tensor"); }
TORCH_LIBRARY_IMPL(scopeprof_example, CPU, m) { m.impl("fused_tail", TORCH_FN(fused_tail_cpu)); }
#if EAGER_VS_FUSED_GPU
TORCH_LIBRARY_IMPL(scopeprof_example, CUDA, m) { m.impl("fused_tail", TORCH_FN(fused_tail_cuda)); }
#endif

namespace {

// Through the dispatcher, like any ATen op: the profiler records it as scopeprof_example::fused_tail.
at::Tensor fused_tail(const at::Tensor& x, const at::Tensor& residual) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("scopeprof_example::fused_tail", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(x, residual);
}

// Five ATen kernels, 11 passes: relu, x2, +1, sqrt (read + write each), + residual (2 reads + 1 write).
at::Tensor eager_tail(const at::Tensor& y, const at::Tensor& residual) {
  return torch::relu(y).mul(2.0).add(1.0).sqrt().add(residual);
}

// ---- plumbing ------------------------------------------------------------------------------------------

using eager_vs_fused::median;
using eager_vs_fused::options;

std::string trace_path(const options& o, const char* file) {
  std::string dir = o.torch_trace_dir;
  if (dir.back() != '/') dir += '/';
  return dir + file;
}

// Eager and fused results on the same Linear output: max |eager - fused|, and a loud failure when they differ.
bool check_equal(const at::Tensor& eager, const at::Tensor& fused) {
  if (eager.sizes() != fused.sizes()) {
    std::fprintf(stderr, "eager_vs_fused_torch: FAILED: the fused operator returned another shape than the eager tail\n");
    return false;
  }
  const double max_diff = (eager - fused).abs().max().item<double>();
  const double max_abs = eager.abs().max().item<double>();
  std::printf("check: max |eager - fused| = %.3g (max |out| = %.3g)\n", max_diff, max_abs);
  if (!(max_diff <= 1e-6 * std::max(1.0, max_abs))) {
    std::fprintf(stderr,
                 "eager_vs_fused_torch: FAILED: the fused operator does not compute what the eager tail computes\n");
    return false;
  }
  return true;
}

// ---- the torch profiler part -----------------------------------------------------------------------------

// The elementwise tail's device work in a session, per iteration: the kernels (copies, memsets) whose
// launching host event (their linked correlation id) is an operator or annotation that started inside the
// tail's user annotation, on the same thread. Kineto links each kernel to the innermost operator open at its
// launch (aten::clamp_min inside aten::relu, scopeprof_example::fused_tail), so the launcher is nested in
// the annotation, not necessarily its child.
struct tail_figures {
  bool found = false;
  double kernel_ms = 0;        // summed kernel durations per iteration
  double kernels = 0;          // kernels per iteration
  double span_ms = std::nan("");  // median gpu_user_annotation span of the tail
  bool by_span = false;        // found inside the GPU annotation spans, not through correlation ids
};

tail_figures tail_from_events(const std::vector<scopeprof::torch_event>& events, const std::string& tail, int iters) {
  using kind = scopeprof::torch_event_kind;
  tail_figures f;
  std::vector<const scopeprof::torch_event*> annotations;
  std::vector<double> spans;
  for (const auto& e : events) {
    if (e.kind == kind::user_annotation && !e.on_device && e.name == tail) annotations.push_back(&e);
    if (e.kind == kind::gpu_user_annotation && e.name == tail) spans.push_back(static_cast<double>(e.duration_ns) / 1e6);
  }
  f.span_ms = median(spans);
  std::unordered_set<std::uint64_t> launchers;
  for (const auto& e : events) {
    if (e.on_device || e.correlation == 0 || (e.kind != kind::op && e.kind != kind::user_annotation)) continue;
    for (const scopeprof::torch_event* a : annotations)
      if (a->thread == e.thread && e.start_ns >= a->start_ns && e.start_ns <= a->start_ns + a->duration_ns) {
        launchers.insert(e.correlation);
        break;
      }
  }
  std::int64_t sum_ns = 0, count = 0;
  for (const auto& e : events)
    if (scopeprof::is_device_work(e.kind) && e.linked_correlation != 0 && launchers.count(e.linked_correlation)) {
      sum_ns += e.duration_ns;
      ++count;
    }
  if (count == 0) {
    // No links (another LibTorch may not fill them): the device work inside the tail's GPU annotation spans.
    for (const auto& g : events) {
      if (g.kind != kind::gpu_user_annotation || g.name != tail) continue;
      for (const auto& e : events)
        if (scopeprof::is_device_work(e.kind) && e.start_ns >= g.start_ns &&
            e.start_ns + e.duration_ns <= g.start_ns + g.duration_ns) {
          sum_ns += e.duration_ns;
          ++count;
        }
    }
    f.by_span = true;
  }
  f.found = count > 0;
  f.kernel_ms = static_cast<double>(sum_ns) / 1e6 / iters;
  f.kernels = static_cast<double>(count) / iters;
  return f;
}

struct session_outcome {
  bool recorded = false;
  bool cuda_evidence = false;  // CUDA activity arrived (figures from it can be printed)
  tail_figures tail;
};

// One standalone torch profiler session around `iters` blocks: its Chrome trace and its key-averages table.
template <class Block>
session_outcome profile_blocks(const char* label, Block&& block, int iters, bool cuda, const std::string& path,
                               const std::string& tail_name) {
  session_outcome out;
  std::printf("\n---- torch profiler session: %d %s block%s (CPU activity%s) ----\n", iters, label, iters == 1 ? "" : "s",
              cuda ? " and CUDA activity" : " only");
  std::fflush(stdout);
#if EAGER_VS_FUSED_GPU
  if (cuda) torch::cuda::synchronize();  // the session begins with an idle GPU
#endif
  scopeprof::torch_profile session(scopeprof::torch_profile_options{cuda, false});
  if (!session.running()) {
    std::printf("torch profiler session not started: %s\n", session.error().c_str());
    return out;
  }
  for (int i = 0; i < iters; ++i) block();
#if EAGER_VS_FUSED_GPU
  if (cuda) torch::cuda::synchronize();  // every kernel ends inside the session
#endif
  scopeprof::torch_profile_result result = session.stop();
  if (!result.error().empty()) {
    std::printf("torch profiler session recorded nothing: %s\n", result.error().c_str());
    return out;
  }
  out.recorded = true;
  const scopeprof::write_result w = result.save_chrome_trace(path);
  if (w) std::printf("torch trace written to %s (open it in ui.perfetto.dev)\n", path.c_str());
  else std::printf("%s\n", w.message().c_str());
  std::cout << "\n" << result.table();
  std::cout.flush();
  out.cuda_evidence = cuda && result.cuda().requested && result.cuda().device_events && !result.cuda().missing();
  if (out.cuda_evidence) out.tail = tail_from_events(result.events(), tail_name, iters);
  return out;
}

// The two blocks, instrumented: a scope around each block and around its two parts. A scope that names no
// stream is device-timed on torch's current CUDA stream, where these ops run (host time only on the CPU).
// Each part declares its work (eager_vs_fused::block_work): the report turns it into GB/s and TFLOP/s.
struct blocks {
  torch::nn::Linear& linear;
  const at::Tensor& x;
  const at::Tensor& residual;
  eager_vs_fused::block_work work;
  at::Tensor out;
  void eager() {
    PROF_SCOPE("eager block");
    at::Tensor y;
    {
      PROF_SCOPE_WORK("eager linear", work.linear_bytes, work.linear_flops);
      y = linear(x);
    }
    {
      PROF_SCOPE_WORK("eager tail", work.eager_tail_bytes, work.tail_flops);
      out = eager_tail(y, residual);
    }
  }
  void fused() {
    PROF_SCOPE("fused block");
    at::Tensor y;
    {
      PROF_SCOPE_WORK("fused linear", work.linear_bytes, work.linear_flops);
      y = linear(x);
    }
    {
      PROF_SCOPE_WORK("fused tail", work.fused_tail_bytes, work.tail_flops);
      out = fused_tail(y, residual);
    }
  }
};

// ---- no GPU: the same blocks on the CPU ----------------------------------------------------------------------

int host_only(const options& opt, const std::string& reason) {
  std::printf("eager_vs_fused_torch: no CUDA device here (%s).\n"
              "Running host-only on the CPU: the scopes below still measure host time; every device column says n/a.\n"
              "Run this binary on a machine with an NVIDIA GPU and a CUDA LibTorch for the comparison.\n\n",
              reason.c_str());
  const long m = opt.m ? opt.m : 256, k = opt.k ? opt.k : 128, n = opt.n ? opt.n : 64;
  std::printf("LibTorch %s, CPU: Linear X[%ld x %ld] -> Y[%ld x %ld] (torch::nn::Linear(%ld, %ld), with bias), "
              "float32; %d warm-up + %d timed iterations\n\n",
              TORCH_VERSION, m, k, m, n, k, n, opt.warmup, opt.iters);

  torch::manual_seed(0);
  torch::nn::Linear linear(torch::nn::LinearOptions(k, n));
  c10::InferenceMode inference;
  const at::Tensor x = torch::rand({m, k}) - 0.5;
  const at::Tensor residual = torch::rand({m, n}) - 0.5;
  {
    const at::Tensor y = linear(x);
    if (!check_equal(eager_tail(y, residual), fused_tail(y, residual))) return 1;
  }

  eager_vs_fused::workload cpu_wl;  // the blocks declare their work here too: rates over host time
  cpu_wl.m = m, cpu_wl.k = k, cpu_wl.n = n;
  cpu_wl.elems = static_cast<std::size_t>(m * n);
  cpu_wl.tensor_bytes = 4.0 * static_cast<double>(cpu_wl.elems);
  blocks b{linear, x, residual, eager_vs_fused::work_of(cpu_wl, true), {}};
  const auto eager_block = [&] { b.eager(); };
  const auto fused_block = [&] { b.fused(); };
  for (int i = 0; i < opt.warmup; ++i) eager_block(), fused_block();
  scopeprof::reset();
  for (int i = 0; i < opt.iters; ++i) eager_block(), fused_block();
  const scopeprof::report rep = scopeprof::collect();
  std::printf("\nOn the CPU the fused operator is a plain scalar loop (a reference for the check above), while ATen's\n"
              "elementwise kernels are vectorised: these host times are not the GPU comparison.\n\n");
  rep.print(std::cout);
  if (!opt.trace.empty()) {
    const scopeprof::write_result wr = rep.write_chrome_trace(opt.trace);
    if (wr) std::printf("\nChrome trace written to %s (open it in ui.perfetto.dev)\n", opt.trace.c_str());
    else std::fprintf(stderr, "%s\n", wr.message().c_str());
  }
  std::cout.flush();

  // The torch profiler on the CPU: the scopes are user annotations, the custom operator has its own row.
  profile_blocks("eager", eager_block, opt.profile_iters, false, trace_path(opt, "eager_trace.json"), "eager tail");
  profile_blocks("fused", fused_block, opt.profile_iters, false, trace_path(opt, "fused_trace.json"), "fused tail");
  return 0;
}

#if EAGER_VS_FUSED_GPU

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaGetErrorString(e));
}
#define CHECK_CUDA(call) check_cuda((call), #call)

std::string tf32_state() {
  try {
    return at::globalContext().allowTF32CuBLAS() ? "allowed" : "not allowed";
  } catch (const std::exception&) {
    return "unknown (torch's TF32 settings disagree)";
  }
}

int run_gpu(const options& opt) {
  const c10::DeviceIndex device = c10::cuda::current_device();
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);

  // ---- sizes (as eager_vs_fused.cu) --------------------------------------------------------------------
  const double l2_bytes = static_cast<double>(prop.l2CacheSize);
  const eager_vs_fused::workload wl = eager_vs_fused::choose(opt, l2_bytes);
  const std::string& preset = wl.preset;
  const long m = wl.m, k = wl.k, n = wl.n;
  const double tensor_bytes = wl.tensor_bytes;

  std::printf("eager_vs_fused_torch on %s (sm_%d%d, %d SMs, L2 %.1f MB, %.1f GB), driver %d, runtime %d, LibTorch %s\n",
              prop.name, prop.major, prop.minor, prop.multiProcessorCount, l2_bytes / 1e6, prop.totalGlobalMem / 1e9,
              driver, runtime, TORCH_VERSION);
  std::printf("preset %s: Linear X[%ld x %ld] * W[%ld x %ld]^T + b -> Y[%ld x %ld] (float32), tensor %.1f MB = %.1fx L2; "
              "%d warm-up + %d timed iterations\n",
              preset.c_str(), m, k, n, k, m, n, tensor_bytes / 1e6, tensor_bytes / l2_bytes, opt.warmup, opt.iters);
  std::printf("Linear: torch::nn::Linear(%ld, %ld) with bias (torch's default; the CUDA variant's GEMM has none); "
              "TF32 for cuBLAS: %s (torch's setting, kept)\n",
              k, n, tf32_state().c_str());
  std::printf("eager tail: torch::relu, mul(2), add(1), sqrt, add(residual); fused tail: scopeprof_example::fused_tail\n\n");

  // ---- tensors -----------------------------------------------------------------------------------------
  torch::manual_seed(0);
  const torch::Device dev(torch::kCUDA, device);
  torch::nn::Linear linear(torch::nn::LinearOptions(k, n));
  linear->to(dev);
  c10::InferenceMode inference;
  const auto on_gpu = torch::TensorOptions().dtype(torch::kFloat32).device(dev);
  const at::Tensor x = torch::rand({m, k}, on_gpu) - 0.5;
  const at::Tensor residual = torch::rand({m, n}, on_gpu) - 0.5;
  const std::size_t copy_bytes = std::max<std::size_t>(wl.elems * 4, std::size_t{256} << 20);
  const at::Tensor copy_src = torch::rand({static_cast<std::int64_t>(copy_bytes / 4)}, on_gpu);
  at::Tensor copy_dst = torch::empty_like(copy_src);

  // ---- correctness -------------------------------------------------------------------------------------
  {
    const at::Tensor y = linear(x);
    const at::Tensor eager = eager_tail(y, residual);
    const at::Tensor fused = fused_tail(y, residual);
    torch::cuda::synchronize();
    if (!check_equal(eager, fused)) return 1;
  }

  // ---- timed runs, instrumented (blocks::eager / blocks::fused) ------------------------------------------
  blocks b{linear, x, residual, eager_vs_fused::work_of(wl, true), {}};
  const auto eager_block = [&] { b.eager(); };
  const auto fused_block = [&] { b.fused(); };
  // The same blocks without scopeprof, each timed by one raw event pair on torch's current stream,
  // interleaved with the instrumented ones (same GPU clocks and temperature for both), to show what the
  // instrumentation costs the GPU.
  std::vector<cudaEvent_t> ev(4 * static_cast<std::size_t>(opt.iters));
  for (auto& e : ev) CHECK_CUDA(cudaEventCreate(&e));
  const auto raw_blocks = [&](cudaEvent_t* e) {
    const cudaStream_t s = c10::cuda::getCurrentCUDAStream(device).stream();
    CHECK_CUDA(cudaEventRecord(e[0], s));
    b.out = eager_tail(linear(x), residual);
    CHECK_CUDA(cudaEventRecord(e[1], s));
    CHECK_CUDA(cudaEventRecord(e[2], s));
    b.out = fused_tail(linear(x), residual);
    CHECK_CUDA(cudaEventRecord(e[3], s));
  };
  for (int i = 0; i < opt.warmup; ++i) eager_block(), fused_block(), raw_blocks(ev.data());
  torch::cuda::synchronize();
  scopeprof::reset();
  for (int i = 0; i < opt.iters; ++i) {
    eager_block();
    fused_block();
    {
      PROF_SCOPE_WORK("d2d copy", 2.0 * static_cast<double>(copy_bytes), 0);  // read + write
      copy_dst.copy_(copy_src);
    }
    raw_blocks(&ev[4 * static_cast<std::size_t>(i)]);
  }
  // The device's measured peaks (a copy and an FMA kernel), beside the spec ones: once the timed work has
  // finished and before collect(), which reads them (see eager_vs_fused.cu).
  if (opt.calibrate) {
    torch::cuda::synchronize();
    scopeprof::calibrate_device(device);
  }
  const scopeprof::report rep = scopeprof::collect();
  std::vector<double> raw_eager, raw_fused;
  torch::cuda::synchronize();  // (collect() waited for the scopes' events, not for the raw ones)
  for (int i = 0; i < opt.iters; ++i) {
    const cudaEvent_t* e = &ev[4 * static_cast<std::size_t>(i)];
    float t0 = 0, t1 = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t0, e[0], e[1]));
    CHECK_CUDA(cudaEventElapsedTime(&t1, e[2], e[3]));
    raw_eager.push_back(t0);
    raw_fused.push_back(t1);
  }
  for (auto& e : ev) cudaEventDestroy(e);

  // ---- what the run says ---------------------------------------------------------------------------------
  const eager_vs_fused::figures fig = eager_vs_fused::print_comparison(
      rep, wl, l2_bytes, static_cast<double>(copy_bytes), raw_eager, raw_fused, opt.iters,
      {"Linear (nn::Linear: cuBLAS + bias)", "the Linear",
       " Here it also\n  holds LibTorch's dispatch and allocation per op."},
      opt.trace);
  const double et = fig.eager_tail, ft = fig.fused_tail, tail_ratio = fig.tail_ratio();

  // ---- the torch profiler: one standalone session per variant, one after the other ------------------------
  // The scopes stay user annotations; their CUDA events are switched off so the traces hold only torch's work.
  std::printf("\nThe torch profiler (Kineto), standalone: one session of %d eager blocks, then one of %d fused blocks.\n"
              "scopeprof's device timing is off during the sessions (its scopes remain user annotations).\n",
              opt.profile_iters, opt.profile_iters);
  scopeprof::set_device_sampling(0);
  const session_outcome se =
      profile_blocks("eager", eager_block, opt.profile_iters, true, trace_path(opt, "eager_trace.json"), "eager tail");
  const session_outcome sf =
      profile_blocks("fused", fused_block, opt.profile_iters, true, trace_path(opt, "fused_trace.json"), "fused tail");

  std::printf("\nElementwise tail per iteration: the torch profiler beside scopeprof:\n");
  if (!se.cuda_evidence || !sf.cuda_evidence || !se.tail.found || !sf.tail.found) {
    std::printf("  no torch CUDA figures: %s\n",
                !se.recorded || !sf.recorded ? "a session recorded nothing (see above)"
                : !se.cuda_evidence || !sf.cuda_evidence
                    ? "a session has no CUDA activity (see its table above)"
                    : "no device work was found under the tail annotations");
    std::printf("  scopeprof (CUDA-event span, median): eager %.4f ms, fused %.4f ms (%.3fx)\n", et, ft, tail_ratio);
    return 0;
  }
  std::printf("  %-38s %10s %10s %8s\n", "", "eager", "fused", "ratio");
  std::printf("  %-38s %7.4f ms %7.4f ms %7.3fx   (%.1f and %.1f kernels per iteration)\n",
              "torch: tail kernels, durations summed", se.tail.kernel_ms, sf.tail.kernel_ms,
              se.tail.kernel_ms / sf.tail.kernel_ms, se.tail.kernels, sf.tail.kernels);
  std::printf("  %-38s %7.4f ms %7.4f ms %7.3fx   (median)\n", "torch: gpu_user_annotation span", se.tail.span_ms,
              sf.tail.span_ms, se.tail.span_ms / sf.tail.span_ms);
  std::printf("  %-38s %7.4f ms %7.4f ms %7.3fx   (median, timed run above)\n", "scopeprof: CUDA-event span", et, ft,
              tail_ratio);
  std::printf("  The torch figure adds up the durations of the tail's kernels (the device work launched by operators\n"
              "  inside the tail's annotation), so the gaps between kernels are not in it; the CUDA-event span and the\n"
              "  gpu_user_annotation span run from the tail's first kernel to its last, launch gaps included. The\n"
              "  torch figures come from %d profiled iterations of each block, run after the timed ones.\n",
              opt.profile_iters);
  if (se.tail.by_span || sf.tail.by_span)
    std::printf("  note: no tail kernel carried a link to its operator in the %s; there the tail kernels are the\n"
                "  device work inside the tail's gpu_user_annotation spans.\n",
                se.tail.by_span && sf.tail.by_span ? "eager and fused sessions"
                : se.tail.by_span                  ? "eager session"
                                                   : "fused session");
  if (std::fabs(se.tail.kernels - 5) > 1e-9 || std::fabs(sf.tail.kernels - 1) > 1e-9)
    std::printf("  note: expected 5 eager kernels and 1 fused kernel per iteration, found %.2f and %.2f.\n",
                se.tail.kernels, sf.tail.kernels);
  return 0;
}

#endif  // EAGER_VS_FUSED_GPU

int run(const options& opt) {
#if EAGER_VS_FUSED_GPU
  bool have_device = false;
  try {
    have_device = torch::cuda::is_available();
  } catch (const std::exception&) {
    have_device = false;
  }
  if (!have_device) return host_only(opt, "LibTorch has CUDA but sees no CUDA device");
  return run_gpu(opt);
#elif SCOPEPROF_TORCH_CUDA
  return host_only(opt, "this build has no fused CUDA kernel: LibTorch has CUDA, but no CUDA compiler was enabled");
#else
  return host_only(opt, "this LibTorch " TORCH_VERSION " is built without CUDA");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const options opt = eager_vs_fused::parse(argc, argv, "eager_vs_fused_torch", true);
  try {
    return run(opt);
  } catch (const c10::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "eager_vs_fused_torch: torch error: %s\n", e.what_without_backtrace());
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "eager_vs_fused_torch: error: %s\n", e.what());
  }
  return 1;
}
