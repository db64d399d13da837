// The streaming pieces of the writers: microseconds from integer nanoseconds (the printf form, exactly),
// the sink's direct path mixed with its string path, and a string sink that reuses an earlier buffer.
#include "output_check.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

std::string printf_us(std::int64_t ns) {  // the form the writers had before: "%s%llu.%03llu"
  const bool neg = ns < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-(ns + 1)) + 1u : static_cast<std::uint64_t>(ns);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%" PRIu64 ".%03" PRIu64, neg ? "-" : "", a / 1000u, a % 1000u);
  return buf;
}

}  // namespace

TEST_CASE("write_ns_as_us writes exactly the three-decimal microseconds of printf") {
  using lim = std::numeric_limits<std::int64_t>;
  std::size_t mismatches = 0;
  const auto check = [&](std::int64_t ns) {
    char buf[scopeprof::detail::max_us_chars + 1];
    const std::string mine(buf, scopeprof::detail::write_ns_as_us(buf, ns));
    if (mine != printf_us(ns) && ++mismatches < 10) FAIL_CHECK(ns << ": " << mine << " vs " << printf_us(ns));
    CHECK(mine.size() <= scopeprof::detail::max_us_chars);
    if (mine != scopeprof::detail::format_ns_as_us(ns) && ++mismatches < 10) FAIL_CHECK(ns);
  };
  for (const std::int64_t v : {lim::min(), lim::min() + 1, lim::max(), lim::max() - 1, std::int64_t{0}, std::int64_t{1},
                               std::int64_t{-1}, std::int64_t{999}, std::int64_t{-999}, std::int64_t{1000},
                               std::int64_t{-1000}, std::int64_t{1001}, std::int64_t{123456789}})
    check(v);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const auto v = static_cast<std::int64_t>(rng());
    check(v >> (rng() % 64));
  }
  CHECK(mismatches == 0);
  CHECK(scopeprof::detail::format_ns_as_us(-1) == "-0.001");
  CHECK(scopeprof::detail::format_ns_as_us(12345) == "12.345");
}

namespace {

// A sink that keeps every chunk it is handed, to see the order and the chunking.
class chunk_sink final : public scopeprof::detail::output_sink {
 public:
  chunk_sink() : output_sink(64) {}
  std::string all;
  std::size_t chunks = 0;

 protected:
  void consume(const char* data, std::size_t size) override {
    all.append(data, size);
    ++chunks;
  }
};

}  // namespace

TEST_CASE("a sink keeps the order of text() appends and direct writes, across flushes") {
  chunk_sink sink;
  std::string expected;
  for (int i = 0; i < 500; ++i) {
    const std::string piece = "<" + std::to_string(i) + ">";
    if (i % 3 == 0) {
      sink.text() += piece;
    } else if (i % 3 == 1) {
      sink.append(piece);
    } else {
      char* p = sink.reserve(1000);  // more room than used
      for (const char c : piece) *p++ = c;
      sink.commit(p);
    }
    expected += piece;
    sink.row_done();
  }
  sink.flush();
  CHECK(sink.all == expected);
  CHECK(sink.chunks > 10);
  CHECK(sink.size() == 0);
}

TEST_CASE("a string sink reusing an earlier buffer writes the same trace as a fresh one") {
  scopeprof::reset();
  for (int i = 0; i < 200; ++i) {
    PROF_SCOPE("reuse \"outer\"");
    { PROF_SCOPE("reuse inner\n"); }
  }
  const scopeprof::report r = scopeprof::collect();
  const std::string fresh = r.chrome_trace();
  const std::string problem = sptest::check_chrome_trace(r, fresh);
  CHECK_MESSAGE(problem.empty(), problem);
  for (const std::size_t prior : {std::size_t{0}, std::size_t{10}, fresh.size() / 2, fresh.size(), fresh.size() * 3}) {
    CAPTURE(prior);
    scopeprof::detail::string_sink sink(std::string(prior, 'x'));
    scopeprof::detail::serialize_chrome_trace(r, sink);
    CHECK(sink.take() == fresh);
  }
}
