// A torch profiler session while another CUPTI subscriber holds CUPTI: the session's table must say that
// CUDA activity is missing, and why, instead of showing a table without CUDA rows. Its own process: Kineto
// keeps its CUPTI subscription for the life of the process, so this cannot share one with other tests.
// Exit status 0: pass; 1: fail; 77: skipped (no GPU, or no libcupti to hold).
#include <scopeprof.hpp>
#include <scopeprof/torch_session.hpp>

#include <dlfcn.h>
#include <torch/torch.h>

#include <cstdio>
#include <iostream>
#include <string>

#ifndef SCOPEPROF_TEST_CUPTI_LIBRARY
#define SCOPEPROF_TEST_CUPTI_LIBRARY "libcupti.so"
#endif

namespace {
int failures = 0;
void check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}
void noop_callback(void*, int, unsigned, const void*) {}
}  // namespace

int main() {
  if (!torch::cuda::is_available()) {
    std::printf("skipped: torch sees no CUDA device\n");
    return 77;
  }
  // The libcupti torch uses (already loaded with it, or the wheel's copy): a second copy of CUPTI would not
  // be the same subscriber slot.
  void* sub = dlsym(RTLD_DEFAULT, "cuptiSubscribe");
  const char* from = "already loaded with torch";
  if (sub == nullptr) {
    void* lib = dlopen(SCOPEPROF_TEST_CUPTI_LIBRARY, RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      std::printf("skipped: cannot load %s: %s\n", SCOPEPROF_TEST_CUPTI_LIBRARY, dlerror());
      return 77;
    }
    sub = dlsym(lib, "cuptiSubscribe");
    from = SCOPEPROF_TEST_CUPTI_LIBRARY;
  }
  if (sub == nullptr) {
    std::printf("skipped: no cuptiSubscribe\n");
    return 77;
  }
  std::printf("libcupti: %s\n", from);
  torch::cuda::synchronize();  // CUDA context up before the subscriber, as under a tool
  void* handle = nullptr;
  const int rc = reinterpret_cast<int (*)(void**, void*, void*)>(sub)(&handle, reinterpret_cast<void*>(noop_callback), nullptr);
  std::printf("cuptiSubscribe (the other tool): %d\n", rc);
  check(rc == 0, "the other subscriber holds CUPTI before the session");

  const auto dev = torch::Device(torch::kCUDA);
  torch::nn::Linear lin(1024, 1024);
  lin->to(dev);
  const auto x = torch::randn({4096, 1024}, dev);
  scopeprof::torch_profile session;
  check(session.running(), "the session starts");
  for (int i = 0; i < 3; ++i) {
    PROF_SCOPE("collision.block");
    auto y = torch::relu(lin(x));
  }
  torch::cuda::synchronize();
  auto result = session.stop();
  const std::string table = result.table();
  std::cout << table << std::flush;

  check(result.cuda().requested, "CUDA activity was requested");
  check(!result.cuda().device_events, "no device records arrived (the collision happened)");
  check(result.cuda().cupti_probe == 1, "the probe saw another CUPTI subscriber");
  check(result.cuda().missing(), "the evidence check calls CUDA activity missing");
  check(table.find("CUDA activity is MISSING") != std::string::npos, "the table says CUDA activity is missing");
  check(table.find("CUPTI") != std::string::npos && table.find("standalone") != std::string::npos,
        "the table names the cause and what to do");
  check(table.find("Self CUDA") == std::string::npos, "no CUDA columns that would read as zero");
  check(table.find("collision.block") != std::string::npos, "the host rows are still there");
  std::printf("%s\n", failures == 0 ? "PASS" : "FAILED");
  return failures == 0 ? 0 : 1;
}
