// The CUPTI collector switched on where it cannot work (CI: CUDA toolkit, no driver, no GPU; or a missing
// library): the report says why, host columns stay valid, nothing crashes or aborts. Run twice by ctest:
// plainly, and with SCOPEPROF_CUPTI_LIBRARY=/nonexistent/libcupti.so (the reason then names the path).
// On a machine where CUPTI does work, the first case checks that collection starts and releases instead.
#include "../cpu/csv_check.hpp"
#include "../cpu/json_check.hpp"
#include "../cpu/output_check.hpp"

#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

bool library_overridden() {
  const char* v = std::getenv("SCOPEPROF_CUPTI_LIBRARY");
  return v != nullptr && *v != '\0';
}

}  // namespace

TEST_CASE("the CUPTI collector is off by default and never touched") {
  CHECK_FALSE(scopeprof::cupti_enabled());
  { PROF_SCOPE("before"); }
  const auto r = scopeprof::collect();
  CHECK(r.sources().cupti.rfind("off (", 0) == 0);
  CHECK_FALSE(r.sources().cupti_valid);
}

TEST_CASE("switched on where CUPTI cannot run: a reason, valid host columns, no crash") {
  scopeprof::reset();
  scopeprof::set_cupti(true);
  {
    PROF_SCOPE("outer");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    { PROF_SCOPE("inner"); }
  }
  const auto r = scopeprof::collect();
  const std::string& why = r.sources().cupti;
  MESSAGE("CUPTI evidence: " << why);
  if (library_overridden()) {
    CHECK(why.rfind("unavailable: SCOPEPROF_CUPTI_LIBRARY=", 0) == 0);
    CHECK(why.find("could not be loaded") != std::string::npos);
  }
  if (why.rfind("unavailable: ", 0) == 0 || why.rfind("withheld: ", 0) == 0) {
    CHECK_FALSE(r.sources().cupti_valid);
    CHECK_FALSE(scopeprof::cupti_enabled());
    CHECK(r.to_string().find("Dev busy") == std::string::npos);
  } else {  // a machine where CUPTI works: collection is on and valid
    CHECK(r.sources().cupti_valid);
    scopeprof::set_cupti(false);
    CHECK_FALSE(scopeprof::cupti_enabled());
  }
  const auto* outer = r.find("outer");
  REQUIRE(outer != nullptr);
  CHECK(outer->calls == 1);
  CHECK(outer->host_total_ns >= 2'000'000);
  CHECK(r.find("inner") != nullptr);
  CHECK(sptest::check_all_outputs(r) == "");
  CHECK(r.csv().find(std::string(",") + scopeprof::cupti_status_text(r.sources()) + ",") != std::string::npos);

  SUBCASE("asking again changes nothing and does not crash; switching off is harmless") {
    scopeprof::set_cupti(true);
    { PROF_SCOPE("again"); }
    scopeprof::set_cupti(false);
    scopeprof::set_cupti(false);
    const auto r2 = scopeprof::collect();
    CHECK(r2.find("again") != nullptr);
    CHECK(sptest::check_all_outputs(r2) == "");
  }
}
