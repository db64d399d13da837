// scopeprof benchmark: the streaming statistics primitives (detail/running_stats.hpp, detail/log_histogram.hpp),
// next to the cheapest histogram there is, a plain `++counts[v >> 10]`. Printed: ns per operation (thread CPU
// time) and each one's ratio to that baseline, all from the same run. Nothing is asserted about time.
//
//   scopeprof_bench_stats [benchmark flags]
//
// The values are log-uniform over 3 octaves (100 us .. 800 us), read from a 4096-entry table in order, so
// the branch predictor cannot learn them; the histograms are filled first, so record() stays in its window.
// call_path_fold: ns to fold one finished scope into the per-call-path statistics (detail/call_path_fold.hpp),
// for the records of a training step (15 scopes, 3 levels) repeated under an outer scope that stays open.

#include <scopeprof/detail/call_path_fold.hpp>
#include <scopeprof/detail/log_histogram.hpp>
#include <scopeprof/detail/running_stats.hpp>

#include "capture_reporter.hpp"
#include "gbench_compat.hpp"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using scopeprof::detail::log_histogram;
using scopeprof::detail::running_stats;

constexpr std::size_t kValues = 4096;  // a power of two: the index wraps with a mask

const std::vector<std::int64_t>& values() {
  static const std::vector<std::int64_t> v = [] {
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> octave(0.0, 3.0);
    std::vector<std::int64_t> out(kValues);
    for (auto& x : out) x = static_cast<std::int64_t>(100000.0 * std::exp2(octave(rng)));
    return out;
  }();
  return v;
}

log_histogram filled(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> octave(0.0, 3.0);
  log_histogram h;
  for (int i = 0; i < 100000; ++i) h.record(static_cast<std::int64_t>(100000.0 * std::exp2(octave(rng))));
  return h;
}

void BM_baseline_array_increment(benchmark::State& state) {
  const std::vector<std::int64_t>& v = values();
  std::vector<std::uint64_t> counts(1024);  // 800000 >> 10 = 781
  std::size_t i = 0;
  for (auto _ : state) {
    ++counts[static_cast<std::size_t>(v[i++ & (kValues - 1)] >> 10)];
  }
  benchmark::DoNotOptimize(counts.data());
  benchmark::ClobberMemory();
}

void BM_running_stats_add(benchmark::State& state) {
  const std::vector<std::int64_t>& v = values();
  running_stats s;
  std::size_t i = 0;
  for (auto _ : state) s.add(v[i++ & (kValues - 1)]);
  benchmark::DoNotOptimize(s);
}

void BM_log_histogram_record(benchmark::State& state) {
  const std::vector<std::int64_t>& v = values();
  log_histogram h;
  for (std::int64_t x : v) h.record(x);  // the window now covers every value
  std::size_t i = 0;
  for (auto _ : state) h.record(v[i++ & (kValues - 1)]);
  benchmark::DoNotOptimize(h);
  state.counters["buckets"] = static_cast<double>(h.bucket_count());
}

void BM_log_histogram_quantile(benchmark::State& state) {
  const log_histogram h = filled(1);
  const double qs[4] = {0.5, 0.9, 0.99, 0.25};
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(h.quantile(qs[i++ & 3]));
  state.counters["buckets"] = static_cast<double>(h.bucket_count());
}

void BM_log_histogram_merge(benchmark::State& state) {
  log_histogram a = filled(2);
  const log_histogram b = filled(3);
  for (auto _ : state) {
    a.merge(b);
    benchmark::ClobberMemory();
  }
  benchmark::DoNotOptimize(a);
  state.counters["buckets"] = static_cast<double>(b.bucket_count());
}

/// One training step as a thread records it, in post-order: step(1) at depth 1 (under an outer scope that
/// stays open) around 10 calls of 5 sites at depth 2, two of them with 2 calls each at depth 3.
std::vector<scopeprof::detail::fold_input> step_records() {
  std::vector<scopeprof::detail::fold_input> out;
  std::int64_t t = 1000;
  const std::int64_t step_begin = t;
  for (std::uint32_t i = 0; i < 10; ++i) {
    const std::int64_t begin = t;
    if (i % 5 == 0)
      for (std::uint32_t k = 0; k < 2; ++k) {
        out.push_back({20 + k, 3, t + 1, t + 400});
        t += 500;
      }
    t += 1000 + 100 * i;
    out.push_back({10 + i % 5, 2, begin, t});
  }
  out.push_back({1, 1, step_begin, t + 10});
  return out;
}

void BM_call_path_fold(benchmark::State& state) {
  const std::vector<scopeprof::detail::fold_input> step = step_records();
  scopeprof::detail::path_tree tree;
  scopeprof::detail::thread_fold fold;
  std::size_t i = 0;
  for (auto _ : state) {
    fold.add(step[i], tree);
    if (++i == step.size()) i = 0;
  }
  benchmark::DoNotOptimize(tree);
  std::size_t pending = 0;
  fold.for_each_pending([&](std::size_t, const scopeprof::detail::path_tree& t) { pending += t.size(); });
  state.counters["pending_nodes"] = static_cast<double>(pending);
}

using scopeprof_bench::capture_reporter;
using scopeprof_bench::results;  // name -> CPU ns per iteration (median if repeated)

void print_summary(const results& res) {
  const auto base = res.find("baseline_array_increment");
  if (base == res.end() || base->second <= 0) return;
  std::printf("\nstatistics primitives, CPU ns per operation (ratio to ++counts[v >> 10], %.2f ns):\n",
              base->second);
  for (const char* name : {"running_stats_add", "log_histogram_record", "log_histogram_quantile",
                           "log_histogram_merge", "call_path_fold"}) {
    const auto it = res.find(name);
    if (it == res.end()) continue;
    std::printf("  %-24s %10.2f ns  %8.2fx\n", name, it->second, it->second / base->second);
  }
  const log_histogram narrow = filled(4);
  std::printf("  histogram over 3 octaves: %zu counters, %zu bytes\n", narrow.bucket_count(), narrow.memory_bytes());
}

}  // namespace

int main(int argc, char** argv) {
  if (!scopeprof_bench::initialize(argc, argv)) return 1;

  benchmark::RegisterBenchmark("baseline_array_increment", BM_baseline_array_increment);
  benchmark::RegisterBenchmark("running_stats_add", BM_running_stats_add);
  benchmark::RegisterBenchmark("log_histogram_record", BM_log_histogram_record);
  benchmark::RegisterBenchmark("log_histogram_quantile", BM_log_histogram_quantile);
  benchmark::RegisterBenchmark("log_histogram_merge", BM_log_histogram_merge);
  benchmark::RegisterBenchmark("call_path_fold", BM_call_path_fold);

  results res;
  capture_reporter reporter(res, "", isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Defaults
                                                          : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  std::fflush(stdout);
  print_summary(res);
  return 0;
}
