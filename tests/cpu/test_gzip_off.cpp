// gzip paths in a build without zlib. This translation unit is built with SCOPEPROF_WITH_ZLIB=0 and
// header-only, whatever the suite's switches: the inline namespace (z0, m0) makes it an instance of the
// library of its own, next to the suite's. A .gz path is refused with a message that says what to do,
// and nothing is written; the report at exit (test_outputs.cpp runs it in a child) writes the file
// uncompressed after one warning.
#undef SCOPEPROF_WITH_ZLIB
#define SCOPEPROF_WITH_ZLIB 0
#undef SCOPEPROF_EXTERNAL_IMPLEMENTATION
#include <scopeprof.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

static_assert(SCOPEPROF_WITH_ZLIB == 0, "this test needs a build without zlib");

/// The scopes of test_outputs.cpp's child "at_exit_nozlib": recorded by this TU's instance only.
void scopeprof_test_nozlib_scopes() {
  PROF_SCOPE("nozlib outer");
  { PROF_SCOPE("nozlib inner"); }
}

TEST_CASE("without zlib a .gz path is refused with a clear message, and nothing is written") {
  scopeprof::detail::raw_snapshot s;
  s.sites.push_back({"work", "f.cpp", "f", 1});
  scopeprof::detail::raw_thread th;
  scopeprof::detail::raw_instance rec;
  rec.host_begin_ns = 100;
  rec.host_end_ns = 200;
  th.records.push_back(rec);
  th.desc.counts = {1, 1, 0, 0};
  s.threads.push_back(th);
  s.counts = {1, 1, 0, 0};
  const scopeprof::report r = scopeprof::detail::build_report(std::move(s));

  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/scopeprof_nozlib_XXXXXX";
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  const std::filesystem::path dir = pattern;
  struct {
    const char* what;
    const char* name;
    scopeprof::write_result (*write)(const scopeprof::report&, const std::string&);
  } const writers[] = {
      {"Chrome trace", "r.trace.json", [](const scopeprof::report& x, const std::string& p) { return x.write_chrome_trace(p); }},
      {"JSON report", "r.json", [](const scopeprof::report& x, const std::string& p) { return x.write_json(p); }},
      {"CSV report", "r.csv", [](const scopeprof::report& x, const std::string& p) { return x.write_csv(p); }},
  };
  for (const auto& w : writers) {
    for (const char* gz : {".gz", ".Gz"}) {
      const std::string plain = (dir / w.name).string();
      const std::string path = plain + gz;
      scopeprof::write_result res;
      CHECK_NOTHROW(res = w.write(r, path));
      CHECK_FALSE(res);
      CHECK(res.message() == std::string("scopeprof: cannot write ") + w.what + " to '" + path +
                                 "': this program was built without zlib (SCOPEPROF_WITH_ZLIB=0): write " + plain +
                                 " instead, or rebuild with zlib");
      CHECK_FALSE(std::filesystem::exists(path));
      CHECK_FALSE(std::filesystem::exists(plain));
    }
    CHECK(w.write(r, (dir / w.name).string()));  // the plain path still works
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}
