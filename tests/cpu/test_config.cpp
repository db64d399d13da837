// Environment parsing (runtime.hpp): valid values parse; a malformed one gives the default and exactly
// one "scopeprof: warning:" line on stderr.
#include "internals.hpp"
#include "stderr_capture.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using sptest::stderr_capture;

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Exactly one line, a scopeprof warning that names the variable.
void check_one_warning(const std::string& err, const std::string& variable) {
  CHECK_MESSAGE(count_lines(err) == 1, "stderr was: [" << err << "]");
  CHECK(err.rfind("scopeprof: warning: ", 0) == 0);
  CHECK(err.find(variable) != std::string::npos);
  CHECK((!err.empty() && err.back() == '\n'));
  CHECK(err.find('\r') == std::string::npos);
}

bool switch_quietly(const std::string& value, bool fallback) {
  stderr_capture cap;
  const bool v = scopeprof::detail::parse_switch("SCOPEPROF", value, fallback);
  CHECK_MESSAGE(cap.finish().empty(), "a warning for the valid value '" << value << "'");
  return v;
}

std::uint64_t count_quietly(const std::string& value) {
  stderr_capture cap;
  const std::uint64_t v = scopeprof::detail::parse_count("SCOPEPROF_MAX_RECORDS", value, 77);
  CHECK_MESSAGE(cap.finish().empty(), "a warning for the valid value '" << value << "'");
  return v;
}

}  // namespace

TEST_CASE("parse_switch: on/off words parse, anything else warns once and gives the default") {
  SUBCASE("valid values, any case") {
    for (const char* v : {"0", "off", "false", "no", "OFF", "False", "No"}) {
      CAPTURE(v);
      CHECK(switch_quietly(v, true) == false);
    }
    for (const char* v : {"1", "on", "true", "yes", "ON", "True", "YES"}) {
      CAPTURE(v);
      CHECK(switch_quietly(v, false) == true);
    }
    CHECK(switch_quietly("", true) == true);  // unset: the default, silently
    CHECK(switch_quietly("", false) == false);
  }
  SUBCASE("malformed values") {
    for (const char* v : {"2", "enable", " 1", "1 ", "tru", "-1", "0x1", "yes!", "\xFF"}) {
      CAPTURE(v);
      for (bool fallback : {true, false}) {
        stderr_capture cap;
        const bool got = scopeprof::detail::parse_switch("SCOPEPROF", v, fallback);
        const std::string err = cap.finish();
        CHECK(got == fallback);
        check_one_warning(err, "SCOPEPROF");
      }
    }
  }
  SUBCASE("a malformed value holding a line break still gives exactly one warning line") {
    for (const char* v : {"o\nn", "1\n", "off\r\nscopeprof: warning: forged"}) {
      CAPTURE(v);
      stderr_capture cap;
      CHECK(scopeprof::detail::parse_switch("SCOPEPROF", v, true) == true);
      check_one_warning(cap.finish(), "SCOPEPROF");
    }
  }
}

TEST_CASE("parse_count: positive whole numbers with k/m/g suffixes; malformed or overflowing values warn once") {
  SUBCASE("valid values") {
    CHECK(count_quietly("1") == 1);
    CHECK(count_quietly("4194304") == 4194304);
    CHECK(count_quietly("007") == 7);
    CHECK(count_quietly("16k") == 16 * 1024);
    CHECK(count_quietly("16K") == 16 * 1024);
    CHECK(count_quietly("3m") == 3ull * 1024 * 1024);
    CHECK(count_quietly("3M") == 3ull * 1024 * 1024);
    CHECK(count_quietly("2g") == 2ull * 1024 * 1024 * 1024);
    CHECK(count_quietly("2G") == 2ull * 1024 * 1024 * 1024);
    CHECK(count_quietly("1844674407370955161") == 1844674407370955161ull);
    CHECK(count_quietly("17179869183g") == 17179869183ull << 30);  // the largest g value that fits
    CHECK(count_quietly("") == 77);                                 // unset: the default, silently
  }
  SUBCASE("malformed and overflowing values") {
    for (const char* v : {"0", "0k", "-5", "+5", "abc", "12abc", "1.5", "k", "1kb", " 12", "12 ", "0x10", "16t",
                          "1e6", "17179869184g", "16777216t", "18446744073709551616", "99999999999999999999999",
                          "1k1"}) {
      CAPTURE(v);
      stderr_capture cap;
      const std::uint64_t got = scopeprof::detail::parse_count("SCOPEPROF_MAX_RECORDS", v, 77);
      const std::string err = cap.finish();
      CHECK(got == 77);
      check_one_warning(err, "SCOPEPROF_MAX_RECORDS");
    }
  }
  SUBCASE("a malformed value holding a line break still gives exactly one warning line") {
    stderr_capture cap;
    CHECK(scopeprof::detail::parse_count("SCOPEPROF_MAX_RECORDS", "12\n34", 77) == 77);
    check_one_warning(cap.finish(), "SCOPEPROF_MAX_RECORDS");
  }
}

TEST_CASE("parse_count accepts every value that fits in 64 bits") {
  CHECK(count_quietly("18446744073709551615") == UINT64_MAX);
  CHECK(count_quietly("18446744073709551610") == UINT64_MAX - 5);
}

TEST_CASE("parse_clock: auto, steady, tsc and cntvct; unknown or unavailable clocks warn once") {
  using scopeprof::clock_kind;
  const clock_kind best = scopeprof::detail::best_clock_kind();
  const auto quietly = [](const std::string& v) {
    stderr_capture cap;
    const clock_kind k = scopeprof::detail::parse_clock(v);
    CHECK_MESSAGE(cap.finish().empty(), "a warning for the valid value '" << v << "'");
    return k;
  };
  const auto with_warning = [](const std::string& v) {
    stderr_capture cap;
    const clock_kind k = scopeprof::detail::parse_clock(v);
    check_one_warning(cap.finish(), "SCOPEPROF_CLOCK");
    return k;
  };
  SUBCASE("valid values") {
    CHECK(quietly("") == best);
    CHECK(quietly("auto") == best);
    CHECK(quietly("AUTO") == best);
    CHECK(quietly("steady") == clock_kind::steady);
    CHECK(quietly("Steady") == clock_kind::steady);
    for (clock_kind k : {clock_kind::tsc, clock_kind::cntvct}) {
      const std::string name = k == clock_kind::tsc ? "tsc" : "cntvct";
      CAPTURE(name);
      if (scopeprof::detail::clock_kind_available(k)) CHECK(quietly(name) == k);
      else CHECK(with_warning(name) == best);  // named, but not on this machine
    }
  }
  SUBCASE("unknown values") {
    for (const char* v : {"bogus", "tsc ", " steady", "rdtsc", "0", "\xC0"}) {
      CAPTURE(v);
      CHECK(with_warning(v) == best);
    }
  }
  SUBCASE("an unknown value holding a line break still gives exactly one warning line") {
    CHECK(with_warning("ts\nc") == best);
  }
  SUBCASE("the best clock is available, and steady always is") {
    CHECK(scopeprof::detail::clock_kind_available(best));
    CHECK(scopeprof::detail::clock_kind_available(clock_kind::steady));
  }
}

namespace {

using sptest::stderr_capture;
std::uint32_t device_every_of(const char* name) {
  scopeprof::detail::registry& r = scopeprof::detail::the_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (const auto& s : r.sites)
    if (s->name == name) return s->device_every.load();
  return 0xFFFFFFFFu;  // no such site
}
void sampled_by_name_site() { PROF_SCOPE("config_sampled_by_name"); }
void sampled_by_name_other() { PROF_SCOPE("config_sampled_other"); }
}  // namespace

TEST_CASE("set_device_sampling(name, n) also applies to a site first seen later; the global call replaces it") {
  scopeprof::set_device_sampling(1);
  CHECK(scopeprof::set_device_sampling("config_sampled_by_name", 7) == 0);  // not seen yet
  sampled_by_name_site();
  sampled_by_name_other();
  CHECK(device_every_of("config_sampled_by_name") == 7);
  CHECK(device_every_of("config_sampled_other") == 1);
  CHECK(scopeprof::set_device_sampling("config_sampled_by_name", 3) == 1);
  CHECK(device_every_of("config_sampled_by_name") == 3);
  scopeprof::set_device_sampling(1);
  CHECK(device_every_of("config_sampled_by_name") == 1);
  scopeprof::reset();
}
