// Helpers shared by the doctest GPU suites: skipping without a device, CUDA checks, timing checks that
// stand down under compute-sanitizer, warm-up, and report lookups.
#pragma once

#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include "gpu_support.cuh"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

using scopeprof_gpu::spin;

namespace {

// Skip this case (with one clear line) when no CUDA device is usable.
#define SCOPEPROF_GPU_OR_SKIP()                                                  \
  do {                                                                          \
    std::string why_;                                                           \
    if (!scopeprof_gpu::device_available(why_)) {                               \
      MESSAGE("skipped: no CUDA device (" << why_ << ")");                      \
      return;                                                                   \
    }                                                                           \
  } while (0)

// A CUDA call that must succeed; says which one and why when it does not.
#define CUDA_CHECK(call)                                                                       \
  do {                                                                                        \
    const cudaError_t e_ = (call);                                                            \
    REQUIRE_MESSAGE(e_ == cudaSuccess, #call << " failed: " << err(e_));                      \
  } while (0)

constexpr double us = 1000.0;  // nanoseconds per microsecond

// Timing precision is only checked on an otherwise idle GPU: under compute-sanitizer (which serialises
// and instruments launches) or with SCOPEPROF_GPU_TESTS_TIMING=0, the timing checks report and pass;
// the functional checks (statuses, counts, captures, events) always apply.
bool timing_checked() {
  static const bool on = [] {
    const char* v = std::getenv("SCOPEPROF_GPU_TESTS_TIMING");
    if (v != nullptr && std::string(v) == "0") return false;
    return std::getenv("NV_SANITIZER_INJECTION_PORT_BASE") == nullptr &&
           std::getenv("NV_SANITIZER_INJECTION_TRANSPORT_TYPE") == nullptr;
  }();
  return on;
}
#define TIMING_CHECK(cond, msg)                                                    \
  do {                                                                            \
    if (timing_checked()) {                                                       \
      CHECK_MESSAGE(cond, msg);                                                   \
    } else if (!(cond)) {                                                         \
      MESSAGE("timing check not applied (compute-sanitizer or SCOPEPROF_GPU_TESTS_TIMING=0): " << msg); \
    }                                                                             \
  } while (0)

// CUDA error as text (a std::string: doctest prints a bare const char* as a pointer).
std::string err(cudaError_t e) { return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")"; }

// First use of the kernel (module load), of the device (scopeprof's reference event) and of the event
// pool happen here, outside anything a case measures; then the records are forgotten.
void warm_up() {
  CUDA_CHECK(spin(1));
  for (int i = 0; i < 64; ++i) {
    PROF_SCOPE("warm_up");
    CUDA_CHECK(spin(0));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  (void)scopeprof::collect();
  scopeprof::reset();
}

// The instances of one name, in the order they began.
std::vector<scopeprof::scope_instance> instances_named(const scopeprof::report& r, const std::string& name) {
  std::vector<scopeprof::scope_instance> out;
  for (const auto& s : r.instances())
    if (s.site < r.sites().size() && r.sites()[s.site].name == name) out.push_back(s);
  std::stable_sort(out.begin(), out.end(), [](const scopeprof::scope_instance& a, const scopeprof::scope_instance& b) {
    return a.host_begin_ns < b.host_begin_ns;
  });
  return out;
}

const scopeprof::flat_row& row(const scopeprof::report& r, const std::string& name) {
  const scopeprof::flat_row* f = r.find(name);
  REQUIRE_MESSAGE(f != nullptr, "no row named " << name << "; device evidence: " << r.sources().device);
  return *f;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string status_name(scopeprof::device_status s) {
  switch (s) {
    case scopeprof::device_status::ok: return "ok";
    case scopeprof::device_status::captured: return "captured";
    case scopeprof::device_status::invalid: return "invalid";
    default: return "not_timed";
  }
}

// The report's evidence line, for failure messages.
std::string evidence(const scopeprof::report& r) {
  return "device evidence: " + r.sources().device + (r.sources().device_valid ? " [valid]" : " [NOT valid]");
}

}  // namespace
