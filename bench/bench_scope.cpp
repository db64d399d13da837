// scopeprof benchmark: what one scope (entry + exit) costs the host, next to the raw primitives it is made
// of. This file is built three times (bench/CMakeLists.txt), because the backends are compile-time switches
// and one program must see one configuration (mixing them would break the one-definition rule). All three
// are built without device timing (SCOPEPROF_WITH_CUDA=0; bench_device.cu measures that):
//
//   scopeprof_bench        SCOPEPROF_WITH_NVTX=1 (0 when the NVTX3 headers were not found); the driver
//   scopeprof_bench_host   SCOPEPROF_WITH_NVTX=0 (host time only)
//   scopeprof_bench_off    SCOPEPROF_DISABLE (every macro compiled out)
//
// `scopeprof_bench [benchmark flags]` runs its own benchmarks, then runs the two others (found next to it)
// with the same flags, and prints a summary of medians and the ratios the overhead goals are stated in.
// The summary uses thread CPU time (preemption by other work on the machine does not count). Ratios whose
// two terms are compared come from the same process. Defaults:
// --benchmark_repetitions=5 --benchmark_report_aggregates_only=true (give either flag to override).
//
// Every benchmark body runs in batches of kBatch iterations; between batches, with the timer paused, the
// recorder is reset so it never reaches its cap (a full recorder takes the drop path, which is not the
// cost being measured). The same loop shape is used for every row, so the empty loop is a fair baseline.

#include <scopeprof.hpp>

#include "capture_reporter.hpp"
#include "gbench_compat.hpp"

#include <benchmark/benchmark.h>

#if SCOPEPROF_WITH_NVTX
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvtx3.hpp>
#endif

#include <unistd.h>
#if defined(__x86_64__) && !defined(_MSC_VER)
#include <x86intrin.h>
#endif

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace {

#if !SCOPEPROF_ENABLED
constexpr const char* kVariant = "off";
#elif SCOPEPROF_WITH_NVTX
constexpr const char* kVariant = "nvtx";
#else
constexpr const char* kVariant = "host";
#endif

#if defined(SCOPEPROF_BENCH_DRIVER)
constexpr bool kDriver = true;
#else
constexpr bool kDriver = false;
#endif

constexpr benchmark::IterationCount kBatch = 1 << 16;
constexpr std::uint64_t kMaxRecords = std::uint64_t{1} << 20;  // > kBatch + one chunk, whatever the env says

// One benchmark: warm up once (the first entry registers the site and loads NVTX), then batches of
// body(), with `between` run outside the timed region after each batch.
template <class Body, class Between>
void run_batched(benchmark::State& state, Body body, Between between) {
  body();
  scopeprof::reset();
  while (state.KeepRunningBatch(kBatch)) {
    for (benchmark::IterationCount i = 0; i < kBatch; ++i) body();
    state.PauseTiming();
    between();
    state.ResumeTiming();
  }
}

void nothing() {}

// ---- raw primitives ---------------------------------------------------------------------------------

// The counter scopeprof reads (scopeprof::host_clock()), read directly.
template <scopeprof::clock_kind K>
SCOPEPROF_ALWAYS_INLINE std::uint64_t read_counter() noexcept {
#if defined(SCOPEPROF_ARCH_X86_64)
  if constexpr (K == scopeprof::clock_kind::tsc) return __rdtsc();
#endif
#if defined(SCOPEPROF_ARCH_AARCH64)
  if constexpr (K == scopeprof::clock_kind::cntvct) {
    std::uint64_t v;
    asm volatile("mrs %0, cntvct_el0" : "=r"(v));
    return v;
  }
#endif
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

void BM_empty_loop(benchmark::State& state) {
  run_batched(state, [] { benchmark::ClobberMemory(); }, nothing);
}

template <scopeprof::clock_kind K>
void BM_counter_x2(benchmark::State& state) {
  run_batched(
      state,
      [] {
        std::uint64_t a = read_counter<K>();
        benchmark::DoNotOptimize(a);
        std::uint64_t b = read_counter<K>();
        benchmark::DoNotOptimize(b);
      },
      nothing);
}

void BM_steady_clock_x2(benchmark::State& state) {
  run_batched(
      state,
      [] {
        auto a = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(a);
        auto b = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(b);
      },
      nothing);
}

#if SCOPEPROF_WITH_NVTX
void BM_nvtx3_scoped_range(benchmark::State& state) {
  run_batched(
      state,
      [] {
        nvtx3::scoped_range r{"bench.nvtx3"};
        benchmark::ClobberMemory();
      },
      nothing);
}

// A domain and an attributes struct built once, as scopeprof does per call site.
struct raw_domain {
  nvtxDomainHandle_t domain = nullptr;
  nvtxEventAttributes_t attributes{};
  raw_domain() {
    domain = nvtxDomainCreateA("scopeprof.bench");
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.colorType = NVTX_COLOR_ARGB;
    attributes.color = 0xFF4E79A7u;
    nvtxStringHandle_t h = nvtxDomainRegisterStringA(domain, "bench.raw");
    if (h != nullptr) {
      attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
      attributes.message.registered = h;
    } else {
      attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
      attributes.message.ascii = "bench.raw";
    }
  }
};

void BM_nvtx_domain_push_pop(benchmark::State& state) {
  static raw_domain d;
  run_batched(
      state,
      [] {
        nvtxDomainRangePushEx(d.domain, &d.attributes);
        benchmark::ClobberMemory();
        nvtxDomainRangePop(d.domain);
      },
      nothing);
}

template <scopeprof::clock_kind K>
void BM_counter_x2_nvtx3(benchmark::State& state) {
  run_batched(
      state,
      [] {
        std::uint64_t a = read_counter<K>();
        benchmark::DoNotOptimize(a);
        {
          nvtx3::scoped_range r{"bench.nvtx3"};
          benchmark::ClobberMemory();
        }
        std::uint64_t b = read_counter<K>();
        benchmark::DoNotOptimize(b);
      },
      nothing);
}
#endif

// ---- scopeprof ----------------------------------------------------------------------------------------

void BM_prof_scope(benchmark::State& state) {
  scopeprof::set_enabled(true);
  // The first batch of each run is checked (batches are all alike): it must all be recorded, nothing dropped.
  bool checked = false;
  scopeprof::scope_counts first{};
  run_batched(
      state,
      [] {
        PROF_SCOPE("bench.scope");
        benchmark::ClobberMemory();
      },
      [&] {
        if (!checked && SCOPEPROF_ENABLED) {
          first = scopeprof::collect().counts();
          checked = true;
        }
        scopeprof::reset();
      });
  if (SCOPEPROF_ENABLED && checked && (first.dropped != 0 || first.recorded < static_cast<std::uint64_t>(kBatch)))
    state.SkipWithError("scopes were dropped or not recorded: the figure is not the normal path");
}

// A scope that declares its work (PROF_SCOPE_WORK): the scope plus one mark in the thread's work log.
void BM_prof_scope_work(benchmark::State& state) {
  scopeprof::set_enabled(true);
  run_batched(
      state,
      [] {
        PROF_SCOPE_WORK("bench.work", 4096.0, 1024.0);
        benchmark::ClobberMemory();
      },
      [] { scopeprof::reset(); });
}

[[maybe_unused]] void BM_prof_scope_runtime_disabled(benchmark::State& state) {
  scopeprof::set_enabled(false);
  run_batched(
      state,
      [] {
        PROF_SCOPE("bench.scope_disabled");
        benchmark::ClobberMemory();
      },
      nothing);
  scopeprof::set_enabled(true);
}

// ---- results -----------------------------------------------------------------------------------------

using scopeprof_bench::capture_reporter;
using scopeprof_bench::results;  // "variant/name" -> median CPU ns per iteration

constexpr const char* kMarker = "@@scopeprof ";

bool has_flag(const std::vector<std::string>& args, const char* prefix) {
  for (const auto& a : args)
    if (a.rfind(prefix, 0) == 0) return true;
  return false;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') q += "'\\''";
    else q += c;
  }
  return q + "'";
}

std::string own_directory(const char* argv0) {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string path = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string(argv0);
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

// Run a sibling executable with the same benchmark flags; forward its output, keep its results.
// Returns false when it is missing or failed.
// `drain`: with the background drain thread folding alongside (rows keyed "drain/...").
bool run_sibling(const std::string& dir, const char* name, const std::vector<std::string>& args, results& out,
                 bool drain = false) {
  const std::string exe = dir + "/" + name;
  if (access(exe.c_str(), X_OK) != 0) {
    std::printf("\n(%s not found next to this program: its rows are n/a)\n", name);
    return false;
  }
  std::string cmd = shell_quote(exe) + " --scopeprof_child" + (drain ? " --scopeprof_drain" : "");
  for (const auto& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>&1";
  std::printf("\n==== %s%s ====\n", name, drain ? " (background drain thread on)" : "");
  std::fflush(stdout);
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return false;
  char line[4096];
  const std::size_t marker_len = std::strlen(kMarker);
  while (std::fgets(line, sizeof line, p) != nullptr) {
    if (std::strncmp(line, kMarker, marker_len) == 0) {
      char key[512];
      double ns = 0;
      if (std::sscanf(line + marker_len, "%511s %lf", key, &ns) == 2) out[key] = ns;
    } else {
      std::fputs(line, stdout);
    }
  }
  return pclose(p) == 0;
}

struct summary {
  const results& r;

  const double* get(const std::string& key) const {
    auto it = r.find(key);
    return it == r.end() ? nullptr : &it->second;
  }

  void row(const char* label, const std::string& key) const {
    const double* v = get(key);
    const std::string variant = key.substr(0, key.find('/'));
    const double* loop = get(variant + "/empty_loop");
    if (v == nullptr) {
      std::printf("  %-52s %10s\n", label, "n/a");
      return;
    }
    if (loop != nullptr)
      std::printf("  %-52s %10.2f %10.2f   [%s]\n", label, *v, *v - *loop, variant.c_str());
    else
      std::printf("  %-52s %10.2f %10s   [%s]\n", label, *v, "", variant.c_str());
  }

  // num / den, raw and net of each side's empty loop; `goal` is an upper bound.
  void ratio(const char* label, const std::string& num, const std::string& den, double goal) const {
    const double* a = get(num);
    const double* b = get(den);
    if (a == nullptr || b == nullptr) {
      std::printf("  %-66s %8s\n", label, "n/a");
      return;
    }
    const double* la = get(num.substr(0, num.find('/')) + "/empty_loop");
    const double* lb = get(den.substr(0, den.find('/')) + "/empty_loop");
    const double raw = *a / *b;
    std::printf("  %-66s %8.2f", label, raw);
    if (la && lb && *b - *lb > 0) std::printf("  (net of loop %.2f)", (*a - *la) / (*b - *lb));
    std::printf("  goal <= %.1f  %s\n", goal, raw <= goal ? "ok" : "MISSED");
  }

  void difference(const char* label, const std::string& a_key, const std::string& b_key, double goal) const {
    const double* a = get(a_key);
    const double* b = get(b_key);
    if (a == nullptr || b == nullptr) {
      std::printf("  %-66s %8s\n", label, "n/a");
      return;
    }
    const double d = *a - *b;
    std::printf("  %-66s %8.2f ns  goal <= %.1f ns  %s\n", label, d, goal, d <= goal ? "ok" : "MISSED");
  }

  void absolute(const char* label, const std::string& key, double goal) const {
    const double* v = get(key);
    if (v == nullptr) {
      std::printf("  %-66s %8s\n", label, "n/a");
      return;
    }
    std::printf("  %-66s %8.2f ns  goal <= %.1f ns  %s\n", label, *v, goal, *v <= goal ? "ok" : "MISSED");
  }
};

void print_summary(const results& r, const char* counter_name) {
  const summary s{r};
  const std::string counter = std::string("2 counter reads (") + counter_name + ")";
  std::printf("\n==== scopeprof overhead summary: median CPU ns per iteration ====\n");
  std::printf("  (thread CPU time, which a busy machine disturbs less than real time; both are in the tables above)\n");
  std::printf("  host clock: %s\n", counter_name);
  const char* tool = std::getenv("NVTX_INJECTION64_PATH");
  if (tool != nullptr && *tool != '\0')
    std::printf("  NOTE: NVTX_INJECTION64_PATH=%s: a tool is attached, the 'no tool' rows are not that\n", tool);
  std::printf("  executables, all SCOPEPROF_WITH_CUDA=0: [nvtx] scopeprof_bench (NVTX=%d)"
              "  [host] scopeprof_bench_host (NVTX=0)  [off] scopeprof_bench_off (SCOPEPROF_DISABLE)\n",
              SCOPEPROF_WITH_NVTX);
  std::printf("  %-52s %10s %10s\n", "", "ns", "net of loop");
  s.row("empty loop", "nvtx/empty_loop");
  s.row(counter.c_str(), "nvtx/counter_x2");
  s.row("2 x std::chrono::steady_clock::now()", "nvtx/steady_clock_x2");
  s.row("nvtx3::scoped_range (no tool)", "nvtx/nvtx3_scoped_range");
  s.row("nvtxDomainRangePushEx + Pop, prebuilt attributes", "nvtx/nvtx_domain_push_pop");
  s.row((counter + " + nvtx3::scoped_range").c_str(), "nvtx/counter_x2_nvtx3");
  s.row("empty loop", "host/empty_loop");
  s.row(counter.c_str(), "host/counter_x2");
  s.row("PROF_SCOPE host only (SCOPEPROF_WITH_NVTX=0)", "host/prof_scope");
  s.row("PROF_SCOPE with NVTX, no tool attached", "nvtx/prof_scope");
  s.row("PROF_SCOPE_WORK host only (the scope + one work mark)", "host/prof_scope_work");
  s.row("PROF_SCOPE runtime-disabled (set_enabled(false))", "nvtx/prof_scope_runtime_disabled");
  s.row("PROF_SCOPE runtime-disabled, host-only build", "host/prof_scope_runtime_disabled");
  s.row("PROF_SCOPE compiled out (SCOPEPROF_DISABLE)", "off/prof_scope");
  s.row("2 counter reads, drain thread on", "drain/counter_x2");
  s.row("PROF_SCOPE host only, drain thread folding alongside", "drain/prof_scope");
  std::printf("\n  goals (ratios from medians of one process; 'net' subtracts that process's empty loop)\n");
  s.ratio("host-only PROF_SCOPE / 2 counter reads [host]", "host/prof_scope", "host/counter_x2", 1.2);
  s.ratio("NVTX PROF_SCOPE / (2 counter reads + nvtx3::scoped_range) [nvtx]", "nvtx/prof_scope",
          "nvtx/counter_x2_nvtx3", 1.5);
  s.difference("NVTX PROF_SCOPE - host-only PROF_SCOPE [nvtx - host]", "nvtx/prof_scope", "host/prof_scope", 3.0);
  s.absolute("runtime-disabled PROF_SCOPE [nvtx]", "nvtx/prof_scope_runtime_disabled", 2.0);
  s.ratio("PROF_SCOPE_WORK / PROF_SCOPE, host only [host]", "host/prof_scope_work", "host/prof_scope", 2.0);
  std::printf("\n  the drain thread's effect on a thread making scopes back to back (it folds each one on another\n"
              "  core; a sibling hyperthread shares the core's resources with the scope thread)\n");
  s.ratio("host-only PROF_SCOPE, drain on / 2 counter reads [drain]", "drain/prof_scope", "drain/counter_x2", 1.5);
}

}  // namespace

int main(int argc, char** argv) {
  // Our own flag, then defaults for repetitions, then Google Benchmark's flags.
  bool child = false, drain = false;
  std::vector<std::string> passthrough;  // the user's benchmark flags, for the siblings
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--scopeprof_child") == 0) child = true;
    else if (std::strcmp(argv[i], "--scopeprof_drain") == 0) drain = true;
    else passthrough.emplace_back(argv[i]);
  }
  // The goal rows time the scope's own path: the background drain thread (which folds every scope on
  // another core) is off, read at the first scope below; the [drain] rows turn it on.
  setenv("SCOPEPROF_DRAIN", drain ? "1" : "0", 1);
  std::vector<std::string> args{argv[0]};
  args.insert(args.end(), passthrough.begin(), passthrough.end());
  if (!has_flag(passthrough, "--benchmark_repetitions")) args.emplace_back("--benchmark_repetitions=5");
  if (!has_flag(passthrough, "--benchmark_report_aggregates_only") &&
      !has_flag(passthrough, "--benchmark_display_aggregates_only"))
    args.emplace_back("--benchmark_report_aggregates_only=true");
  if (!scopeprof_bench::initialize(std::move(args))) return 1;

  // The counter the library reads, chosen once at start-up.
  const scopeprof::clock_kind clock = scopeprof::host_clock();
  scopeprof::set_max_records(kMaxRecords);
  const char* counter_name = "steady_clock";
  switch (clock) {
#if defined(SCOPEPROF_ARCH_X86_64)
    case scopeprof::clock_kind::tsc:
      benchmark::RegisterBenchmark("counter_x2", BM_counter_x2<scopeprof::clock_kind::tsc>);
#if SCOPEPROF_WITH_NVTX
      benchmark::RegisterBenchmark("counter_x2_nvtx3", BM_counter_x2_nvtx3<scopeprof::clock_kind::tsc>);
#endif
      counter_name = "rdtsc";
      break;
#endif
#if defined(SCOPEPROF_ARCH_AARCH64)
    case scopeprof::clock_kind::cntvct:
      benchmark::RegisterBenchmark("counter_x2", BM_counter_x2<scopeprof::clock_kind::cntvct>);
#if SCOPEPROF_WITH_NVTX
      benchmark::RegisterBenchmark("counter_x2_nvtx3", BM_counter_x2_nvtx3<scopeprof::clock_kind::cntvct>);
#endif
      counter_name = "cntvct_el0";
      break;
#endif
    default:
      benchmark::RegisterBenchmark("counter_x2", BM_counter_x2<scopeprof::clock_kind::steady>);
#if SCOPEPROF_WITH_NVTX
      benchmark::RegisterBenchmark("counter_x2_nvtx3", BM_counter_x2_nvtx3<scopeprof::clock_kind::steady>);
#endif
      break;
  }
  benchmark::RegisterBenchmark("empty_loop", BM_empty_loop);
  benchmark::RegisterBenchmark("steady_clock_x2", BM_steady_clock_x2);
#if SCOPEPROF_WITH_NVTX
  benchmark::RegisterBenchmark("nvtx3_scoped_range", BM_nvtx3_scoped_range);
  benchmark::RegisterBenchmark("nvtx_domain_push_pop", BM_nvtx_domain_push_pop);
#endif
  benchmark::RegisterBenchmark("prof_scope", BM_prof_scope);
  benchmark::RegisterBenchmark("prof_scope_work", BM_prof_scope_work);
#if SCOPEPROF_ENABLED
  benchmark::RegisterBenchmark("prof_scope_runtime_disabled", BM_prof_scope_runtime_disabled);
#endif

  results res;
  capture_reporter reporter(res, std::string(drain ? "drain" : kVariant) + "/",
                            isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Defaults
                                                  : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  std::fflush(stdout);

  if (child) {
    for (const auto& [key, ns] : res) std::printf("%s%s %.6f\n", kMarker, key.c_str(), ns);
    return 0;
  }

  if (!kDriver) return 0;  // a sibling run on its own: its table above is the whole output
  bool ok = true;
  const std::string dir = own_directory(argv[0]);
  ok = run_sibling(dir, "scopeprof_bench_host", passthrough, res) && ok;
  ok = run_sibling(dir, "scopeprof_bench_off", passthrough, res) && ok;
  std::vector<std::string> drain_args = passthrough;
  if (!has_flag(drain_args, "--benchmark_filter"))
    drain_args.emplace_back("--benchmark_filter=^(empty_loop|counter_x2|prof_scope)$");
  ok = run_sibling(dir, "scopeprof_bench_host", drain_args, res, true) && ok;
  print_summary(res, counter_name);
  std::fflush(stdout);
  return ok ? 0 : 1;
}
