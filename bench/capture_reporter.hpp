// The console table as Google Benchmark prints it, plus each benchmark's CPU time per iteration kept in a
// map for the summary the benchmarks print after their runs: the median when repetitions give one, else
// the run itself; and the start-up every benchmark program shares. Shared by the benchmarks in bench/.
#pragma once

#include "gbench_compat.hpp"

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace scopeprof_bench {

using results = std::map<std::string, double>;  // "prefix" + benchmark name -> CPU ns per iteration

class capture_reporter : public benchmark::ConsoleReporter {
 public:
  /// Keys are `prefix + function name`; `format` as ConsoleReporter takes it (OO_Tabular, OO_Defaults).
  capture_reporter(results& out, std::string prefix, OutputOptions format)
      : benchmark::ConsoleReporter(format), out_(out), prefix_(std::move(prefix)) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (run_without_result(r)) continue;
      const std::string key = prefix_ + r.run_name.function_name;
      const double ns = r.GetAdjustedCPUTime() * unit_ns(r.time_unit);
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") {
        out_[key] = ns;
        have_median_[key] = true;
      } else if (r.run_type == Run::RT_Iteration && !have_median_[key]) {
        out_[key] = ns;  // one repetition only (or the last one until the median arrives)
      }
    }
    benchmark::ConsoleReporter::ReportRuns(runs);
  }

 private:
  static double unit_ns(benchmark::TimeUnit u) {  // --benchmark_time_unit may change it
    switch (u) {
      case benchmark::kSecond: return 1e9;
      case benchmark::kMillisecond: return 1e6;
      case benchmark::kMicrosecond: return 1e3;
      default: return 1.0;
    }
  }
  results& out_;
  std::string prefix_;
  std::map<std::string, bool> have_median_;
};

/// benchmark::Initialize over `args` (args[0] the program), with every --benchmark_min_time in the linked
/// release's form (gbench_compat.hpp). False, after saying which, when an argument was not recognised.
/// The strings outlive the call: the library keeps a pointer to argv[0] and prints it as "Running ...".
inline bool initialize(std::vector<std::string> args) {
  static std::vector<std::string> kept;
  kept = std::move(args);
  for (std::size_t i = 1; i < kept.size(); ++i) kept[i] = min_time_flag<benchmark::BenchmarkReporter::Run>(kept[i]);
  static std::vector<char*> cargs;
  cargs.clear();
  for (auto& a : kept) cargs.push_back(a.data());
  int cargc = static_cast<int>(cargs.size());
  cargs.push_back(nullptr);
  benchmark::Initialize(&cargc, cargs.data());
  return !benchmark::ReportUnrecognizedArguments(cargc, cargs.data());
}
inline bool initialize(int argc, char** argv) { return initialize(std::vector<std::string>(argv, argv + argc)); }

}  // namespace scopeprof_bench
