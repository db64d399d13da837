// scopeprof device-timing benchmark: what a device-timed scope costs the host, next to the two raw
// cudaEventRecord calls it is built on, and what it costs the GPU on a ~1 ms workload of short kernels.
// Plain timing loops (no Google Benchmark): one process, one run, every variant measured in the same
// repetition so drift hits them alike.
//
//   ./build/bench/scopeprof_bench_device
//
// Part 1, host ns per iteration (median of 51 batches of 1000 iterations, variants interleaved; between
// batches, outside the timed loop, the GPU is drained and collect() + reset() recycle the events):
//   (a) raw      two cudaEventRecord on the default stream, pre-created events, no sync (the issue's baseline)
//   (a') raw drv  two cuEventRecord (driver entry point), the calls a scope makes, for comparison
//   (b) device   PROF_SCOPE, device-timed, empty body
//   (c) sampled  PROF_SCOPE with device sampling 10 (set_device_sampling("bench_sampled_10", 10))
//   (d) host     PROF_SCOPE_HOST
//   (e) off      PROF_SCOPE with set_device_timing(false)
// plus the cost of each CUDA call a device-timed scope makes, to show where its time goes.
// Part 2, device ms of 20 spin kernels of 50 us on the default stream, between one raw event pair,
// median of 50: uninstrumented, a raw event pair around each kernel (what CUDA events cost the GPU by
// themselves), each kernel in a PROF_SCOPE, the same with device sampling 1/10, the whole workload in
// one PROF_SCOPE. A gate kernel runs
// first so the whole workload is queued before it starts: the numbers are GPU time only.
#include <scopeprof.hpp>
#include <scopeprof/backends/cuda_device.hpp>  // internals the test reads (the_devices, g_driver, event_census)
#include <scopeprof/backends/cuda_driver.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// Short batches with the GPU drained between them: a long batch of event records fills the GPU's command
// queue, and then every variant measures the queue's back-pressure instead of its own cost.
constexpr int iterations = 1000;
constexpr int repetitions = 51;
constexpr int workload_kernels = 20;
constexpr double workload_kernel_us = 50;
constexpr int workload_reps = 50;

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(unsigned long long ns) {
  const unsigned long long start = global_timer_ns();
  while (global_timer_ns() - start < ns) {
  }
}

void spin(double us) { spin_kernel<<<1, 1>>>(static_cast<unsigned long long>(us * 1000.0)); }

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "CUDA error in %s: %s (%s)\n", what, cudaGetErrorName(e), cudaGetErrorString(e));
  return false;
}
#define BENCH_CUDA(call) \
  do {                   \
    if (!cuda_ok((call), #call)) return 1; \
  } while (0)

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// --- part 1: host cost per iteration --------------------------------------------------------------

constexpr int raw_pairs = 64;
cudaEvent_t raw_begin[raw_pairs], raw_end[raw_pairs];

void loop_raw(int n) {
  for (int i = 0; i < n; ++i) {
    const int k = i % raw_pairs;
    cudaEventRecord(raw_begin[k], nullptr);
    cudaEventRecord(raw_end[k], nullptr);
  }
}
void loop_raw_driver(int n) {
  const auto record = scopeprof::detail::g_driver.event_record;
  for (int i = 0; i < n; ++i) {
    const int k = i % raw_pairs;
    record(raw_begin[k], nullptr);
    record(raw_end[k], nullptr);
  }
}
void loop_device(int n) {
  for (int i = 0; i < n; ++i) {
    PROF_SCOPE("bench_device_timed");
  }
}
void loop_sampled(int n) {
  for (int i = 0; i < n; ++i) {
    PROF_SCOPE("bench_sampled_10");
  }
}
void loop_host(int n) {
  for (int i = 0; i < n; ++i) {
    PROF_SCOPE_HOST("bench_host_only");
  }
}
void loop_off(int n) {
  for (int i = 0; i < n; ++i) {
    PROF_SCOPE("bench_timing_off");
  }
}

// The CUDA calls inside a device-timed scope, one at a time.
void loop_record(int n) {
  for (int i = 0; i < n; ++i) cudaEventRecord(raw_begin[i % raw_pairs], nullptr);
}
void loop_peek(int n) {
  for (int i = 0; i < n; ++i) (void)cudaPeekAtLastError();
}
void loop_get_device(int n) {
  int d = 0;
  for (int i = 0; i < n; ++i) (void)cudaGetDevice(&d);
}
void loop_driver_record(int n) {
  const auto record = scopeprof::detail::g_driver.event_record;
  for (int i = 0; i < n; ++i) record(raw_begin[i % raw_pairs], nullptr);
}
void loop_driver_ctx_current(int n) {
  const auto get = scopeprof::detail::g_driver.ctx_get_current;
  CUcontext c = nullptr;
  for (int i = 0; i < n; ++i) (void)get(&c);
}
void loop_driver_is_capturing(int n) {
  const auto get = scopeprof::detail::g_driver.stream_is_capturing;
  CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
  for (int i = 0; i < n; ++i) (void)get(nullptr, &st);
}
void loop_capture_info(int n) {
  cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  for (int i = 0; i < n; ++i) (void)cudaStreamGetCaptureInfo(nullptr, &st, &id);
}

struct variant {
  const char* label;
  const char* scope_name;  // nullptr for the raw loop
  void (*loop)(int);
  void (*before)();  // switches set outside the timed loop
  void (*after)();
  std::vector<double> ns_per_iter;
  std::uint64_t device_calls = 0;  // device-timed instances in the last repetition
  std::uint64_t calls = 0;
};

double timed(void (*loop)(int)) {
  const auto t0 = std::chrono::steady_clock::now();
  loop(iterations);
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations;
}

// --- part 2: device time of a workload --------------------------------------------------------------

enum class wrap { none, raw_per_kernel, per_kernel, per_kernel_sampled, whole };

void workload_kernels_plain() {
  for (int k = 0; k < workload_kernels; ++k) spin(workload_kernel_us);
}
void workload_kernels_raw_pairs() {
  for (int k = 0; k < workload_kernels; ++k) {
    cudaEventRecord(raw_begin[k % raw_pairs], nullptr);
    spin(workload_kernel_us);
    cudaEventRecord(raw_end[k % raw_pairs], nullptr);
  }
}
void workload_kernels_scoped() {
  for (int k = 0; k < workload_kernels; ++k) {
    PROF_SCOPE("bench_wl_kernel");
    spin(workload_kernel_us);
  }
}
void workload_kernels_sampled() {
  for (int k = 0; k < workload_kernels; ++k) {
    PROF_SCOPE("bench_wl_kernel_sampled_10");
    spin(workload_kernel_us);
  }
}

// Device ms of one run of the workload, between a raw event pair.
float run_workload(wrap w, cudaEvent_t b, cudaEvent_t e, bool& ok) {
  spin(500);  // gate: everything below is queued before the GPU reaches it
  ok = cuda_ok(cudaEventRecord(b, nullptr), "cudaEventRecord") && ok;
  if (w == wrap::none) {
    workload_kernels_plain();
  } else if (w == wrap::raw_per_kernel) {
    workload_kernels_raw_pairs();
  } else if (w == wrap::per_kernel) {
    workload_kernels_scoped();
  } else if (w == wrap::per_kernel_sampled) {
    workload_kernels_sampled();
  } else {
    PROF_SCOPE("bench_wl_whole");
    workload_kernels_plain();
  }
  ok = cuda_ok(cudaEventRecord(e, nullptr), "cudaEventRecord") && ok;
  ok = cuda_ok(cudaEventSynchronize(e), "cudaEventSynchronize") && ok;
  float ms = 0;
  ok = cuda_ok(cudaEventElapsedTime(&ms, b, e), "cudaEventElapsedTime") && ok;
  return ms;
}

}  // namespace

int main() {
  int count = 0;
  const cudaError_t ce = cudaGetDeviceCount(&count);
  (void)cudaGetLastError();
  if (ce != cudaSuccess || count == 0) {
    std::printf("no CUDA device: skipped (%s)\n", ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
    return 0;
  }
  int device = 0, driver = 0, runtime = 0;
  BENCH_CUDA(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  BENCH_CUDA(cudaGetDeviceProperties(&prop, device));
  BENCH_CUDA(cudaDriverGetVersion(&driver));
  BENCH_CUDA(cudaRuntimeGetVersion(&runtime));
  std::printf("scopeprof device benchmark\n");
  std::printf("  GPU %d: %s (sm_%d%d), driver %d.%d, runtime %d.%d, host clock %s\n", device, prop.name, prop.major,
              prop.minor, driver / 1000, (driver % 1000) / 10, runtime / 1000, (runtime % 1000) / 10,
              scopeprof::to_string(scopeprof::host_clock()));

  for (int k = 0; k < raw_pairs; ++k) {
    BENCH_CUDA(cudaEventCreate(&raw_begin[k]));
    BENCH_CUDA(cudaEventCreate(&raw_end[k]));
  }
  spin(1);  // module load
  BENCH_CUDA(cudaDeviceSynchronize());
  { PROF_SCOPE("bench_probe"); }  // the first device-timed scope looks for the GPU and the driver calls
  scopeprof::reset();
  if (!scopeprof::detail::g_driver.ok) {
    std::printf("driver entry points not found: scopes use the runtime calls; driver rows skipped\n");
    return 1;
  }

  std::vector<variant> variants = {
      {"(a) raw: 2x cudaEventRecord", nullptr, loop_raw, nullptr, nullptr, {}},
      {"(a') raw: 2x cuEventRecord (driver)", nullptr, loop_raw_driver, nullptr, nullptr, {}},
      {"(b) PROF_SCOPE, device-timed", "bench_device_timed", loop_device, nullptr, nullptr, {}},
      // By name: the global set_device_sampling(N) would also reach the PROF_SCOPE_HOST site of (d).
      {"(c) PROF_SCOPE, sampling 1/10", "bench_sampled_10", loop_sampled,
       [] { scopeprof::set_device_sampling("bench_sampled_10", 10); },
       [] { scopeprof::set_device_sampling("bench_sampled_10", 1); }, {}},
      {"(d) PROF_SCOPE_HOST", "bench_host_only", loop_host, nullptr, nullptr, {}},
      {"(e) PROF_SCOPE, device timing off", "bench_timing_off", loop_off, [] { scopeprof::set_device_timing(false); },
       [] { scopeprof::set_device_timing(true); }, {}},
  };

  // One untimed repetition of each fills the event pools and the record buffers; then the timed ones,
  // every variant once per repetition.
  bool ok = true;
  for (int rep = -1; rep < repetitions; ++rep) {
    for (auto& v : variants) {
      if (v.before) v.before();
      const double ns = timed(v.loop);
      if (v.after) v.after();
      ok = cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize") && ok;
      const scopeprof::report r = scopeprof::collect();
      if (v.scope_name != nullptr) {
        const scopeprof::flat_row* f = r.find(v.scope_name);
        v.calls = f ? f->calls : 0;
        v.device_calls = f ? f->device_calls : 0;
      }
      if (rep == -1 && v.loop == loop_device) std::printf("  device evidence: %s\n", r.sources().device.c_str());
      scopeprof::reset();
      if (rep >= 0) v.ns_per_iter.push_back(ns);
    }
  }
  if (!ok) return 1;

  const double raw = median(variants[0].ns_per_iter);
  std::printf("\nhost cost per iteration (median of %d repetitions of %d iterations)\n", repetitions, iterations);
  std::printf("  %-36s %10s %10s %10s %10s   %s\n", "variant", "ns/iter", "min", "max", "x raw", "device-timed/calls");
  for (const auto& v : variants) {
    const double med = median(v.ns_per_iter);
    const auto mm = std::minmax_element(v.ns_per_iter.begin(), v.ns_per_iter.end());
    std::printf("  %-36s %10.1f %10.1f %10.1f %10.2f", v.label, med, *mm.first, *mm.second, raw > 0 ? med / raw : 0.0);
    if (v.scope_name != nullptr)
      std::printf("   %llu/%llu", static_cast<unsigned long long>(v.device_calls), static_cast<unsigned long long>(v.calls));
    std::printf("\n");
  }
  const double ratio = raw > 0 ? median(variants[2].ns_per_iter) / raw : 0.0;
  std::printf("  goal: device-timed / raw <= 1.10: %.2f  %s\n", ratio, ratio <= 1.10 ? "met" : "NOT MET");
  if (variants[2].device_calls != static_cast<std::uint64_t>(iterations))
    std::printf("  WARNING: only %llu of %d (b) scopes were device-timed in the last repetition\n",
                static_cast<unsigned long long>(variants[2].device_calls), iterations);
  if (variants[3].device_calls != static_cast<std::uint64_t>(iterations / 10))
    std::printf("  WARNING: %llu of %d (c) scopes were device-timed, expected %d\n",
                static_cast<unsigned long long>(variants[3].device_calls), iterations, iterations / 10);
  if (variants[4].device_calls != 0)
    std::printf("  WARNING: %llu PROF_SCOPE_HOST scopes were device-timed (they never should be)\n",
                static_cast<unsigned long long>(variants[4].device_calls));

  // Where a device-timed scope's host time goes: the CUDA calls it makes, each timed alone.
  struct call_cost {
    const char* label;
    void (*loop)(int);
    int per_scope;
    std::vector<double> ns;
  } calls[] = {{"cuEventRecord (driver, default stream)", loop_driver_record, 2, {}},
               {"cuCtxGetCurrent (driver)", loop_driver_ctx_current, 1, {}},
               {"cuStreamIsCapturing (driver)", loop_driver_is_capturing, 1, {}},
               // Not made by a scope any more (the runtime fallback's calls), for comparison:
               {"cudaEventRecord (runtime)", loop_record, 0, {}},
               {"cudaPeekAtLastError (runtime)", loop_peek, 0, {}},
               {"cudaGetDevice (runtime)", loop_get_device, 0, {}},
               {"cudaStreamGetCaptureInfo (runtime)", loop_capture_info, 0, {}}};
  for (int rep = -1; rep < repetitions; ++rep)
    for (auto& c : calls) {
      const double ns = timed(c.loop);
      ok = cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize") && ok;
      if (rep >= 0) c.ns.push_back(ns);
    }
  if (!ok) return 1;
  std::printf("\nCUDA calls of one device-timed scope (ns per call, median of %d x %d)\n", repetitions, iterations);
  double sum = 0;
  for (auto& c : calls) {
    const double med = median(c.ns);
    sum += med * c.per_scope;
    std::printf("  %-36s %10.1f  x%d\n", c.label, med, c.per_scope);
  }
  std::printf("  %-36s %10.1f  (measured scope (b): %.1f; the rest is scopeprof's own work)\n", "sum per scope", sum,
              median(variants[2].ns_per_iter));

  // Part 2.
  cudaEvent_t wb = nullptr, we = nullptr;
  BENCH_CUDA(cudaEventCreate(&wb));
  BENCH_CUDA(cudaEventCreate(&we));
  constexpr int n_modes = 5;
  const wrap modes[n_modes] = {wrap::none, wrap::raw_per_kernel, wrap::per_kernel, wrap::per_kernel_sampled, wrap::whole};
  const char* mode_label[n_modes] = {"uninstrumented", "raw event pair per kernel (20)", "PROF_SCOPE per kernel (20)",
                                     "PROF_SCOPE per kernel, sampling 1/10", "one PROF_SCOPE around all"};
  scopeprof::set_device_sampling("bench_wl_kernel_sampled_10", 10);
  std::vector<double> ms[n_modes];
  for (int rep = -3; rep < workload_reps; ++rep) {
    for (int m = 0; m < n_modes; ++m) {
      const float t = run_workload(modes[m], wb, we, ok);
      (void)scopeprof::collect();
      scopeprof::reset();
      if (rep >= 0) ms[m].push_back(t);
    }
  }
  if (!ok) return 1;
  const double base = median(ms[0]);
  std::printf("\ndevice time of %d kernels of %.0f us on one stream (median of %d, GPU time only)\n", workload_kernels,
              workload_kernel_us, workload_reps);
  std::printf("  %-36s %10s %10s\n", "variant", "ms", "change");
  for (int m = 0; m < n_modes; ++m) {
    const double med = median(ms[m]);
    std::printf("  %-36s %10.4f %+9.2f%%\n", mode_label[m], med, base > 0 ? (med / base - 1) * 100 : 0.0);
  }
  for (int m = 2; m < n_modes; ++m) {
    const double change = base > 0 ? (median(ms[m]) / base - 1) * 100 : 0.0;
    std::printf("  goal: %s changes device time by <= 1%%: %+.2f%%  %s\n", mode_label[m], change,
                change <= 1.0 ? "met" : "NOT MET");
  }

  for (int k = 0; k < raw_pairs; ++k) {
    cudaEventDestroy(raw_begin[k]);
    cudaEventDestroy(raw_end[k]);
  }
  cudaEventDestroy(wb);
  cudaEventDestroy(we);
  return 0;
}
