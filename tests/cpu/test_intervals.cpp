// SCOPEPROF_REPORT_EVERY / set_report_every(): the tables of each interval as one JSON line, written as the
// run goes. The lines tile the run (each begins where the previous one ended), every scope is in exactly
// one of them, so they add up to the run's tables; a file that cannot be written costs lines, never tables.
#include "json_check.hpp"
#include "stderr_capture.hpp"
#include "temp_files.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using namespace scopeprof;
using sptest::json;

struct intervals_off {
  ~intervals_off() {
    set_report_every("off");
    reset();
  }
};

// The pass the program's exit runs: it also writes the line of the interval under way.
void write_final_line() {
  detail::registry& r = detail::the_registry();
  std::lock_guard<std::mutex> serial(r.collect_mu);
  detail::drain_state& d = detail::the_drain();
  d.intervals.final_line = true;
  detail::drain_pass(r, d, detail::view_registry(r));
  d.intervals.final_line = false;
}

// Every line of the file, parsed strictly (a line that is not valid JSON fails the test).
std::vector<json> read_lines(const std::string& path) {
  std::istringstream in(sptest::read_file_bytes(path));
  std::vector<json> out;
  std::string line, error;
  while (std::getline(in, line)) {
    json j;
    INFO("line " << out.size() + 1 << ": " << line.substr(0, 200));
    REQUIRE_MESSAGE(sptest::parse_json(line, j, error), error);
    out.push_back(std::move(j));
  }
  return out;
}

std::int64_t integer(const json& j, const char* key) {
  const json* v = j.find(key);
  REQUIRE_MESSAGE(v != nullptr, key);
  std::int64_t out = 0;
  REQUIRE_MESSAGE(v->integer(out), key);
  return out;
}

// Calls per path ("a/b") of one line's tree.
std::map<std::string, std::int64_t> calls_by_path(const json& line) {
  std::map<std::string, std::int64_t> out;
  std::vector<std::string> paths;
  const json* tree = line.find("tree");
  REQUIRE(tree != nullptr);
  for (const json& row : tree->items) {
    const std::int64_t parent = integer(row, "parent");
    const std::string name = row.find("name")->text;
    paths.push_back(parent < 0 ? name : paths.at(static_cast<std::size_t>(parent)) + "/" + name);
    out[paths.back()] += integer(row, "calls");
  }
  return out;
}

std::map<std::string, std::int64_t> calls_by_path(const report& rep) {
  std::map<std::string, std::int64_t> out;
  std::vector<std::string> paths;
  for (const tree_row& row : rep.tree()) {
    paths.push_back(row.parent < 0 ? row.name : paths.at(static_cast<std::size_t>(row.parent)) + "/" + row.name);
    out[paths.back()] += static_cast<std::int64_t>(row.calls);
  }
  return out;
}

void check_tiling(const std::vector<json>& lines) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(i);
    CHECK(lines[i].find("schema")->text == "scopeprof-intervals/1");
    CHECK(integer(lines[i], "sequence") == static_cast<std::int64_t>(i + 1));
    CHECK(integer(lines[i], "begin") <= integer(lines[i], "end"));
    if (i) CHECK(integer(lines[i], "begin") == integer(lines[i - 1], "end"));
    CHECK(lines[i].find("final")->b == (i + 1 == lines.size()));
  }
}

}  // namespace

TEST_CASE("report every: the setting's values") {
  detail::interval_every e;
  std::string why;
  CHECK(detail::parse_interval_every("10s", e, why));
  CHECK((e.unit == detail::interval_unit::nanoseconds && e.n == 10'000'000'000ull));
  CHECK(detail::parse_interval_every("250ms", e, why));
  CHECK(e.n == 250'000'000ull);
  CHECK(detail::parse_interval_every("2min", e, why));
  CHECK(e.n == 120'000'000'000ull);
  CHECK(detail::parse_interval_every("100steps", e, why));
  CHECK((e.unit == detail::interval_unit::steps && e.n == 100));
  CHECK(detail::parse_interval_every("1step", e, why));
  CHECK(detail::parse_interval_every("off", e, why));
  CHECK(e.unit == detail::interval_unit::off);
  for (const char* bad : {"10", "s", "0s", "-1s", "1.5s", "10 s", "10parsecs", "999999999999999min", "0steps", "500us"}) {
    CAPTURE(bad);
    detail::interval_every kept;
    kept.text = "kept";
    CHECK(!detail::parse_interval_every(bad, kept, why));
    CHECK(kept.text == "kept");
    CHECK(!why.empty());
  }
  CHECK(!set_report_every("every now and then"));
  CHECK(detail::default_interval_path("prof/run.json") == "prof/run.intervals.jsonl");
  CHECK(detail::default_interval_path("prof/run.trace.json.gz") == "prof/run.intervals.jsonl");
  CHECK(detail::default_interval_path("run.speedscope.json") == "run.intervals.jsonl");
  CHECK(detail::default_interval_path("report.txt") == "report.intervals.jsonl");
  CHECK(detail::default_interval_path("stderr") == "scopeprof-%p.intervals.jsonl");
  CHECK(detail::default_interval_path("") == "scopeprof-%p.intervals.jsonl");
}

TEST_CASE("report every N steps: one line per N steps, and the lines add up to the tables") {
  intervals_off guard;
  sptest::temp_dir dir;
  const std::string path = dir / "steps.intervals.jsonl";
  reset();
  REQUIRE(set_report_every("2steps", path));
  const auto first = static_cast<std::int64_t>(detail::the_registry().next_step.load());
  next_step();  // opens step `first`
  for (int i = 0; i < 8; ++i) {
    {
      PROF_SCOPE("iv step");
      for (int k = 0; k < 3; ++k) {
        PROF_SCOPE("iv layer");
      }
    }
    next_step();
    if (i == 3) collect();  // a pass in the middle, as the drain thread's are: the cuts do not move
  }
  { PROF_SCOPE("iv after"); }
  const report tables = collect();
  write_final_line();
  const std::vector<json> lines = read_lines(path);
  REQUIRE(lines.size() == 5);
  check_tiling(lines);
  std::map<std::string, std::int64_t> sum;
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    const json* steps = lines[i].find("steps");
    REQUIRE(steps != nullptr);
    CHECK(integer(*steps, "first") == first + 2 * static_cast<std::int64_t>(i));
    CHECK(integer(*steps, "end") == first + 2 * static_cast<std::int64_t>(i) + 2);
    const auto calls = calls_by_path(lines[i]);
    CHECK(calls.at("iv step") == 2);  // exactly the scopes of its two steps
    CHECK(calls.at("iv step/iv layer") == 6);
    CHECK(integer(lines[i], "scopes") == 8);
    for (const auto& [p, n] : calls) sum[p] += n;
  }
  const auto last = calls_by_path(lines[4]);
  CHECK(last.size() == 1);
  CHECK(last.at("iv after") == 1);
  sum["iv after"] += 1;
  CHECK(sum == calls_by_path(tables));
}

TEST_CASE("report every N ms: contiguous intervals of N ms whose calls add up to the tables") {
  intervals_off guard;
  sptest::temp_dir dir;
  const std::string path = dir / "time.intervals.jsonl";
  reset();
  REQUIRE(set_report_every("20ms", path));
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(90);
  std::int64_t n = 0;
  while (std::chrono::steady_clock::now() < until) {
    PROF_SCOPE("iv tick");
    {
      PROF_SCOPE("iv inner");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    ++n;
  }
  const report tables = collect();
  write_final_line();
  const std::vector<json> lines = read_lines(path);
  REQUIRE(lines.size() >= 5);  // 90 ms of 20 ms intervals, then the one under way
  check_tiling(lines);
  std::map<std::string, std::int64_t> sum;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i + 1 < lines.size()) CHECK(integer(lines[i], "end") - integer(lines[i], "begin") == 20'000'000);
    CHECK(lines[i].find("steps")->is(json::type::null));
    for (const auto& [p, c] : calls_by_path(lines[i])) sum[p] += c;
  }
  CHECK(sum["iv tick"] == n);
  CHECK(sum["iv tick/iv inner"] == n);
  CHECK(sum == calls_by_path(tables));
}

TEST_CASE("report every: hostile names stay valid JSON; an unwritable file costs lines, not tables") {
  intervals_off guard;
  sptest::temp_dir dir;
  const std::string path = dir / "names.intervals.jsonl";
  reset();
  REQUIRE(set_report_every("1step", path));
  {
    PROF_SCOPE_DYN(std::string("quote\" back\\slash\nnew line \x01 \xff\xfe bad utf-8 </script>"));
  }
  next_step();
  write_final_line();
  const std::vector<json> lines = read_lines(path);  // strict parse of every line
  REQUIRE(!lines.empty());

  sptest::stderr_capture err;
  REQUIRE(set_report_every("1step", dir / "no such folder/x.jsonl"));
  for (int i = 0; i < 3; ++i) {
    PROF_SCOPE("iv lost line");
    next_step();
  }
  const report tables = collect();
  write_final_line();
  const std::string text = err.finish();
  CHECK(text.find("SCOPEPROF_REPORT_EVERY: cannot write") != std::string::npos);
  CHECK(text.find("the tables are not") != std::string::npos);
  const tree_row* row = nullptr;
  for (const tree_row& t : tables.tree())
    if (t.name == "iv lost line") row = &t;
  REQUIRE(row != nullptr);
  CHECK(row->calls == 3);
  {
    std::lock_guard<std::mutex> serial(detail::the_registry().collect_mu);
    CHECK(detail::the_drain().intervals.lines_failed >= 3);
  }
}

TEST_CASE("report every: reset() forgets the interval's scopes so far, and off stops the lines") {
  intervals_off guard;
  sptest::temp_dir dir;
  const std::string path = dir / "reset.intervals.jsonl";
  reset();
  REQUIRE(set_report_every("1step", path));
  next_step();  // opens step A: the first interval ends at the mark of step A + 1
  { PROF_SCOPE("iv forgotten"); }
  reset();
  { PROF_SCOPE("iv kept"); }
  next_step();
  collect();
  std::vector<json> lines = read_lines(path);
  REQUIRE(lines.size() == 1);
  const auto calls = calls_by_path(lines[0]);
  CHECK(calls.count("iv forgotten") == 0);
  CHECK(calls.at("iv kept") == 1);
  REQUIRE(set_report_every("off"));
  { PROF_SCOPE("iv not in lines"); }
  next_step();
  write_final_line();
  CHECK(read_lines(path).size() == 1);
  const report tables = collect();
  CHECK(calls_by_path(tables).at("iv not in lines") == 1);
  CHECK(calls_by_path(tables).at("iv kept") == 1);
}
