// Two GPUs of one host in one process: scopes on streams of both devices at once from two threads, one
// thread switching devices between nested scopes, a peer copy inside a scope, and a graph captured on
// device 1. Every case needs two CUDA devices; with fewer it says "skipped: needs 2 CUDA devices" and
// passes (the path CI and a one-GPU machine take).
#include "gpu_support.cuh"
#include "gpu_test_helpers.cuh"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace {

// Skip this case (with one clear line) unless two CUDA devices are usable.
#define SCOPEPROF_TWO_GPUS_OR_SKIP()                                                           \
  do {                                                                                        \
    std::string why_;                                                                         \
    int n_ = 0;                                                                               \
    if (scopeprof_gpu::device_available(why_) && cudaGetDeviceCount(&n_) == cudaSuccess && n_ >= 2) break; \
    (void)cudaGetLastError();                                                                 \
    MESSAGE("skipped: needs 2 CUDA devices, found " << n_ << (why_.empty() ? "" : " (" + why_ + ")")); \
    return;                                                                                   \
  } while (0)

// A 200 us kernel in a scope named after its device.
cudaError_t timed_spin(int device, cudaStream_t s) {
  if (device == 0) {
    PROF_SCOPE_STREAM("device 0 spin", s);
    return spin(200, s);
  }
  PROF_SCOPE_STREAM("device 1 spin", s);
  return spin(200, s);
}

// warm_up() on each device, then device 0 current again.
void warm_up_both() {
  for (int d = 1; d >= 0; --d) {
    CUDA_CHECK(cudaSetDevice(d));
    warm_up();
  }
}

// The instances of `name` must all be device-timed on `device`, each span within `tolerance_us` of `us_expected`.
void check_spans(const scopeprof::report& r, const std::string& name, int device, double us_expected, double tolerance_us,
                 std::size_t count) {
  const auto in = instances_named(r, name);
  CHECK_MESSAGE(in.size() == count, name << ": " << in.size() << " instances");
  for (std::size_t i = 0; i < in.size(); ++i) {
    CHECK_MESSAGE(in[i].device == scopeprof::device_status::ok, name << " " << i << ": " << status_name(in[i].device));
    CHECK_MESSAGE(in[i].device_id == device, name << " " << i << ": timed on device " << in[i].device_id);
    const double span = static_cast<double>(in[i].device_span_ns());
    TIMING_CHECK(std::abs(span - us_expected * us) <= tolerance_us * us,
                 name << " " << i << ": span " << span / us << " us, expected ~" << us_expected);
  }
}

}  // namespace

TEST_CASE("two gpus a: two threads, one device each, at the same time; one device process per GPU in the trace") {
  SCOPEPROF_TWO_GPUS_OR_SKIP();
  warm_up_both();
  constexpr int per_thread = 20;
  std::vector<std::thread> threads;
  std::vector<cudaError_t> errors(2, cudaSuccess);
  for (int d = 0; d < 2; ++d)
    threads.emplace_back([d, &errors] {
      cudaError_t& e = errors[static_cast<std::size_t>(d)];
      cudaStream_t s = nullptr;
      if ((e = cudaSetDevice(d)) != cudaSuccess || (e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess) return;
      for (int i = 0; i < per_thread && e == cudaSuccess; ++i) {
        e = spin(30, s);  // gate: the scope's begin event waits behind it, so the span is the kernel's
        if (e == cudaSuccess) e = timed_spin(d, s);
      }
      if (e == cudaSuccess) e = cudaStreamSynchronize(s);
      if (e == cudaSuccess) e = cudaStreamDestroy(s);
    });
  for (auto& t : threads) t.join();
  for (int d = 0; d < 2; ++d) CHECK_MESSAGE(errors[static_cast<std::size_t>(d)] == cudaSuccess, "device " << d << ": " << err(errors[static_cast<std::size_t>(d)]));
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  check_spans(r, "device 0 spin", 0, 200, 20, per_thread);
  check_spans(r, "device 1 spin", 1, 200, 20, per_thread);
  std::vector<std::int32_t> devices = r.process().devices;
  CHECK_MESSAGE(devices.size() == 2, "report's devices: " << devices.size());
  const std::string trace = r.chrome_trace();
  CHECK_MESSAGE(trace.find("\"GPU 0\"") != std::string::npos, "the trace names no GPU 0 process");
  CHECK_MESSAGE(trace.find("\"GPU 1\"") != std::string::npos, "the trace names no GPU 1 process");
  scopeprof::reset();
}

TEST_CASE("two gpus b: a scope on device 1 inside one on device 0 is not taken from its device self time") {
  SCOPEPROF_TWO_GPUS_OR_SKIP();
  warm_up_both();
  cudaStream_t s0 = nullptr, s1 = nullptr;
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
  constexpr int rounds = 10;
  for (int i = 0; i < rounds; ++i) {
    CUDA_CHECK(spin(30, s0));
    {
      PROF_SCOPE_STREAM("switch parent", s0);
      CUDA_CHECK(spin(100, s0));
      CUDA_CHECK(cudaSetDevice(1));
      CUDA_CHECK(spin(30, s1));
      {
        PROF_SCOPE_STREAM("switch child", s1);
        CUDA_CHECK(spin(300, s1));
      }
      CUDA_CHECK(cudaSetDevice(0));
      CUDA_CHECK(spin(100, s0));
    }
  }
  CUDA_CHECK(cudaStreamSynchronize(s0));
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaStreamSynchronize(s1));
  CUDA_CHECK(cudaSetDevice(0));
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  check_spans(r, "switch parent", 0, 200, 25, rounds);
  check_spans(r, "switch child", 1, 300, 20, rounds);
  for (const auto& p : instances_named(r, "switch parent"))
    CHECK_MESSAGE(p.device_self_ns == p.device_span_ns(), "parent's device self " << p.device_self_ns << " ns of a "
                                                                                  << p.device_span_ns() << " ns span");
  const scopeprof::flat_row& parent = row(r, "switch parent");
  CHECK(parent.device_self_ns == parent.device_total_ns);
  scopeprof::reset();
  CUDA_CHECK(cudaStreamDestroy(s0));
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaStreamDestroy(s1));
  CUDA_CHECK(cudaSetDevice(0));
}

TEST_CASE("two gpus c: a peer copy inside a scope is timed on its stream, as a raw event pair times it") {
  SCOPEPROF_TWO_GPUS_OR_SKIP();
  warm_up_both();
  int can = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
  MESSAGE("device 0 can access device 1 directly: " << (can ? "yes" : "no (the copy is staged through the host)"));
  constexpr std::size_t bytes = 64u << 20;
  void* src = nullptr;
  void* dst = nullptr;
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaMalloc(&src, bytes));
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaMalloc(&dst, bytes));
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t a = nullptr, b = nullptr;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  constexpr int rounds = 5;
  std::vector<double> raw_us;
  for (int i = 0; i < rounds; ++i) {
    CUDA_CHECK(cudaEventRecord(a, s));
    CUDA_CHECK(cudaMemcpyPeerAsync(dst, 0, src, 1, bytes, s));
    CUDA_CHECK(cudaEventRecord(b, s));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    raw_us.push_back(ms * 1000.0);
    {
      PROF_SCOPE_STREAM("peer copy", s);
      CUDA_CHECK(cudaMemcpyPeerAsync(dst, 0, src, 1, bytes, s));
    }
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  const double raw = median(raw_us);
  MESSAGE("64 MiB peer copy, raw event pair: " << raw << " us (" << bytes / (raw * 1e3) << " GB/s)");
  check_spans(r, "peer copy", 0, raw, 0.25 * raw, rounds);
  scopeprof::reset();
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaFree(dst));
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaSetDevice(0));
}

TEST_CASE("two gpus d: a graph captured on device 1 times its replays there") {
  SCOPEPROF_TWO_GPUS_OR_SKIP();
  warm_up_both();
  CUDA_CHECK(cudaSetDevice(1));
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // No REQUIRE until the capture is ended: a thrown failure would leave it open.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  const cudaError_t begin_err = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaError_t launch_err = cudaSuccess, end_err = cudaSuccess;
  if (begin_err == cudaSuccess) {
    {
      PROF_SCOPE_STREAM("device 1 graph body", s);
      launch_err = spin(100, s);
    }
    end_err = cudaStreamEndCapture(s, &graph);
  }
  CHECK_MESSAGE(begin_err == cudaSuccess, "cudaStreamBeginCapture: " << err(begin_err));
  CHECK_MESSAGE(launch_err == cudaSuccess, "launch during capture: " << err(launch_err));
  REQUIRE_MESSAGE(end_err == cudaSuccess, "cudaStreamEndCapture: " << err(end_err));
  REQUIRE(graph != nullptr);
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  constexpr int replays = 5;
  for (int i = 0; i < replays; ++i) {
    CUDA_CHECK(spin(30, s));
    PROF_SCOPE_STREAM("device 1 replay", s);
    CUDA_CHECK(cudaGraphLaunch(exec, s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  CUDA_CHECK(cudaSetDevice(0));
  const scopeprof::report r = scopeprof::collect();
  INFO(evidence(r));
  check_spans(r, "device 1 replay", 1, 100, 15, replays);
  check_spans(r, "device 1 graph body", 1, 100, 15, 1);
  scopeprof::reset();
  CUDA_CHECK(cudaSetDevice(1));
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
  CUDA_CHECK(cudaStreamDestroy(s));
  CUDA_CHECK(cudaSetDevice(0));
}
