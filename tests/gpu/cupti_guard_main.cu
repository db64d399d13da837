// The collision guard, in a process of its own (the CUPTI subscriber slot is process-wide).
//   scopeprof_gpu_cupti_guard held     another subscriber holds CUPTI first: the guard withholds with the
//                                      cause; host and CUDA-event columns stay valid
//   scopeprof_gpu_cupti_guard stolen   another collector re-registers CUPTI's activity buffers mid-run (as a
//                                      torch profiler session does): CUPTI data is marked invalid, never partial
// Exit 0: passed or skipped (no device; the reason is printed). Exit 1: failed, with the reason.
#include <scopeprof.hpp>

#include "gpu_support.cuh"

#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

int failures = 0;
void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what.c_str());
  if (!ok) ++failures;
}

void* cupti_library() {
  for (const char* n : {"libcupti.so.13", "libcupti.so"})
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
  return nullptr;
}

void CUPTIAPI stolen_request(uint8_t** buffer, size_t* size, size_t* max_records) {
  static uint8_t storage[1 << 20] __attribute__((aligned(8)));
  *buffer = storage;
  *size = sizeof storage;
  *max_records = 0;
}
void CUPTIAPI stolen_complete(CUcontext, uint32_t, uint8_t*, size_t, size_t) {}

void work() {
  PROF_SCOPE("work");
  scopeprof_gpu::spin(100);
  { PROF_SCOPE("work_inner"); scopeprof_gpu::spin(100); }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "held";
  std::string why;
  if (!scopeprof_gpu::device_available(why)) {
    std::printf("skipped: no CUDA device (%s)\n", why.c_str());
    return 0;
  }
  void* h = cupti_library();
  if (h == nullptr) {
    std::printf("FAILED: libcupti could not be loaded: %s\n", dlerror());
    return 1;
  }
  if (mode == "held") {
    auto subscribe = reinterpret_cast<decltype(&cuptiSubscribe)>(dlsym(h, "cuptiSubscribe"));
    CUpti_SubscriberHandle first = nullptr;
    const CUptiResult r = subscribe(&first, [](void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}, nullptr);
    check(r == CUPTI_SUCCESS, "the test's own cuptiSubscribe succeeds first (" + std::to_string(static_cast<int>(r)) + ")");
    scopeprof::set_cupti(true);
    check(!scopeprof::cupti_enabled(), "scopeprof does not collect while another subscriber holds CUPTI");
    for (int i = 0; i < 3; ++i) work();
    cudaDeviceSynchronize();
    const auto rep = scopeprof::collect();
    std::printf("CUPTI evidence: %s\n", rep.sources().cupti.c_str());
    check(rep.sources().cupti.rfind("withheld: ", 0) == 0, "the CUPTI evidence says withheld");
    check(rep.sources().cupti.find("MULTIPLE_SUBSCRIBERS") != std::string::npos, "the cause is named");
    check(!rep.sources().cupti_valid && rep.activities().empty(), "no CUPTI data");
    const auto* w = rep.find("work");
    check(w != nullptr && w->calls == 3 && w->host_total_ns > 0, "host columns valid");
    check(rep.sources().device_valid && w != nullptr && w->device_calls == 3, "CUDA-event columns valid");
    check(rep.csv().find(",withheld,") != std::string::npos, "CSV cupti_status says withheld");
  } else {
    scopeprof::set_cupti(true);
    if (!scopeprof::cupti_enabled()) {
      std::printf("skipped: CUPTI collector did not start: %s\n", scopeprof::collect().sources().cupti.c_str());
      return 0;
    }
    work();
    cudaDeviceSynchronize();
    const auto before = scopeprof::collect();
    check(before.sources().cupti_valid && before.find("work")->kernels == 2, "valid before the takeover");
    auto reg = reinterpret_cast<decltype(&cuptiActivityRegisterCallbacks)>(dlsym(h, "cuptiActivityRegisterCallbacks"));
    check(reg(&stolen_request, &stolen_complete) == CUPTI_SUCCESS, "another collector re-registers the buffers");
    work();
    cudaDeviceSynchronize();
    const auto after = scopeprof::collect();
    std::printf("CUPTI evidence: %s\n", after.sources().cupti.c_str());
    check(after.sources().cupti.rfind("invalid: ", 0) == 0, "the CUPTI evidence says invalid");
    check(!after.sources().cupti_valid && after.activities().empty(), "no partial CUPTI figures");
    check(after.find("work") != nullptr && after.find("work")->calls == 2, "host columns still valid");
  }
  std::printf("%s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
