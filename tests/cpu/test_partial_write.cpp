// A write that fails part-way: the file it created is removed (a truncated report or trace is never left
// behind to be read as a whole one), and a path that was there before (a device, a link) is kept.
// RLIMIT_FSIZE stands in for a disk that fills up during the write.
#include "internals.hpp"
#include "raw_builders.hpp"

#include <doctest/doctest.h>
#include "temp_files.hpp"  // after <scopeprof.hpp>: LibTorch's logging macros must not replace doctest's

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using write_fn = scopeprof::write_result (*)(const scopeprof::report&, const std::string&);

struct writer {
  const char* what;
  const char* ext;
  write_fn write;
};

const std::vector<writer>& writers() {
  static const std::vector<writer> all = {
      {"CSV", ".csv", [](const scopeprof::report& x, const std::string& p) { return x.write_csv(p); }},
      {"JSON", ".json", [](const scopeprof::report& x, const std::string& p) { return x.write_json(p); }},
      {"Chrome trace", ".trace.json", [](const scopeprof::report& x, const std::string& p) { return x.write_chrome_trace(p); }},
      {"speedscope", ".speedscope.json", [](const scopeprof::report& x, const std::string& p) { return x.write_speedscope(p); }},
      {"HTML", ".html", [](const scopeprof::report& x, const std::string& p) { return x.write_html(p); }},
  };
  return all;
}

/// A report whose every output is well over 4 KiB: 300 names, one scope each.
scopeprof::report big_report() {
  std::vector<std::string> names;
  std::vector<sptest::raw_instance> records;
  for (std::uint32_t i = 0; i < 300; ++i) {
    names.push_back("a scope with a fairly long name, number " + std::to_string(i));
    records.push_back(sptest::host_record(i, 0, 1000 + 10'000 * std::int64_t{i}, 6000 + 10'000 * std::int64_t{i}));
  }
  return scopeprof::detail::build_report(sptest::one_thread_snapshot("big.cpp", names, std::move(records)));
}

/// Files may grow to `bytes` while it lives; a write past that fails with EFBIG (SIGXFSZ ignored).
class file_size_limit {
 public:
  explicit file_size_limit(rlim_t bytes) {
    ok_ = getrlimit(RLIMIT_FSIZE, &saved_) == 0;
    handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = saved_;
    small.rlim_cur = bytes;
    ok_ = ok_ && setrlimit(RLIMIT_FSIZE, &small) == 0;
  }
  ~file_size_limit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, handler_);
  }
  file_size_limit(const file_size_limit&) = delete;
  file_size_limit& operator=(const file_size_limit&) = delete;
  bool ok() const noexcept { return ok_; }

 private:
  rlimit saved_{};
  void (*handler_)(int) = SIG_DFL;
  bool ok_ = false;
};

bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
}

}  // namespace

TEST_CASE("partial write: a file the write created and could not finish is removed, and the message says so") {
  const scopeprof::report r = big_report();
  const sptest::temp_dir dir;
  std::vector<std::string> suffixes = {""};
#if SCOPEPROF_WITH_ZLIB
  suffixes.push_back(".gz");  // gzip output: the same rule, through the gzip sink
#endif
  for (const std::string& gz : suffixes)
    for (const writer& w : writers()) {
      const std::string path = dir / ("out" + std::string(w.ext) + gz);
      CAPTURE(path);
      scopeprof::write_result res;
      {
        const file_size_limit limit(2048);
        REQUIRE(limit.ok());
        res = w.write(r, path);
      }
      CHECK_FALSE(res);
      CHECK_MESSAGE(res.message().find(std::string("cannot write ") + w.what) != std::string::npos, res.message());
      CHECK_MESSAGE(res.message().find("'" + path + "'") != std::string::npos, res.message());
      CHECK_MESSAGE(res.message().find("(the partial file was removed)") != std::string::npos, res.message());
      CHECK_FALSE(exists(path));
      // With room, the same path is written whole.
      CHECK(w.write(r, path));
      CHECK(std::filesystem::file_size(path) > 2048);
    }
}

TEST_CASE("partial write: a path that was there before the write is never removed after a failure") {
  const scopeprof::report r = big_report();
  const sptest::temp_dir dir;
  // A file that was there: it is overwritten in place and, cut short, stays (what was at the path is
  // the user's, and may be a file another process holds open).
  const std::string kept = dir / "kept.json";
  REQUIRE(r.write_json(kept));
  scopeprof::write_result res;
  {
    const file_size_limit limit(2048);
    REQUIRE(limit.ok());
    res = r.write_json(kept);
  }
  CHECK_FALSE(res);
  CHECK(res.message().find("partial file was removed") == std::string::npos);
  CHECK(exists(kept));
  // A link to a device that fails every write: the link and the device stay.
  if (::access("/dev/full", W_OK) == 0) {
    const std::string link = dir / "full.trace.json";
    std::filesystem::create_symlink("/dev/full", link);
    CHECK_FALSE(r.write_chrome_trace(link));
    CHECK(exists(link));
    CHECK_FALSE(r.write_chrome_trace("/dev/full"));
    CHECK(exists("/dev/full"));
  } else {
    MESSAGE("no writable /dev/full here: the device case is skipped");
  }
}

TEST_CASE("partial write: a serializer that abandons the write fails it with its reason, and nothing is left") {
  const sptest::temp_dir dir;
  std::vector<std::string> suffixes = {""};
#if SCOPEPROF_WITH_ZLIB
  suffixes.push_back(".gz");
#endif
  // 3 MiB go out (three flushes reach the file) before an input it copies "cannot be read".
  auto serialize = [](scopeprof::detail::output_sink& out) {
    const std::string row(1024, 'x');
    for (int i = 0; i < 3 * 1024; ++i) {
      out.append(row);
      out.row_done();
    }
    out.abandon("an input could not be read");
    out.abandon("a second reason");  // the first is kept
    out.append(row);                 // dropped, as is what was buffered
  };
  for (const std::string& gz : suffixes) {
    const std::string path = dir / ("abandoned.trace.json" + gz);
    CAPTURE(path);
    const scopeprof::write_result res = scopeprof::detail::write_to_path(path, "merged trace", serialize);
    CHECK_FALSE(res);
    CHECK_MESSAGE(res.message() == "scopeprof: cannot write merged trace to '" + path +
                                       "': an input could not be read (the partial file was removed)",
                  res.message());
    CHECK_FALSE(exists(path));
    // A file that was there stays, cut short as it is (what was at the path is the user's).
    REQUIRE(scopeprof::detail::write_to_path(path, "merged trace", [](scopeprof::detail::output_sink& out) { out.append("{}"); }));
    const scopeprof::write_result again = scopeprof::detail::write_to_path(path, "merged trace", serialize);
    CHECK_FALSE(again);
    CHECK(again.message().find("partial file was removed") == std::string::npos);
    CHECK(exists(path));
  }
}
