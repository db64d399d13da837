// `scopeprof diff` (cli/diff.hpp): compare() on reports built from synthetic records (a scope 20% slower,
// one unchanged, reports from one distribution), the writers, and run_diff on saved files: exit statuses,
// formats, bad input. Also parse_fraction, the value of --fail-above.
#include "commands.hpp"
#include "diff.hpp"
#include "raw_builders.hpp"
#include "temp_files.hpp"

// After the project headers: with LibTorch, <scopeprof.hpp> brings glog, whose CHECK would replace doctest's.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using scopeprof_cli::diff_verdict;

struct scope_spec {
  std::string name;
  double mean_ns = 0;
  int calls = 200;
  bool device = false;  // also device-timed, span 80% of the host time
};

// A report of these scopes (roots one after another), each call's host time uniform within +-10% of the
// scope's mean. Deterministic in `seed`.
scopeprof::report make_report(const std::vector<scope_spec>& scopes, unsigned seed,
                              const std::string& program = "bench") {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> spread(0.9, 1.1);
  std::vector<sptest::raw_instance> records;
  std::vector<std::string> names;
  std::int64_t t = 1000;
  for (std::uint32_t site = 0; site < scopes.size(); ++site) {
    names.push_back(scopes[site].name);
    for (int i = 0; i < scopes[site].calls; ++i) {
      const auto d = static_cast<std::int64_t>(scopes[site].mean_ns * spread(rng));
      auto r = sptest::host_record(site, 0, t, t + d);
      if (scopes[site].device) r = sptest::device_timed(r, 0, 7, t + 5, t + 5 + d * 8 / 10);
      records.push_back(r);
      t += d + 100;
    }
  }
  auto snap = sptest::one_thread_snapshot("bench.cpp", names, std::move(records));
  snap.process.program = program;
  snap.process.pid = 4242;  // non-zero: the builder keeps this process description
  snap.process.host = "node0";
  return scopeprof::detail::build_report(std::move(snap));
}

const scopeprof_cli::diff_row* find_row(const scopeprof_cli::diff_result& d, const std::string& name,
                                        const std::string& quantity = "host") {
  for (const auto& r : d.rows)
    if (r.name == name && r.quantity == quantity) return &r;
  return nullptr;
}

// A: "slow" 100 us and "steady" 50 us (device-timed); B: "slow" 20% slower.
scopeprof::report baseline(unsigned seed = 1) {
  return make_report({{"slow", 100000}, {"steady", 50000, 200, true}}, seed);
}
scopeprof::report candidate(unsigned seed = 2, const std::string& program = "bench") {
  return make_report({{"slow", 120000}, {"steady", 50000, 200, true}}, seed, program);
}

}  // namespace

TEST_CASE("cli diff: a scope 20% slower is significant and first; an unchanged one is the same") {
  scopeprof_cli::diff_settings s;
  s.fail_above = 0.05;
  const auto d = scopeprof_cli::compare(baseline(), candidate(), s);
  REQUIRE(d.rows.size() == 3);  // slow host, steady host, steady device
  const auto& first = d.rows.front();
  CHECK(first.name == "slow");
  CHECK(first.quantity == "host");
  CHECK(first.verdict == diff_verdict::slower);
  CHECK(first.test.p_value < s.alpha);
  CHECK(first.change == doctest::Approx(0.2).epsilon(0.03));
  CHECK(first.moved == first.total_b - first.total_a);
  CHECK(first.moved > 3'000'000);  // 200 calls x 20 us
  CHECK(first.test.effect > 0.9);
  CHECK(first.failed);

  const auto* steady = find_row(d, "steady");
  REQUIRE(steady != nullptr);
  CHECK(steady->verdict == diff_verdict::same);
  CHECK_FALSE(steady->failed);
  const auto* device = find_row(d, "steady", "device");
  REQUIRE(device != nullptr);
  CHECK(device->calls_a == 200);
  CHECK(device->verdict == diff_verdict::same);

  REQUIRE(d.failed.size() == 1);
  CHECK(d.rows[d.failed[0]].name == "slow");
  for (std::size_t i = 1; i < d.rows.size(); ++i)  // by |moved|, descending
    CHECK(std::llabs(d.rows[i - 1].moved) >= std::llabs(d.rows[i].moved));
}

TEST_CASE("cli diff: the row that moved most comes first, whatever the order of the report") {
  // "big" is unchanged per call but has few long calls; "tiny" is 30% slower but moves less in total.
  const auto a = make_report({{"tiny", 1000, 300}, {"big", 10'000'000, 50}}, 5);
  const auto b = make_report({{"tiny", 1300, 300}, {"big", 10'000'000, 50}}, 6);
  const auto d = scopeprof_cli::compare(a, b, {});
  REQUIRE(d.rows.size() == 2);
  CHECK(std::llabs(d.rows[0].moved) >= std::llabs(d.rows[1].moved));
  const auto* tiny = find_row(d, "tiny");
  REQUIRE(tiny != nullptr);
  CHECK(tiny->verdict == diff_verdict::slower);
}

TEST_CASE("cli diff: two runs of one distribution have no slower row and do not fail") {
  for (unsigned seed = 10; seed < 20; seed += 2) {
    CAPTURE(seed);
    scopeprof_cli::diff_settings s;
    s.fail_above = 0.05;
    const auto d = scopeprof_cli::compare(baseline(seed), baseline(seed + 1), s);
    CHECK(d.failed.empty());
    for (const auto& r : d.rows) {
      CAPTURE(r.name);
      CHECK(r.verdict != diff_verdict::slower);
      CHECK(std::fabs(r.change) < 0.05);
    }
  }
}

TEST_CASE("cli diff: too few calls, and scopes on one side only") {
  const auto a = make_report({{"rare", 1000, 5}, {"gone", 2000, 20}}, 3);
  const auto b = make_report({{"rare", 5000, 5}, {"new", 3000, 20}}, 4);
  scopeprof_cli::diff_settings s;
  s.fail_above = 0.05;
  const auto d = scopeprof_cli::compare(a, b, s);
  const auto* rare = find_row(d, "rare");
  const auto* gone = find_row(d, "gone");
  const auto* added = find_row(d, "new");
  REQUIRE(rare != nullptr);
  REQUIRE(gone != nullptr);
  REQUIRE(added != nullptr);
  CHECK(rare->verdict == diff_verdict::too_few_calls);  // 5x slower, but 5 calls prove nothing
  CHECK_FALSE(rare->failed);
  CHECK(gone->verdict == diff_verdict::only_in_a);
  CHECK(gone->moved == -gone->total_a);
  CHECK(added->verdict == diff_verdict::only_in_b);
  CHECK(added->calls_b == 20);
  CHECK(d.failed.empty());
}

TEST_CASE("cli diff: writers name the method, and Markdown has a verdict line and a table") {
  scopeprof_cli::diff_settings s;
  s.fail_above = 0.05;
  auto d = scopeprof_cli::compare(baseline(), candidate(), s);
  d.a.path = "a.json";
  d.b.path = "b.json";
  std::ostringstream text, md, json;
  scopeprof_cli::write_diff_text(d, text);
  scopeprof_cli::write_diff_markdown(d, md);
  scopeprof_cli::write_diff_json(d, json);
  CHECK(text.str().find("Mann-Whitney U (two-sided, normal approximation with tie correction) on per-call "
                        "histograms, alpha 0.05") != std::string::npos);
  CHECK(text.str().find("a.json (program bench, rank 0") != std::string::npos);
  CHECK(text.str().find("FAILED") != std::string::npos);
  CHECK(md.str().rfind("**scopeprof diff: FAILED**", 0) == 0);
  CHECK(md.str().find("\n| name | quantity |") != std::string::npos);
  const auto doc = nlohmann::json::parse(json.str());
  CHECK(doc["schema"] == "scopeprof-diff/1");
  CHECK(doc["rows"][0]["name"] == "slow");
  CHECK(doc["rows"][0]["verdict"] == "slower");
  CHECK(doc["rows"][0]["median_a"].is_number_integer());
  CHECK(doc["failed"].size() == 1);
}

TEST_CASE("cli diff: durations and changes print with units and three figures") {
  using scopeprof_cli::format_change;
  using scopeprof_cli::format_duration;
  CHECK(format_duration(0) == "0 ns");
  CHECK(format_duration(999) == "999 ns");
  CHECK(format_duration(1234) == "1.23 us");
  CHECK(format_duration(999'700) == "1.00 ms");
  CHECK(format_duration(12'345'678) == "12.3 ms");
  CHECK(format_duration(-2'500'000'000.0, true) == "-2.50 s");
  CHECK(format_duration(1500, true) == "+1.50 us");
  CHECK(format_change(0.2) == "+20.0%");
  CHECK(format_change(-0.031) == "-3.10%");
  CHECK(format_change(NAN) == "n/a");
}

TEST_CASE("cli diff: parse_fraction takes percentages and fractions, nothing else") {
  double v = -1;
  std::string error;
  CHECK(scopeprof_cli::parse_fraction("5%", v, error));
  CHECK(v == doctest::Approx(0.05));
  CHECK(scopeprof_cli::parse_fraction("5 %", v, error));
  CHECK(v == doctest::Approx(0.05));
  CHECK(scopeprof_cli::parse_fraction("0.05", v, error));
  CHECK(v == doctest::Approx(0.05));
  CHECK(scopeprof_cli::parse_fraction("0", v, error));
  CHECK(v == 0);
  for (const char* bad : {"", " ", "-5%", "-0.1", "nan", "NaN%", "inf", "abc", "5%%", "%", "0x10", "5 percent"}) {
    CAPTURE(bad);
    v = 0.5;
    error.clear();
    CHECK_FALSE(scopeprof_cli::parse_fraction(bad, v, error));
    CHECK(v == 0.5);  // unchanged on failure
    CHECK_FALSE(error.empty());
  }
}

namespace {

struct diff_run {
  int status = -1;
  std::string out, err;
};

diff_run run(const scopeprof_cli::diff_options& o) {
  std::ostringstream out, err;
  diff_run r;
  r.status = scopeprof_cli::run_diff(o, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// A and B saved in `dir`: B 20% slower in "slow"; C from another program.
struct saved_reports {
  sptest::temp_dir dir;
  std::string a = dir / "a.json", b = dir / "b.json", a2 = dir / "a2.json", other = dir / "other.json";
  saved_reports() {
    REQUIRE(baseline(1).write_json(a));
    REQUIRE(candidate(2).write_json(b));
    REQUIRE(baseline(3).write_json(a2));
    REQUIRE(candidate(2, "other_bench").write_json(other));
  }
};

}  // namespace

TEST_CASE("cli diff: run_diff exits 1 only for a significant regression above --fail-above") {
  saved_reports f;
  scopeprof_cli::diff_options o;
  o.baseline = f.a;
  o.candidate = f.b;
  auto r = run(o);
  CHECK(r.status == scopeprof_cli::exit_ok);  // no --fail-above: a report, never a failure
  CHECK(r.out.find("slower") != std::string::npos);
  o.fail_above = 0.05;
  r = run(o);
  CHECK(r.status == scopeprof_cli::exit_finding);
  CHECK(r.err.find("slow (host +") != std::string::npos);
  CHECK(r.err.find("steady") == std::string::npos);
  o.fail_above = 0.5;
  CHECK(run(o).status == scopeprof_cli::exit_ok);
  o.fail_above = 0.05;
  o.fail_on = "device";  // "slow" is slower in host time only: a device-only gate passes
  CHECK(run(o).status == scopeprof_cli::exit_ok);
  o.fail_on = "host";
  CHECK(run(o).status == scopeprof_cli::exit_finding);
  o.fail_on = "sideways";
  r = run(o);
  CHECK(r.status == scopeprof_cli::exit_bad_input);
  CHECK(r.err.find("--fail-on takes host, device or both") != std::string::npos);
  o.fail_on = "both";
  o.candidate = f.a2;  // same distribution: noise never fails
  r = run(o);
  CHECK(r.status == scopeprof_cli::exit_ok);
  CHECK(r.err.empty());
}

TEST_CASE("cli diff: run_diff writes Markdown and JSON, by --format or by the output's suffix") {
  saved_reports f;
  scopeprof_cli::diff_options o;
  o.baseline = f.a;
  o.candidate = f.b;
  o.format = "md";
  auto r = run(o);
  REQUIRE(r.status == scopeprof_cli::exit_ok);
  std::istringstream lines(r.out);
  std::string line;
  bool table = false;
  while (std::getline(lines, line)) table = table || line.rfind("| name |", 0) == 0;
  CHECK(table);
  CHECK(r.out.rfind("**scopeprof diff:", 0) == 0);

  o.format.clear();
  o.output = f.dir / "diff.json";
  REQUIRE(run(o).status == scopeprof_cli::exit_ok);
  const auto doc = nlohmann::json::parse(sptest::read_file_bytes(o.output));
  CHECK(doc["schema"] == "scopeprof-diff/1");
  CHECK(doc["a"]["path"] == f.a);

  o.output = f.dir / "no_such_dir/diff.md";
  r = run(o);
  CHECK(r.status == scopeprof_cli::exit_bad_input);
  CHECK(r.err.find(o.output) != std::string::npos);
}

TEST_CASE("cli diff: bad input exits 2 with a message naming the file") {
  saved_reports f;
  scopeprof_cli::diff_options o;
  o.baseline = f.a;

  SUBCASE("truncated") {
    const std::string json = baseline(1).json();
    const std::string cut = f.dir / "cut.json";
    std::ofstream(cut, std::ios::binary) << json.substr(0, json.size() / 2);
    o.candidate = cut;
    const auto r = run(o);
    CHECK(r.status == scopeprof_cli::exit_bad_input);
    CHECK(r.err.find(cut) != std::string::npos);
    CHECK(r.out.empty());
  }
  SUBCASE("missing") {
    o.candidate = f.dir / "missing.json";
    const auto r = run(o);
    CHECK(r.status == scopeprof_cli::exit_bad_input);
    CHECK(r.err.find(o.candidate) != std::string::npos);
  }
  SUBCASE("another schema version") {
    std::string json = baseline(1).json();
    const auto at = json.find("scopeprof-report/1");
    REQUIRE(at != std::string::npos);
    json.replace(at, 18, "scopeprof-report/9");
    o.candidate = f.dir / "v9.json";
    std::ofstream(o.candidate, std::ios::binary) << json;
    const auto r = run(o);
    CHECK(r.status == scopeprof_cli::exit_bad_input);
    CHECK(r.err.find(o.candidate) != std::string::npos);
  }
  SUBCASE("another program") {
    o.candidate = f.other;
    auto r = run(o);
    CHECK(r.status == scopeprof_cli::exit_bad_input);
    CHECK(r.err.find(f.a + " (program bench) and " + f.other + " (program other_bench) come from different programs") !=
          std::string::npos);
    o.allow_other_program = true;
    r = run(o);
    CHECK(r.status == scopeprof_cli::exit_ok);
  }
}

TEST_CASE("cli diff: a narrow text table shortens long names instead of failing") {
  const std::string long_name(100, 'n');
  const auto d = scopeprof_cli::compare(make_report({{long_name, 1000, 20}}, 1), make_report({{long_name, 1000, 20}}, 2), {});
  for (int width : {40, 80, 1000}) {
    CAPTURE(width);
    std::ostringstream text;
    scopeprof_cli::write_diff_text(d, text, width);
    const bool whole = text.str().find(long_name) != std::string::npos;
    CHECK(whole == (width == 1000));
    const bool shortened = text.str().find("nnnnnnnnnnnnn...") != std::string::npos;
    CHECK(shortened == (width != 1000));
  }
}
