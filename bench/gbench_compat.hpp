// Google Benchmark API differences between the releases the benchmarks build against (Debian 12's 1.7 and
// current ones). Google Benchmark defines no version macro, so the release is told from a declaration:
// 1.8 replaced BenchmarkReporter::Run's `bool error_occurred` with `skipped`. Pass that Run type as the
// template argument. Needs no Google Benchmark header (tests/bench/test_gbench_compat.cpp checks both
// layouts).
#pragma once

#include <string>
#include <type_traits>
#include <utility>

namespace scopeprof_bench {

namespace detail {
template <class Run, class = void>
struct has_skipped : std::false_type {};
template <class Run>
struct has_skipped<Run, std::void_t<decltype(std::declval<const Run&>().skipped)>> : std::true_type {};
}  // namespace detail

/// True when the Run type is Google Benchmark 1.8's or later.
template <class Run>
constexpr bool is_gbench_1_8_or_later() {
  return detail::has_skipped<Run>::value;
}

/// True when a Run carries no measurement (the benchmark failed, or skipped itself in 1.8+).
template <class Run>
constexpr bool run_without_result(const Run& r) {
  if constexpr (detail::has_skipped<Run>::value) {
    return static_cast<bool>(r.skipped);  // an enum whose zero is NotSkipped
  } else {
    return static_cast<bool>(r.error_occurred);
  }
}

/// --benchmark_min_time=V in the linked release's form, so one command line works with both: 1.7 takes
/// seconds as a bare number and rejects "0.5s"; 1.8+ takes "0.5s" or "100x" and warns on a bare number.
/// Any other argument is returned unchanged.
template <class Run>
std::string min_time_flag(const std::string& arg) {
  static const std::string prefix = "--benchmark_min_time=";
  if (arg.compare(0, prefix.size(), prefix) != 0 || arg.size() == prefix.size()) return arg;
  const char last = arg.back();
  const bool bare_number = (last >= '0' && last <= '9') || last == '.';
  if (is_gbench_1_8_or_later<Run>()) return bare_number ? arg + "s" : arg;
  return last == 's' ? arg.substr(0, arg.size() - 1) : arg;
}

}  // namespace scopeprof_bench
