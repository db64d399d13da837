// scopeprof benchmark: what the LibTorch hook adds to a scope when no torch profiler listens (goal: at most
// 20 ns), next to the raw listener check it is made of and torch's own RECORD_USER_SCOPE.
//
// Built twice (bench/CMakeLists.txt), both host-only (no NVTX, no CUDA) and both linking LibTorch:
//   scopeprof_bench_torch        SCOPEPROF_WITH_TORCH=1; the driver: runs its benchmarks, then the sibling
//   scopeprof_bench_torch_base   SCOPEPROF_WITH_TORCH=0 (the same scope without the hook)
// `scopeprof_bench_torch [benchmark flags]` prints both tables and a summary of medians (thread CPU time):
// hook cost = PROF_SCOPE [torch] - PROF_SCOPE [base]. The hook is a compile-time switch, so the two scopes
// cannot share one process; the raw check and RECORD_USER_SCOPE rows come from the driver's own process.
#include <scopeprof.hpp>

#include "capture_reporter.hpp"
#include "gbench_compat.hpp"

#include <ATen/record_function.h>
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

#if SCOPEPROF_WITH_TORCH
constexpr const char* kVariant = "torch";
#else
constexpr const char* kVariant = "base";
#endif
constexpr const char* kMarker = "@@scopeprof_torch ";
constexpr benchmark::IterationCount kBatch = 1 << 16;

// Batches of kBatch; the recorder is reset between batches, outside the timed region, so it never fills.
template <class Body>
void run_batched(benchmark::State& state, Body body) {
  body();
  scopeprof::reset();
  while (state.KeepRunningBatch(kBatch)) {
    for (benchmark::IterationCount i = 0; i < kBatch; ++i) body();
    state.PauseTiming();
    scopeprof::reset();
    state.ResumeTiming();
  }
}

void BM_empty_loop(benchmark::State& state) {
  run_batched(state, [] { benchmark::ClobberMemory(); });
}

void BM_prof_scope(benchmark::State& state) {
  scopeprof::set_enabled(true);
  run_batched(state, [] {
    PROF_SCOPE("bench.torch_scope");
    benchmark::ClobberMemory();
  });
}

void BM_listener_check(benchmark::State& state) {
  run_batched(state, [] {
    auto cb = at::getStepCallbacksUnlessEmpty(at::RecordScope::USER_SCOPE);
    benchmark::DoNotOptimize(cb);
    benchmark::ClobberMemory();
  });
}

void BM_record_user_scope(benchmark::State& state) {
  run_batched(state, [] {
    RECORD_USER_SCOPE("bench.record_user_scope");
    benchmark::ClobberMemory();
  });
}

using scopeprof_bench::capture_reporter;
using scopeprof_bench::results;

std::string own_directory() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  std::string path = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string(".");
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

bool run_sibling(const std::vector<std::string>& flags, results& out) {
  const std::string exe = own_directory() + "/scopeprof_bench_torch_base";
  if (access(exe.c_str(), X_OK) != 0) return false;
  std::string cmd = "'" + exe + "' --scopeprof_child";
  for (const auto& f : flags) cmd += " '" + f + "'";
  std::printf("\n==== scopeprof_bench_torch_base (SCOPEPROF_WITH_TORCH=0) ====\n");
  std::fflush(stdout);
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return false;
  char line[4096];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    if (std::strncmp(line, kMarker, std::strlen(kMarker)) == 0) {
      char key[512];
      double ns = 0;
      if (std::sscanf(line + std::strlen(kMarker), "%511s %lf", key, &ns) == 2) out[key] = ns;
    } else {
      std::fputs(line, stdout);
    }
  }
  return pclose(p) == 0;
}

double get(const results& r, const std::string& k) {
  auto it = r.find(k);
  return it == r.end() ? -1.0 : it->second;
}

}  // namespace

int main(int argc, char** argv) {
  bool child = false;
  std::vector<std::string> flags;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--scopeprof_child") == 0) child = true;
    else flags.emplace_back(argv[i]);
  }
  std::vector<std::string> args{argv[0]};
  for (const auto& f : flags) args.push_back(scopeprof_bench::min_time_flag<benchmark::BenchmarkReporter::Run>(f));
  bool reps = false;
  for (const auto& f : flags) reps = reps || f.rfind("--benchmark_repetitions", 0) == 0;
  if (!reps) {
    args.emplace_back("--benchmark_repetitions=5");
    args.emplace_back("--benchmark_report_aggregates_only=true");
  }
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  int cargc = static_cast<int>(cargs.size());
  benchmark::Initialize(&cargc, cargs.data());

  benchmark::RegisterBenchmark("empty_loop", BM_empty_loop);
  benchmark::RegisterBenchmark("prof_scope", BM_prof_scope);
  if (!child) {
    benchmark::RegisterBenchmark("listener_check", BM_listener_check);
    benchmark::RegisterBenchmark("record_user_scope", BM_record_user_scope);
  }
  results r;
  capture_reporter reporter(r, std::string(kVariant) + "/", benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (child) {
    for (const auto& kv : r) std::printf("%s%s %.4f\n", kMarker, kv.first.c_str(), kv.second);
    return 0;
  }
  const bool sibling = run_sibling(flags, r);
  const double with_hook = get(r, "torch/prof_scope");
  const double without = get(r, "base/prof_scope");
  std::printf("\n==== LibTorch hook cost with no listener: median CPU ns per iteration ====\n");
  std::printf("  %-62s %8.2f\n", "empty loop [torch]", get(r, "torch/empty_loop"));
  std::printf("  %-62s %8.2f\n", "at::getStepCallbacksUnlessEmpty(USER_SCOPE) (the raw check)", get(r, "torch/listener_check"));
  std::printf("  %-62s %8.2f\n", "RECORD_USER_SCOPE, no listener (torch's own macro)", get(r, "torch/record_user_scope"));
  std::printf("  %-62s %8.2f\n", "PROF_SCOPE, SCOPEPROF_WITH_TORCH=1 [torch]", with_hook);
  if (sibling && without > 0) {
    std::printf("  %-62s %8.2f\n", "empty loop [base]", get(r, "base/empty_loop"));
    std::printf("  %-62s %8.2f\n", "PROF_SCOPE, SCOPEPROF_WITH_TORCH=0 [base]", without);
    const double d = with_hook - without;
    std::printf("  %-62s %8.2f ns  goal <= 20.0 ns  %s\n", "hook cost: PROF_SCOPE [torch] - PROF_SCOPE [base]", d,
                d <= 20.0 ? "ok" : "MISSED");
    std::printf("  %-62s %8.2f\n", "ratio PROF_SCOPE [torch] / [base]", with_hook / without);
  } else {
    std::printf("  (scopeprof_bench_torch_base not found or failed: no comparison)\n");
  }
  return 0;
}
