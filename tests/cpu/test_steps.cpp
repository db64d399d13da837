// Step markers: PROF_STEP() / scopeprof::next_step() make complete steps from one marker to the next, with
// process-wide numbers, host time per step in every output, and a note when a marker falls inside a scope.
#include "csv_check.hpp"
#include "json_check.hpp"
#include "output_check.hpp"
#include "report_lookup.hpp"

#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

void busy_ns(std::int64_t ns) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

using sptest::contains;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// reset() keeps the marker of the step under way (an earlier test's last one): the steps a test made are
// those that began after it started.
std::vector<scopeprof::step_span> steps_since(const scopeprof::report& r, std::int64_t t0) {
  std::vector<scopeprof::step_span> out;
  for (const auto& s : r.steps())
    if (s.begin_ns >= t0) out.push_back(s);
  return out;
}

}  // namespace

TEST_CASE("steps: each marker ends one step and begins the next; a step holds its iteration's scopes") {
  scopeprof::set_enabled(true);
  scopeprof::reset();
  const std::int64_t t0 = now_ns();
  for (int i = 0; i < 5; ++i) {
    PROF_STEP();
    PROF_SCOPE("iteration");
    busy_ns(20'000);
  }
  const scopeprof::report r = scopeprof::collect();
  const auto steps = steps_since(r, t0);
  // 5 markers: 4 complete steps (the fifth is under way until the next marker).
  REQUIRE(steps.size() == 4);
  const std::uint64_t carried = r.steps().size() - steps.size();  // from an earlier test's marker: 0 or 1
  CHECK(carried <= 1);
  CHECK(r.step_stats().complete == 4 + carried);
  CHECK(r.step_stats().marks == 5 + carried);
  CHECK(r.step_stats().cut == 0);
  CHECK(r.step_stats().lost == 0);
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i) CHECK(steps[i].index == steps[i - 1].index + 1);
    CHECK(steps[i].end_ns >= steps[i].begin_ns);
    CHECK_FALSE(steps[i].cuts_scopes);
    sum += steps[i].duration_ns();
  }
  if (carried == 0) CHECK(r.step_stats().host.sum == sum);
  CHECK(r.step_stats().host.count == 4 + carried);
  // Every complete step holds exactly one "iteration" scope.
  for (const auto& s : steps) {
    int inside = 0;
    for (const auto& in : r.instances())
      if (in.host_begin_ns >= s.begin_ns && in.host_end_ns <= s.end_ns) ++inside;
    CHECK(inside == 1);
    CHECK(s.duration_ns() >= 20'000);
  }
  SUBCASE("every output carries the steps") {
    CHECK(contains(r.to_string(), "Steps (PROF_STEP / next_step()"));
    CHECK(contains(r.to_string(), std::to_string(4 + carried) + " complete, ProfilerStep#"));
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(r.json(), doc, err), err);
    const sptest::json* js = doc.find("steps");
    REQUIRE(js != nullptr);
    CHECK(js->find("complete")->text == std::to_string(4 + carried));
    CHECK(js->find("host")->find("count")->text == std::to_string(4 + carried));
    CHECK(js->find("first")->text == std::to_string(r.steps().front().index));
    CHECK(contains(r.csv(), "meta,,,,steps_complete," + std::to_string(4 + carried) + ","));
    // The trace: one ProfilerStep#N slice per complete step, on the steps track, after every scope slice.
    const std::string trace = r.chrome_trace();
    for (const auto& s : r.steps())
      CHECK(contains(trace, "\"name\":\"ProfilerStep#" + std::to_string(s.index) + "\""));
    CHECK(contains(trace, "\"steps (PROF_STEP)\""));
    CHECK(trace.find("ProfilerStep#") > trace.rfind("\"cat\":\"user_annotation\",\"name\":\"iteration\""));
    CHECK(sptest::check_all_outputs(r) == "");
  }
}

TEST_CASE("steps: a marker inside an open scope is counted and the report says so") {
  scopeprof::set_enabled(true);
  scopeprof::reset();
  const std::int64_t t0 = now_ns();
  PROF_STEP();
  {
    PROF_SCOPE("outer");
    PROF_STEP();
  }
  PROF_STEP();
  const scopeprof::report r = scopeprof::collect();
  const auto steps = steps_since(r, t0);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].cuts_scopes);
  CHECK(steps[1].cuts_scopes);
  CHECK(r.step_stats().cut == 2);
  CHECK(contains(r.to_string(), "2 steps began or ended inside open scopes"));
}

TEST_CASE("steps: reset() keeps the step under way, and numbers go on across it") {
  scopeprof::set_enabled(true);
  PROF_STEP();
  PROF_STEP();
  scopeprof::reset();  // forgets the complete steps; the marker that began the current one stays
  PROF_STEP();
  const scopeprof::report r = scopeprof::collect();
  REQUIRE(r.steps().size() == 1);
  CHECK(r.step_stats().marks == 2);
  const std::uint64_t first = r.steps()[0].index;
  scopeprof::reset();
  PROF_STEP();
  const scopeprof::report r2 = scopeprof::collect();
  REQUIRE(r2.steps().size() == 1);
  CHECK(r2.steps()[0].index == first + 1);
}

TEST_CASE("steps: markers from two threads are ordered by their process-wide numbers") {
  scopeprof::set_enabled(true);
  scopeprof::reset();
  const std::int64_t t0 = now_ns();
  PROF_STEP();
  std::thread other([] { PROF_STEP(); });
  other.join();
  PROF_STEP();
  const scopeprof::report r = scopeprof::collect();
  const auto steps = steps_since(r, t0);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].thread != steps[1].thread);
  CHECK(steps[1].index == steps[0].index + 1);
  CHECK(steps[0].end_ns == steps[1].begin_ns);
}

TEST_CASE("steps: without markers, or with recording off, no steps") {
  scopeprof::set_enabled(true);
  scopeprof::reset();  // what stays is at most the marker of the step under way
  {
    PROF_SCOPE("work");
  }
  const scopeprof::report r = scopeprof::collect();
  CHECK(r.steps().empty());
  CHECK(r.step_stats().marks <= 1);
  CHECK(contains(r.json(), "\"steps\":{\"complete\":0,"));
  if (r.step_stats().marks == 0) CHECK_FALSE(contains(r.to_string(), "Steps ("));
  else CHECK(contains(r.to_string(), "0 complete (a step is complete when the next one begins)"));
  const std::uint64_t marks = r.step_stats().marks;
  scopeprof::set_enabled(false);
  PROF_STEP();
  PROF_STEP();
  scopeprof::set_enabled(true);
  CHECK(scopeprof::collect().step_stats().marks == marks);
  scopeprof::reset();
}
