// bench/gbench_compat.hpp against the two layouts of Google Benchmark's BenchmarkReporter::Run: 1.7's
// (bool error_occurred) and 1.8's and later (enum skipped). No Google Benchmark needed: the layouts are
// reproduced here with the members the helpers read.
#include "gbench_compat.hpp"

#include <doctest/doctest.h>

#include <string>

namespace {

struct run_1_7 {
  bool error_occurred = false;
};

enum skipped_1_8 : unsigned { NotSkipped = 0, SkippedWithMessage, SkippedWithError };
struct run_1_8 {
  skipped_1_8 skipped = NotSkipped;
};

using scopeprof_bench::is_gbench_1_8_or_later;
using scopeprof_bench::min_time_flag;
using scopeprof_bench::run_without_result;

static_assert(!is_gbench_1_8_or_later<run_1_7>());
static_assert(is_gbench_1_8_or_later<run_1_8>());
static_assert(!run_without_result(run_1_7{false}));
static_assert(run_without_result(run_1_7{true}));
static_assert(!run_without_result(run_1_8{NotSkipped}));
static_assert(run_without_result(run_1_8{SkippedWithMessage}));
static_assert(run_without_result(run_1_8{SkippedWithError}));

}  // namespace

TEST_CASE("--benchmark_min_time is given in the form the linked Google Benchmark takes") {
  SUBCASE("1.7: seconds as a bare number") {
    CHECK(min_time_flag<run_1_7>("--benchmark_min_time=0.05") == "--benchmark_min_time=0.05");
    CHECK(min_time_flag<run_1_7>("--benchmark_min_time=0.05s") == "--benchmark_min_time=0.05");
    CHECK(min_time_flag<run_1_7>("--benchmark_min_time=2") == "--benchmark_min_time=2");
  }
  SUBCASE("1.8 and later: seconds with an s, iterations with an x") {
    CHECK(min_time_flag<run_1_8>("--benchmark_min_time=0.05") == "--benchmark_min_time=0.05s");
    CHECK(min_time_flag<run_1_8>("--benchmark_min_time=1.") == "--benchmark_min_time=1.s");
    CHECK(min_time_flag<run_1_8>("--benchmark_min_time=0.05s") == "--benchmark_min_time=0.05s");
    CHECK(min_time_flag<run_1_8>("--benchmark_min_time=100x") == "--benchmark_min_time=100x");
  }
  SUBCASE("other arguments pass unchanged") {
    for (const char* arg : {"--benchmark_repetitions=5", "--benchmark_min_time=", "--benchmark_min_time", "-v"}) {
      CHECK(min_time_flag<run_1_7>(arg) == arg);
      CHECK(min_time_flag<run_1_8>(arg) == arg);
    }
  }
}
