// The host clock: tick_converter maps raw ticks onto steady_clock nanoseconds, exactly for synthetic
// anchors and within 0.1% for the clock in use; anchors only move forward.
#include "internals.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

void spin_for(std::chrono::milliseconds ms) {
  const auto end = std::chrono::steady_clock::now() + ms;
  while (std::chrono::steady_clock::now() < end) {
  }
}

}  // namespace

TEST_CASE("timing: a 200 ms busy-wait measured in converted ticks agrees with steady_clock within 0.1%") {
  const scopeprof::clock_kind kind = scopeprof::host_clock();
  CAPTURE(scopeprof::to_string(kind));
  // Calibrate over one interval, measure a different one: the conversion must hold beyond its anchors.
  const auto cal_begin = scopeprof::detail::read_anchor();
  spin_for(std::chrono::milliseconds(100));
  const auto cal_end = scopeprof::detail::read_anchor();
  const auto conv = scopeprof::tick_converter::between(kind, cal_begin, cal_end);
  if (kind != scopeprof::clock_kind::steady) {
    CHECK(conv.ns_per_tick > 0.01);  // between 0.01 and 100 GHz
    CHECK(conv.ns_per_tick < 100.0);
  }

  const auto m0 = scopeprof::detail::read_anchor();
  spin_for(std::chrono::milliseconds(200));
  const auto m1 = scopeprof::detail::read_anchor();
  const std::int64_t steady_ns = m1.ns - m0.ns;
  const std::int64_t tick_ns = conv.to_ns(m1.ticks) - conv.to_ns(m0.ticks);
  CHECK(steady_ns >= 200'000'000);
  CHECK(static_cast<double>(tick_ns) == doctest::Approx(static_cast<double>(steady_ns)).epsilon(0.001));
  // Converted tick readings land on the steady_clock timeline itself, not just at the right rate.
  // (300 ms past the calibration start; 0.1% of that is 300 us.)
  CHECK(std::llabs(conv.to_ns(m1.ticks) - m1.ns) < 300'000);
}

TEST_CASE("tick_converter::between on synthetic anchors is exact") {
  using scopeprof::clock_kind;
  using scopeprof::tick_converter;
  using scopeprof::detail::clock_anchor;
  SUBCASE("2.5 ticks per nanosecond") {
    const clock_anchor a{1'000'000, 5'000};
    const clock_anchor b{1'000'000 + 2'500'000'000ull, 5'000 + 1'000'000'000};
    const auto c = tick_converter::between(clock_kind::tsc, a, b);
    CHECK(c.ns_per_tick == 0.4);
    CHECK(c.to_ns(a.ticks) == a.ns);
    CHECK(c.to_ns(b.ticks) == b.ns);
    CHECK(c.to_ns(a.ticks + 2'500) == a.ns + 1'000);
    CHECK(c.to_ns(a.ticks + 5) == a.ns + 2);
    CHECK(c.to_ns(a.ticks + 25'000'000'000ull) == a.ns + 10'000'000'000);  // beyond the end anchor
    CHECK(c.to_ns(a.ticks - 2'500) == a.ns - 1'000);                       // before the start anchor
  }
  SUBCASE("rounding to the nearest nanosecond, both sides of the start") {
    const clock_anchor a{1'000, 0};
    const clock_anchor b{1'000 + 4'000, 1'000};  // 0.25 ns per tick
    const auto c = tick_converter::between(clock_kind::tsc, a, b);
    CHECK(c.to_ns(a.ticks + 1) == 0);   // 0.25
    CHECK(c.to_ns(a.ticks + 2) == 1);   // 0.5 rounds away from zero
    CHECK(c.to_ns(a.ticks + 3) == 1);   // 0.75
    CHECK(c.to_ns(a.ticks - 3) == -1);  // -0.75
    CHECK(c.to_ns(a.ticks - 1) == 0);   // -0.25
  }
  SUBCASE("one tick per nanosecond at large tick values") {
    const clock_anchor a{0x7000'0000'0000'0000ull, 123'456'789'000'000};
    const clock_anchor b{a.ticks + 3'000'000'000ull, a.ns + 3'000'000'000};
    const auto c = tick_converter::between(clock_kind::cntvct, a, b);
    CHECK(c.ns_per_tick == 1.0);
    CHECK(c.to_ns(a.ticks + 1'234'567'891) == a.ns + 1'234'567'891);
  }
  SUBCASE("steady ticks are nanoseconds already") {
    const auto c = tick_converter::between(clock_kind::steady, {10, 999}, {20, 5});
    CHECK(c.to_ns(123'456'789) == 123'456'789);
  }
  SUBCASE("anchors that do not move forward leave the default rate") {
    const auto same = tick_converter::between(clock_kind::tsc, {100, 100}, {100, 200});
    CHECK(same.ns_per_tick == 1.0);
    const auto backwards = tick_converter::between(clock_kind::tsc, {100, 100}, {200, 50});
    CHECK(backwards.ns_per_tick == 1.0);
  }
}

TEST_CASE("read_anchor never goes backwards and pairs ticks with steady_clock") {
  scopeprof::host_clock();  // the clock is chosen at initialisation
  auto prev = scopeprof::detail::read_anchor();
  std::uint64_t tick_back = 0, ns_back = 0;
  for (int i = 0; i < 20'000; ++i) {
    const auto a = scopeprof::detail::read_anchor();
    tick_back += a.ticks < prev.ticks;
    ns_back += a.ns < prev.ns;
    prev = a;
  }
  CHECK(tick_back == 0);
  CHECK(ns_back == 0);
  const std::int64_t before = scopeprof::detail::steady_now_ns();
  const auto a = scopeprof::detail::read_anchor();
  const std::int64_t after = scopeprof::detail::steady_now_ns();
  CHECK(a.ns >= before);
  CHECK(a.ns <= after);
}
