// scopeprof CUPTI benchmark: the extra host cost of CUPTI mode next to events-only mode, per scope and
// per kernel, measured in one run. Plain timing loops (no Google Benchmark); every variant is measured in
// each repetition, alternating modes, so drift hits them alike.
//
//   ./build/bench/scopeprof_bench_cupti
//
// Host ns per iteration, median of 7 repetitions of 20000 iterations, timed in batches of 250 with the GPU
// drained between batches (collect() + reset() after each variant; neither is timed):
//   launch        one empty kernel launch, no scope (the cost of the launch itself)
//   scope         PROF_SCOPE with an empty body
//   scope+launch  PROF_SCOPE around one empty kernel launch
// each in events-only mode (set_cupti(false)) and CUPTI mode (set_cupti(true)). Printed: both figures,
// CUPTI minus events, and the ratio. Then the CUPTI evidence of the last CUPTI-mode variant (scope+launch),
// which must attribute every one of its kernels to a scope (exit 1 otherwise).
//   extra per scope  = scope[CUPTI] - scope[events]
//   extra per kernel = (scope+launch[CUPTI] - scope[CUPTI]) - (scope+launch[events] - scope[events])
#include <scopeprof.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

constexpr int iterations = 20000;
constexpr int repetitions = 7;

__global__ void empty_kernel() {}

double now_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

// Timed in batches with the GPU drained in between (not timed): a long run of launches fills the
// device's command queue, and then the host waits for the GPU inside the launch, so the loop would time
// the GPU's throughput (which CUPTI's kernel tracing also slows) instead of the host's cost.
constexpr int batch = 250;

/// What the collect() after the last CUPTI-mode variant said: its evidence line, and the kernels it
/// attributed to a scope (the scope+launch variant launches one per iteration, so `iterations` are expected).
struct cupti_check {
  std::string evidence;
  std::size_t kernels_in_scopes = 0;
};
cupti_check last_cupti;

template <class F>
double per_iteration_ns(F&& body) {
  double total = 0;
  for (int done = 0; done < iterations; done += batch) {
    cudaDeviceSynchronize();
    const double t0 = now_ns();
    for (int i = 0; i < batch; ++i) body();
    total += now_ns() - t0;
  }
  cudaDeviceSynchronize();
  const scopeprof::report r = scopeprof::collect();
  if (scopeprof::cupti_enabled()) {
    last_cupti.evidence = r.sources().cupti;
    last_cupti.kernels_in_scopes = static_cast<std::size_t>(
        std::count_if(r.activities().begin(), r.activities().end(), [](const scopeprof::device_activity& a) {
          return a.kind == scopeprof::activity_kind::kernel && a.instance >= 0;
        }));
  }
  scopeprof::reset();
  return total / iterations;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    std::printf("skipped: no CUDA device\n");
    return 0;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("scopeprof CUPTI benchmark on %s; %d iterations in batches of %d (GPU drained between batches), "
              "median of %d repetitions\n",
              prop.name, iterations, batch, repetitions);
  scopeprof::set_cupti(true);  // warm-up: load libcupti, subscribe, probe
  if (!scopeprof::cupti_enabled()) {
    std::printf("CUPTI collector did not start: %s\n", scopeprof::collect().sources().cupti.c_str());
    return 1;
  }
  for (int i = 0; i < 1000; ++i) {
    PROF_SCOPE("warm");
    empty_kernel<<<1, 1>>>();
  }
  cudaDeviceSynchronize();
  scopeprof::collect();
  scopeprof::reset();

  const char* names[3] = {"launch", "scope", "scope+launch"};
  std::vector<double> t[2][3];  // [mode: 0 events, 1 CUPTI][variant]
  for (int rep = 0; rep < repetitions; ++rep)
    for (int mode = 0; mode < 2; ++mode) {
      scopeprof::set_cupti(mode == 1);
      t[mode][0].push_back(per_iteration_ns([] { empty_kernel<<<1, 1>>>(); }));
      t[mode][1].push_back(per_iteration_ns([] { PROF_SCOPE("bench_scope"); }));
      t[mode][2].push_back(per_iteration_ns([] {
        PROF_SCOPE("bench_scope_launch");
        empty_kernel<<<1, 1>>>();
      }));
    }
  scopeprof::set_cupti(false);
  std::printf("\n%-14s %14s %14s %14s %8s\n", "host ns/iter", "events-only", "CUPTI", "CUPTI-events", "ratio");
  double m[2][3];
  for (int v = 0; v < 3; ++v) {
    m[0][v] = median(t[0][v]);
    m[1][v] = median(t[1][v]);
    std::printf("%-14s %14.1f %14.1f %14.1f %8.2f\n", names[v], m[0][v], m[1][v], m[1][v] - m[0][v], m[1][v] / m[0][v]);
  }
  const double per_scope = m[1][1] - m[0][1];
  const double per_kernel = (m[1][2] - m[1][1]) - (m[0][2] - m[0][1]);
  std::printf("\nextra host cost of CUPTI mode: %.1f ns per scope, %.1f ns per kernel launched in a scope\n", per_scope,
              per_kernel);
  // The last CUPTI-mode variant was scope+launch: one kernel per iteration, each inside a scope.
  std::printf("CUPTI evidence of the last CUPTI-mode run (scope+launch, %d iterations): %s\n", iterations,
              last_cupti.evidence.c_str());
  std::printf("kernels attributed to a scope: %zu of %d launched\n", last_cupti.kernels_in_scopes, iterations);
  if (last_cupti.kernels_in_scopes != static_cast<std::size_t>(iterations)) {
    std::printf("FAIL: CUPTI mode did not attribute every kernel launched in a scope\n");
    return 1;
  }
  return 0;
}
