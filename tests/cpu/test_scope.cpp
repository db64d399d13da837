// Scopes: nesting, self time, macros, runtime switches.
#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include "timing_check.hpp"
#include "report_lookup.hpp"

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using sptest::row;

}  // namespace

TEST_CASE("timing: a 30 ms parent with a 20 ms child has 10 ms of self time") {
  const sptest::parent_child_run run = sptest::run_parent_child();
  CAPTURE(run.attempts);
  const scopeprof::report& r = run.report;
  // Against what steady_clock saw at the same boundaries (within the scope's own small overhead)...
  CHECK(std::llabs(row(r, "parent").host_total_ns - run.parent_total_ns) < 1'000'000);
  CHECK(std::llabs(row(r, "child").host_total_ns - run.child_total_ns) < 1'000'000);
  // ...and against the nominal durations, within 2 ms.
  const auto& parent = row(r, "parent");
  const auto& child = row(r, "child");
  CHECK(parent.calls == 1);
  CHECK(child.calls == 1);
  CHECK(parent.host_total_ns == doctest::Approx(30e6).epsilon(2e6 / 30e6));
  CHECK(parent.host_self_ns == doctest::Approx(10e6).epsilon(0.2));  // 10 ms within 2 ms
  CHECK(child.host_total_ns == doctest::Approx(20e6).epsilon(0.1));
  CHECK(child.host_self_ns == child.host_total_ns);
  CHECK(parent.host_self_ns + child.host_self_ns == parent.host_total_ns);
  // The tree puts the child under the parent.
  REQUIRE(r.tree().size() == 2);
  CHECK(r.tree()[0].name == "parent");
  CHECK(r.tree()[1].name == "child");
  CHECK(r.tree()[1].parent == 0);
  CHECK(r.tree()[1].depth == 1);
}

TEST_CASE("several scopes on one line and in one block compile and nest") {
  scopeprof::reset();
  { PROF_SCOPE("one"); PROF_SCOPE("two"); PROF_SCOPE("three"); }
  const scopeprof::report r = scopeprof::collect();
  REQUIRE(r.tree().size() == 3);
  CHECK(r.tree()[0].name == "one");
  CHECK(r.tree()[1].name == "two");
  CHECK(r.tree()[2].name == "three");
  CHECK(r.tree()[2].depth == 2);
}

namespace {
void named_function() { PROF_FUNCTION(); }
}  // namespace

TEST_CASE("PROF_FUNCTION is named after its function; PROF_SCOPE_DYN takes runtime names") {
  scopeprof::reset();
  named_function();
  named_function();
  for (int i = 0; i < 3; ++i) {
    const std::string name = "layer" + std::to_string(i % 2);
    PROF_SCOPE_DYN(name);
  }
  const std::string_view view = "viewed";
  { PROF_SCOPE_DYN(view); }
  const scopeprof::report r = scopeprof::collect();
  CHECK(row(r, "named_function").calls == 2);
  CHECK(row(r, "layer0").calls == 2);
  CHECK(row(r, "layer1").calls == 1);
  CHECK(row(r, "viewed").calls == 1);
}

TEST_CASE("set_enabled(false) stops recording; scopes open across the switch still finish") {
  scopeprof::reset();
  {
    PROF_SCOPE("open across the switch");
    scopeprof::set_enabled(false);
    { PROF_SCOPE("while off"); }
  }
  scopeprof::set_enabled(true);
  { PROF_SCOPE("on again"); }
  const scopeprof::report r = scopeprof::collect();
  CHECK(r.find("while off") == nullptr);
  CHECK(r.find("open across the switch") != nullptr);
  CHECK(r.find("on again") != nullptr);
  CHECK(r.counts().entered == 2);
  CHECK(r.counts().recorded == 2);
}

TEST_CASE("reset forgets finished scopes but keeps the ones still open") {
  scopeprof::reset();
  { PROF_SCOPE("before"); }
  {
    PROF_SCOPE("spanning");
    scopeprof::reset();
    const scopeprof::report mid = scopeprof::collect();
    CHECK(mid.counts().recorded == 0);
    CHECK(mid.counts().in_flight == 1);
    CHECK(mid.counts().entered == 1);
  }
  const scopeprof::report r = scopeprof::collect();
  CHECK(r.find("before") == nullptr);
  CHECK(r.find("spanning") != nullptr);
  CHECK(r.counts().entered == 1);
  CHECK(r.counts().recorded == 1);
}

TEST_CASE("a report taken inside a scope shows the finished children, and the open one as in flight") {
  scopeprof::reset();
  {
    PROF_SCOPE("outer");
    { PROF_SCOPE("inner"); }
    const scopeprof::report r = scopeprof::collect();
    CHECK(r.counts().in_flight == 1);
    CHECK(r.counts().recorded == 1);
    CHECK(r.counts().entered == 2);
    CHECK(r.orphan_count() == 1);
    REQUIRE(r.instances().size() == 1);
    CHECK(r.instances()[0].orphan);
  }
}
