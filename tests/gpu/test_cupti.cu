// The CUPTI collector on a real GPU: kernels attributed to the innermost scope with exact counts and names,
// device busy against the span and against the kernels' own %globaltimer durations, a captured graph
// launched inside a scope, and release (a later cuptiSubscribe by someone else succeeds). Without a device
// (or where CUPTI cannot start) every case says "skipped: ..." and passes.
#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include "gpu_support.cuh"

#include <cupti_callbacks.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

using scopeprof_gpu::spin;

namespace {

#define CUDA_CHECK(call)                                                                                   \
  do {                                                                                                    \
    const cudaError_t e_ = (call);                                                                        \
    REQUIRE_MESSAGE(e_ == cudaSuccess, #call << " failed: " << std::string(cudaGetErrorName(e_)));        \
  } while (0)

__global__ void marker_kernel_b(int* p) {
  if (p != nullptr) *p = 1;
}

// Device present and the collector on; otherwise say why and skip.
bool cupti_or_skip() {
  std::string why;
  if (!scopeprof_gpu::device_available(why)) {
    MESSAGE("skipped: no CUDA device (" << why << ")");
    return false;
  }
  scopeprof::set_cupti(true);
  if (!scopeprof::cupti_enabled()) {
    MESSAGE("skipped: CUPTI collector did not start: " << scopeprof::collect().sources().cupti);
    return false;
  }
  return true;
}

bool timing_checked() {
  const char* v = std::getenv("SCOPEPROF_GPU_TESTS_TIMING");
  return !(v != nullptr && std::string(v) == "0");
}

const scopeprof::scope_instance* first_named(const scopeprof::report& r, const std::string& name) {
  for (const auto& s : r.instances())
    if (r.sites()[s.site].name == name) return &s;
  return nullptr;
}

std::vector<std::string> kernel_names_of(const scopeprof::report& r, const scopeprof::scope_instance* s) {
  std::vector<std::string> out;
  for (const auto& a : r.activities())
    if (a.instance >= 0 && &r.instances()[static_cast<std::size_t>(a.instance)] == s && a.kind == scopeprof::activity_kind::kernel)
      out.push_back(r.activity_names()[a.name]);
  return out;
}

}  // namespace

TEST_CASE("nested scopes: kernels attributed exactly, busy <= span, busy matches the kernels' own time") {
  if (!cupti_or_skip()) return;
  scopeprof::reset();
  unsigned long long* times = nullptr;  // [start, end] per spin kernel, from %globaltimer
  int* flag = nullptr;
  CUDA_CHECK(cudaMalloc(&times, 3 * 2 * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  {
    PROF_SCOPE("outer");
    CUDA_CHECK(spin(200, nullptr, times));
    {
      PROF_SCOPE("inner");
      CUDA_CHECK(spin(300, nullptr, times + 2));
      CUDA_CHECK(spin(300, nullptr, times + 4));
      marker_kernel_b<<<1, 1>>>(flag);
      CUDA_CHECK(cudaGetLastError());
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  unsigned long long host_times[6];
  CUDA_CHECK(cudaMemcpy(host_times, times, sizeof host_times, cudaMemcpyDeviceToHost));
  const auto r = scopeprof::collect();
  MESSAGE("CUPTI evidence: " << r.sources().cupti);
  REQUIRE(r.sources().cupti_valid);
  const auto* outer = first_named(r, "outer");
  const auto* inner = first_named(r, "inner");
  REQUIRE(outer != nullptr);
  REQUIRE(inner != nullptr);
  CHECK(inner->kernels == 3);
  CHECK(inner->kernels_self == 3);
  CHECK(outer->kernels_self == 1);
  CHECK(outer->kernels == 4);
  const auto inner_names = kernel_names_of(r, inner);
  const auto outer_names = kernel_names_of(r, outer);
  REQUIRE(inner_names.size() == 3);
  REQUIRE(outer_names.size() == 1);
  CHECK(outer_names[0].find("spin_kernel") != std::string::npos);
  int spins = 0, markers = 0;
  for (const auto& n : inner_names) {
    spins += n.find("spin_kernel") != std::string::npos;
    markers += n.find("marker_kernel_b") != std::string::npos;
  }
  CHECK(spins == 2);
  CHECK(markers == 1);
  // Busy against the span (one stream, serial work) and against the kernels' own measurement.
  REQUIRE(outer->device == scopeprof::device_status::ok);
  CHECK(outer->device_busy_ns <= outer->device_span_ns());
  CHECK(inner->device_busy_ns <= inner->device_span_ns());
  const double own = static_cast<double>((host_times[1] - host_times[0]) + (host_times[3] - host_times[2]) +
                                         (host_times[5] - host_times[4]));
  std::int64_t spin_busy = 0;
  for (const auto& a : r.activities())
    if (a.kind == scopeprof::activity_kind::kernel && r.activity_names()[a.name].find("spin_kernel") != std::string::npos)
      spin_busy += a.duration_ns();
  MESSAGE("spin kernels: CUPTI " << spin_busy << " ns, %globaltimer " << own << " ns; outer busy "
                                 << outer->device_busy_ns << " ns, span " << outer->device_span_ns() << " ns");
  if (timing_checked()) CHECK(std::abs(static_cast<double>(spin_busy) - own) <= 0.02 * own);
  // The kernel summary has the three (scope, kernel) groups.
  CHECK(r.kernel_summary().size() == 3);
  CHECK(r.to_string().find("Kernels by scope (CUPTI") != std::string::npos);
  cudaFree(times);
  cudaFree(flag);
}

TEST_CASE("a captured graph launched inside a scope: its kernels land in that scope") {
  if (!cupti_or_skip()) return;
  scopeprof::reset();
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 3; ++i) spin(20, s);
  CUDA_CHECK(cudaStreamEndCapture(s, &graph));
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  {
    PROF_SCOPE_STREAM("replay", s);
    CUDA_CHECK(cudaGraphLaunch(exec, s));
    CUDA_CHECK(cudaGraphLaunch(exec, s));
  }
  CUDA_CHECK(cudaStreamSynchronize(s));
  const auto r = scopeprof::collect();
  REQUIRE(r.sources().cupti_valid);
  const auto* replay = first_named(r, "replay");
  REQUIRE(replay != nullptr);
  CHECK(replay->kernels == 6);
  int from_graph = 0;
  for (const auto& a : r.activities()) from_graph += a.graph != 0;
  CHECK(from_graph == 6);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
}

TEST_CASE("release: after set_cupti(false) another subscriber gets CUPTI, and scopeprof can start again") {
  if (!cupti_or_skip()) return;
  { PROF_SCOPE("before_release"); spin(10); }
  scopeprof::set_cupti(false);
  CHECK_FALSE(scopeprof::cupti_enabled());
  void* h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (h == nullptr) h = dlopen("libcupti.so", RTLD_NOW | RTLD_NOLOAD);
  REQUIRE_MESSAGE(h != nullptr, "libcupti not loaded in this process");
  auto subscribe = reinterpret_cast<decltype(&cuptiSubscribe)>(dlsym(h, "cuptiSubscribe"));
  auto unsubscribe = reinterpret_cast<decltype(&cuptiUnsubscribe)>(dlsym(h, "cuptiUnsubscribe"));
  const bool resolved = subscribe != nullptr && unsubscribe != nullptr;
  REQUIRE(resolved);
  CUpti_SubscriberHandle other = nullptr;
  const CUptiResult res =
      subscribe(&other, [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}, nullptr);
  CHECK_MESSAGE(res == CUPTI_SUCCESS, "cuptiSubscribe after release returned " << static_cast<int>(res));
  if (res == CUPTI_SUCCESS) {
    // While the other subscriber holds CUPTI, scopeprof withholds ...
    scopeprof::set_cupti(true);
    CHECK_FALSE(scopeprof::cupti_enabled());
    const auto held = scopeprof::collect();
    CHECK(held.sources().cupti.rfind("withheld: ", 0) == 0);
    unsubscribe(other);
  }
  // ... and starts again once it is free.
  scopeprof::set_cupti(true);
  CHECK(scopeprof::cupti_enabled());
  scopeprof::set_cupti(false);
  dlclose(h);
}
