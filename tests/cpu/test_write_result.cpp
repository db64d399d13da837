// write_result, the writers' return value: its bool conversion is explicit (like std::optional's), so it
// tests as a condition but never converts silently; `bool ok = r.write_json(p);` does not compile. The
// spellings README.md shows compile here and give the writer's answer.
#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include <unistd.h>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::write_result;

static_assert(std::is_constructible<bool, write_result>::value, "usable as a condition and with static_cast<bool>");
static_assert(!std::is_convertible<write_result, bool>::value, "no implicit conversion: bool ok = r.write_json(p);");
static_assert(!std::is_convertible<write_result, int>::value, "no arithmetic through bool");
static_assert(std::is_same<decltype(std::declval<const write_result&>().ok()), bool>::value, ".ok() is plain bool");

const std::string kMissingDir = "/nonexistent-scopeprof-dir/out.json";

}  // namespace

TEST_CASE("write_result: the spellings README.md shows") {
  { PROF_SCOPE("write_result"); }
  const scopeprof::report r = scopeprof::collect();
  std::error_code ec;
  const std::filesystem::path good = std::filesystem::temp_directory_path(ec) /
                                            ("scopeprof_write_result_" + std::to_string(getpid()) + ".json");
  REQUIRE(!ec);

  SUBCASE("a condition with an initializer, message on failure") {
    int failures = 0;
    if (auto res = r.write_json(kMissingDir); !res) {
      ++failures;
      CHECK(res.message().find(kMissingDir) != std::string::npos);
    }
    if (auto res = r.write_json(good.string()); !res) ++failures;
    CHECK(failures == 1);
  }
  SUBCASE(".ok() gives a plain bool") {
    const bool ok = r.write_json(good.string()).ok();
    const bool failed = !r.write_json(kMissingDir).ok();
    CHECK(ok);
    CHECK(failed);
  }
  SUBCASE("negation and static_cast<bool>") {
    CHECK(!r.write_json(kMissingDir));
    CHECK(static_cast<bool>(r.write_csv(good.string())));
    bool written = false;
    if (r.write_chrome_trace(good.string())) written = true;
    CHECK(written);
  }
  SUBCASE("a default write_result is a success with no message") {
    const write_result res;
    CHECK(res.ok());
    CHECK(res.message().empty());
  }
  std::filesystem::remove(good, ec);
}
