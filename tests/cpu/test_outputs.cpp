// Failing outputs and the report at exit. Writers return false with the path and the reason and never
// throw. SCOPEPROF_REPORT / SCOPEPROF / malformed environment values are checked in child processes: this
// test binary re-executes itself with SCOPEPROF_TEST_CHILD=<mode>, and a hook that runs during static
// initialisation plays the child and exits before doctest starts. A child's environment holds no SCOPEPROF*
// variable but those its case sets, so these cases (test suite "child_process") give the same result under
// any environment the suite runs in; the suite's variant runs in tests/CMakeLists.txt leave them out.
#include "csv_check.hpp"
#include "gzip_check.hpp"
#include "json_check.hpp"
#include "output_check.hpp"
#include "report_lookup.hpp"

#include "internals.hpp"
#include "trace_check.hpp"

#include <doctest/doctest.h>
#include "temp_files.hpp"  // after <scopeprof.hpp>: LibTorch's logging macros must not replace doctest's

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

extern char** environ;

void scopeprof_test_nozlib_scopes();  // test_gzip_off.cpp: scopes of an instance built without zlib

namespace {

// ---------------------------------------------------------------------------------------------- child side

int child_main(const std::string& mode) {
  if (mode == "at_exit") {
    {
      PROF_SCOPE("child outer");
      { PROF_SCOPE("child inner"); }
    }
    return 0;  // SCOPEPROF_REPORT is written by the library's exit handler
  }
  if (mode == "at_exit_nozlib") {
    scopeprof_test_nozlib_scopes();
    return 0;
  }
  if (mode == "disabled") {
    const bool on_at_start = scopeprof::enabled();
    { PROF_SCOPE("while disabled"); }
    const auto off = scopeprof::collect();
    scopeprof::set_enabled(true);
    { PROF_SCOPE("switched on"); }
    const auto on = scopeprof::collect();
    std::printf("enabled=%d entered=%llu after_switch=%llu\n", on_at_start ? 1 : 0,
                static_cast<unsigned long long>(off.counts().entered),
                static_cast<unsigned long long>(on.counts().recorded));
    return (!on_at_start && off.counts().entered == 0 && on.counts().recorded == 1) ? 0 : 1;
  }
  if (mode == "env") {
    { PROF_SCOPE("env"); }
    std::printf("clock=%s max_records=%llu recorded=%llu\n", scopeprof::to_string(scopeprof::host_clock()),
                static_cast<unsigned long long>(scopeprof::detail::the_registry().max_records.load()),
                static_cast<unsigned long long>(scopeprof::collect().counts().recorded));
    return 0;
  }
  std::fprintf(stderr, "unknown SCOPEPROF_TEST_CHILD mode '%s'\n", mode.c_str());
  return 2;
}

const int child_hook = [] {
  const char* mode = std::getenv("SCOPEPROF_TEST_CHILD");
  if (mode != nullptr) std::exit(child_main(mode));
  return 0;
}();

// --------------------------------------------------------------------------------------------- parent side

void write_plain_file(const std::string& path) {
  std::ofstream out(path);
  out << "a regular file\n";
}

struct child_result {
  int exit_code = -1;  // -1: did not exit normally
  std::string out, err;
};

child_result run_child(const std::string& mode, const std::vector<std::string>& extra_env, const sptest::temp_dir& dir) {
  char exe[4096];
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  REQUIRE(n > 0);
  exe[n] = '\0';
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "SCOPEPROF", 9) != 0) env.emplace_back(*e);  // a clean scopeprof environment
  env.push_back("SCOPEPROF_TEST_CHILD=" + mode);
  for (const auto& e : extra_env) env.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  char* argv[] = {exe, nullptr};

  const std::string out_path = dir / "child.out", err_path = dir / "child.err";
  posix_spawn_file_actions_t actions;
  REQUIRE(posix_spawn_file_actions_init(&actions) == 0);
  posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, exe, &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE_MESSAGE(rc == 0, "posix_spawn failed: " << std::strerror(rc));
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  child_result r;
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = sptest::read_file_bytes(out_path);
  r.err = sptest::read_file_bytes(err_path);
  return r;
}

std::size_t count_lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

using sptest::contains;

scopeprof::report sample_report() {
  scopeprof::reset();
  {
    PROF_SCOPE("sample outer");
    { PROF_SCOPE("sample inner"); }
  }
  return scopeprof::collect();
}

}  // namespace

TEST_CASE("writers report a failed write as false with the path and the reason, and never throw") {
  const scopeprof::report r = sample_report();
  const sptest::temp_dir dir;
  write_plain_file(dir / "afile");
  struct writer {
    const char* what;
    const char* ext;
    scopeprof::write_result (*write)(const scopeprof::report&, const std::string&);
  };
  const writer writers[] = {
      {"CSV", ".csv", [](const scopeprof::report& x, const std::string& p) { return x.write_csv(p); }},
      {"JSON", ".json", [](const scopeprof::report& x, const std::string& p) { return x.write_json(p); }},
      {"Chrome trace", ".trace.json", [](const scopeprof::report& x, const std::string& p) { return x.write_chrome_trace(p); }},
  };
  const auto expect_failure = [&](const std::string& path, int err) {
    for (const auto& w : writers) {
      CAPTURE(w.what);
      const std::string p = path.empty() ? path : path + w.ext;
      scopeprof::write_result res;
      CHECK_NOTHROW(res = w.write(r, p));
      CHECK_FALSE(res);
      CHECK_FALSE(res.ok());
      CHECK(contains(res.message(), w.what));
      if (p.empty()) {
        CHECK(contains(res.message(), "empty path"));
      } else {
        CHECK_MESSAGE(contains(res.message(), "'" + p + "'"), res.message());
        CHECK_MESSAGE(contains(res.message(), std::strerror(err)), res.message());
      }
    }
  };
  SUBCASE("a path under a regular file") { expect_failure(dir / "afile/report", ENOTDIR); }
  SUBCASE("/etc/hostname/x: a path under a system file") {
    if (std::filesystem::is_regular_file("/etc/hostname")) expect_failure("/etc/hostname/x", ENOTDIR);
  }
  SUBCASE("a missing directory") { expect_failure(dir / "no/such/dir/report", ENOENT); }
  SUBCASE("an empty path") { expect_failure("", 0); }
  SUBCASE("a full disk") {
    if (::access("/dev/full", W_OK) != 0) {
      MESSAGE("no writable /dev/full here: skipped");
    } else {
      for (const auto& w : writers) {
        CAPTURE(w.what);
        scopeprof::write_result res;
        CHECK_NOTHROW(res = w.write(r, "/dev/full"));
        CHECK_FALSE(res);
        CHECK(contains(res.message(), "'/dev/full'"));
        CHECK_MESSAGE(contains(res.message(), std::strerror(ENOSPC)), res.message());
      }
    }
  }
  SUBCASE("a directory as the path") {
    for (const auto& w : writers) {
      scopeprof::write_result res;
      CHECK_NOTHROW(res = w.write(r, dir.path.string()));
      CHECK_FALSE(res);
      CHECK(contains(res.message(), std::strerror(EISDIR)));
    }
  }
  SUBCASE("a writable path succeeds and holds exactly the output") {
    CHECK(r.write_csv(dir / "ok.csv"));
    CHECK(sptest::read_file_bytes(dir / "ok.csv") == r.csv());
    CHECK(r.write_json(dir / "ok.json"));
    CHECK(sptest::read_file_bytes(dir / "ok.json") == r.json());
    const auto res = r.write_chrome_trace(dir / "ok.trace.json");
    CHECK(res);
    CHECK(res.message().empty());
    CHECK(sptest::read_file_bytes(dir / "ok.trace.json") == r.chrome_trace());
  }
}

TEST_CASE("SCOPEPROF_REPORT writes the report when the program exits" * doctest::test_suite("child_process")) {
  const sptest::temp_dir dir;
  const auto check_flat_names = [](const sptest::json& doc) {
    std::size_t found = 0;
    for (const auto& f : doc.find("flat")->items) {
      const std::string& n = f.find("name")->text;
      found += n == "child outer" || n == "child inner";
    }
    CHECK(found == 2);
  };
  SUBCASE("to a CSV file") {
    const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=" + (dir / "r.csv")}, dir);
    CHECK(c.exit_code == 0);
    CHECK_MESSAGE(c.err.empty(), c.err);
    sptest::csv_rows rows;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_csv(sptest::read_file_bytes(dir / "r.csv"), rows, err), err);
    std::size_t found = 0;
    for (const auto& row : rows) found += row[0] == "flat" && (row[4] == "child outer" || row[4] == "child inner");
    CHECK(found == 2);
  }
  SUBCASE("to a JSON file") {
    const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=" + (dir / "r.json")}, dir);
    CHECK(c.exit_code == 0);
    CHECK_MESSAGE(c.err.empty(), c.err);
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(sptest::read_file_bytes(dir / "r.json"), doc, err), err);
    REQUIRE(doc.find("schema") != nullptr);
    CHECK(doc.find("counts")->find("recorded")->text == "2");
    check_flat_names(doc);
  }
  SUBCASE("SCOPEPROF_REPORT_EVERY: the interval lines beside the report, the last one written at exit") {
    const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=" + (dir / "r.json"), "SCOPEPROF_REPORT_EVERY=10min"}, dir);
    CHECK(c.exit_code == 0);
    CHECK_MESSAGE(c.err.empty(), c.err);
    const std::string lines = sptest::read_file_bytes(dir / "r.intervals.jsonl");
    REQUIRE(std::count(lines.begin(), lines.end(), '\n') == 1);  // one interval, cut short by the exit
    sptest::json line;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(lines, line, err), err);
    CHECK(line.find("final")->b);
    CHECK(line.find("every")->text == "10min");
    CHECK(line.find("scopes")->text == "2");
    std::vector<std::string> names;
    for (const auto& row : line.find("tree")->items) names.push_back(row.find("name")->text);
    CHECK(names == std::vector<std::string>{"child outer", "child inner"});
  }
  SUBCASE("in a job of several ranks: a path without {rank} gets the rank, with one warning") {
    const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=" + (dir / "r.json"), "RANK=2", "WORLD_SIZE=4", "LOCAL_RANK=1"}, dir);
    CHECK(c.exit_code == 0);
    CHECK_FALSE(std::filesystem::exists(dir / "r.json"));
    CHECK(c.err.find("names one file for all 4 ranks") != std::string::npos);
    CHECK(count_lines(c.err) == 1);
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(sptest::read_file_bytes(dir / "r.rank2.json"), doc, err), err);
    const sptest::json* p = doc.find("process");
    REQUIRE(p != nullptr);
    CHECK(p->find("rank")->text == "2");
    CHECK(p->find("world_size")->text == "4");
    CHECK(p->find("local_rank")->text == "1");
    CHECK(p->find("rank_source")->text == "RANK");
    CHECK(p->find("pid")->text != "0");
    check_flat_names(doc);
  }
  SUBCASE("{rank} and {host} in the path, and the interval file beside it") {
    const auto c = run_child("at_exit",
                             {"SCOPEPROF_REPORT=" + (dir / "run.{rank}-{host}.trace.json"), "SCOPEPROF_REPORT_EVERY=10min",
                              "OMPI_COMM_WORLD_RANK=3", "OMPI_COMM_WORLD_SIZE=4"},
                             dir);
    CHECK(c.exit_code == 0);
    CHECK_MESSAGE(c.err.empty(), c.err);
    const std::string host = scopeprof::detail::path_safe(scopeprof::detail::current_host_name());
    const std::string trace = sptest::read_file_bytes(dir / ("run.3-" + host + ".trace.json"));
    CHECK(sptest::hta_rank(trace) == 3);
    sptest::json line;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(sptest::read_file_bytes(dir / ("run.3-" + host + ".intervals.jsonl")), line, err), err);
    CHECK(line.find("rank")->text == "3");
    CHECK(line.find("world_size")->text == "4");
  }
  SUBCASE("to a Chrome trace file") {
    const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=" + (dir / "r.trace.json")}, dir);
    CHECK(c.exit_code == 0);
    CHECK_MESSAGE(c.err.empty(), c.err);
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(sptest::read_file_bytes(dir / "r.trace.json"), doc, err), err);
    REQUIRE(doc.find("traceEvents") != nullptr);
    CHECK(doc.find("otherData")->find("recorded")->text == "2");
    CHECK(sptest::check_trace_format(sptest::read_file_bytes(dir / "r.trace.json")) == "");
    std::int64_t outer_ts = -1, outer_dur = -1, inner_ts = -1, inner_dur = -1;
    for (const auto& ev : doc.find("traceEvents")->items) {
      if (ev.find("ph")->text != "X") continue;
      const std::string& n = ev.find("name")->text;
      const std::int64_t ts = sptest::trace_ns(ev.find("ts")->number());
      const std::int64_t dur = sptest::trace_ns(ev.find("ts")->number() + ev.find("dur")->number()) - ts;
      if (n == "child outer") outer_ts = ts, outer_dur = dur;
      if (n == "child inner") inner_ts = ts, inner_dur = dur;
    }
    REQUIRE(outer_ts >= 0);
    REQUIRE(inner_ts >= 0);
    CHECK(inner_ts >= outer_ts);
    CHECK(inner_ts + inner_dur <= outer_ts + outer_dur);
  }
  SUBCASE("to a speedscope file (*.speedscope.json, and .speedscope.json.gz with zlib)") {
    std::vector<std::string> names = {"r.speedscope.json"};
#if SCOPEPROF_WITH_ZLIB
    names.push_back("r.speedscope.json.gz");
#endif
    for (const auto& name : names) {
      CAPTURE(name);
      const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=" + (dir / name)}, dir);
      CHECK(c.exit_code == 0);
      CHECK_MESSAGE(c.err.empty(), c.err);
#if SCOPEPROF_WITH_ZLIB
      const sptest::gunzipped g = sptest::gunzip_file(dir / name);
      REQUIRE_MESSAGE(g.ok, g.error);
      CHECK(g.gzip == (name.back() == 'z'));
      const std::string text = g.bytes;
#else
      const std::string text = sptest::read_file_bytes(dir / name);
#endif
      sptest::json doc;
      std::string err;
      REQUIRE_MESSAGE(sptest::parse_json(text, doc, err), err);
      CHECK(doc.find("$schema")->text == "https://www.speedscope.app/file-format-schema.json");
      std::vector<std::string> frames;
      for (const auto& f : doc.find("shared")->find("frames")->items) frames.push_back(f.find("name")->text);
      CHECK(frames == std::vector<std::string>{"child outer", "child inner"});
      REQUIRE(doc.find("profiles")->items.size() == 1);
      std::string events;
      for (const auto& ev : doc.find("profiles")->items[0].find("events")->items) events += ev.find("type")->text;
      CHECK(events == "OOCC");
    }
  }
#if SCOPEPROF_WITH_ZLIB
  SUBCASE("to gzip files: .trace.json.gz, .json.gz, .csv.gz and a text .txt.gz") {
    for (const char* name : {"r.trace.json.gz", "r.json.gz", "r.csv.gz", "r.txt.gz"}) {
      CAPTURE(name);
      const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=" + (dir / name)}, dir);
      CHECK(c.exit_code == 0);
      CHECK_MESSAGE(c.err.empty(), c.err);
      const sptest::gunzipped g = sptest::gunzip_file(dir / name);
      REQUIRE_MESSAGE(g.ok, g.error);
      CHECK(g.gzip);
      const std::string kind = name;
      std::string err;
      if (kind == "r.csv.gz") {
        sptest::csv_rows rows;
        CHECK_MESSAGE(sptest::parse_csv(g.bytes, rows, err), err);
      } else if (kind == "r.txt.gz") {
        CHECK(contains(g.bytes, "scopeprof report: 2 scopes recorded"));
      } else {
        sptest::json doc;
        REQUIRE_MESSAGE(sptest::parse_json(g.bytes, doc, err), err);
        if (kind == "r.json.gz") check_flat_names(doc);
        else CHECK(doc.find("otherData")->find("recorded")->text == "2");
      }
    }
  }
#endif
  SUBCASE("a .gz target in a build without zlib: one warning, and the file without .gz") {
    const std::string target = dir / "n.trace.json.gz";
    const auto c = run_child("at_exit_nozlib", {"SCOPEPROF_REPORT=" + target}, dir);
    CHECK(c.exit_code == 0);
    CHECK(count_lines(c.err) == 1);
    CHECK_MESSAGE(c.err == "scopeprof: warning: SCOPEPROF_REPORT=" + target +
                               ": this program was built without zlib (SCOPEPROF_WITH_ZLIB=0): writing " +
                               (dir / "n.trace.json") + " uncompressed instead\n",
                  c.err);
    CHECK_FALSE(std::filesystem::exists(target));
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(sptest::read_file_bytes(dir / "n.trace.json"), doc, err), err);
    std::size_t found = 0;
    for (const auto& ev : doc.find("traceEvents")->items)
      if (ev.find("ph")->text == "X") found += ev.find("name")->text == "nozlib outer" || ev.find("name")->text == "nozlib inner";
    CHECK(found == 2);
  }
  SUBCASE("to a text file (any other extension), and an upper-case .CSV is still CSV") {
    auto c = run_child("at_exit", {"SCOPEPROF_REPORT=" + (dir / "r.txt")}, dir);
    CHECK(c.exit_code == 0);
    const std::string text = sptest::read_file_bytes(dir / "r.txt");
    CHECK(contains(text, "scopeprof report: 2 scopes recorded"));
    CHECK(contains(text, "child outer"));
    c = run_child("at_exit", {"SCOPEPROF_REPORT=" + (dir / "R.CSV")}, dir);
    CHECK(c.exit_code == 0);
    sptest::csv_rows rows;
    std::string err;
    CHECK_MESSAGE(sptest::parse_csv(sptest::read_file_bytes(dir / "R.CSV"), rows, err), err);
  }
  SUBCASE("to stderr") {
    const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=stderr"}, dir);
    CHECK(c.exit_code == 0);
    CHECK(contains(c.err, "scopeprof report: 2 scopes recorded"));
    CHECK(contains(c.err, "\nchild outer "));  // a row of the flat table
    CHECK(contains(c.err, "  child inner "));  // a row of the tree, indented
    CHECK(c.out.empty());
  }
  SUBCASE("to stdout") {
    const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=stdout"}, dir);
    CHECK(c.exit_code == 0);
    CHECK(contains(c.out, "scopeprof report: 2 scopes recorded"));
    CHECK(c.err.empty());
  }
  SUBCASE("to an unwritable path: one warning on stderr, and the program still exits 0") {
    write_plain_file(dir / "afile");
    const std::string target = dir / "afile/r.csv";
    const auto c = run_child("at_exit", {"SCOPEPROF_REPORT=" + target}, dir);
    CHECK(c.exit_code == 0);
    CHECK_MESSAGE(c.err.rfind("scopeprof: warning: SCOPEPROF_REPORT: ", 0) == 0, c.err);
    CHECK(count_lines(c.err) == 1);
    CHECK(contains(c.err, target));
    CHECK(contains(c.err, std::strerror(ENOTDIR)));
  }
  SUBCASE("not set: nothing is written") {
    const auto c = run_child("at_exit", {}, dir);
    CHECK(c.exit_code == 0);
    CHECK(c.err.empty());
    CHECK(c.out.empty());
  }
}

TEST_CASE("SCOPEPROF=0 in the environment disables recording from the start" * doctest::test_suite("child_process")) {
  const sptest::temp_dir dir;
  for (const char* off : {"SCOPEPROF=0", "SCOPEPROF=off", "SCOPEPROF=FALSE"}) {
    CAPTURE(off);
    const auto c = run_child("disabled", {off}, dir);
    CHECK_MESSAGE(c.exit_code == 0, c.out << c.err);
    CHECK(contains(c.out, "enabled=0 entered=0 after_switch=1"));
    CHECK(c.err.empty());
  }
}

TEST_CASE("malformed environment values warn once each at start-up and the program runs on" * doctest::test_suite("child_process")) {
  const sptest::temp_dir dir;
  SUBCASE("SCOPEPROF_CLOCK and SCOPEPROF_MAX_RECORDS") {
    const auto c = run_child("env", {"SCOPEPROF_CLOCK=sundial", "SCOPEPROF_MAX_RECORDS=lots"}, dir);
    CHECK(c.exit_code == 0);
    CHECK_MESSAGE(count_lines(c.err) == 2, c.err);
    CHECK(contains(c.err, "scopeprof: warning: SCOPEPROF_CLOCK='sundial'"));
    CHECK(contains(c.err, "scopeprof: warning: SCOPEPROF_MAX_RECORDS='lots'"));
    CHECK(contains(c.out, "max_records=4194304 recorded=1"));
  }
  SUBCASE("SCOPEPROF") {
    const auto c = run_child("env", {"SCOPEPROF=maybe"}, dir);
    CHECK(c.exit_code == 0);
    CHECK(count_lines(c.err) == 1);
    CHECK(contains(c.err, "scopeprof: warning: SCOPEPROF='maybe'"));
    CHECK(contains(c.out, "recorded=1"));  // the default is on
  }
  SUBCASE("valid values are used, silently") {
    const auto c = run_child("env", {"SCOPEPROF_CLOCK=steady", "SCOPEPROF_MAX_RECORDS=16k"}, dir);
    CHECK(c.exit_code == 0);
    CHECK(c.err.empty());
    CHECK(contains(c.out, "clock=std::chrono::steady_clock max_records=16384 recorded=1"));
  }
}
