// The `scopeprof` executable end to end: argument handling, exit statuses, and each command on saved
// reports (the commands' own tests check their figures; these check the wiring a user and a CI job see).
#include "cli_fixtures.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

/// Saves reports of `world` ranks (rank 2's backward `factor` times slower) as dir/r.RANK.json.
void save_ranks(const sptest::temp_dir& dir, int world, double factor, std::uint32_t seed = 1) {
  for (int r = 0; r < world; ++r) {
    const auto rep = cli_test::rank_report(r, world, 60, r == 2 ? factor : 1.0, seed + static_cast<std::uint32_t>(r));
    REQUIRE(rep.write_json(dir / ("r." + std::to_string(r) + ".json")));
  }
}

}  // namespace

TEST_CASE("cli exe: help, version and usage errors") {
  sptest::temp_dir dir;
  auto r = cli_test::run_tool(dir, "--help");
  CHECK(r.status == 0);
  for (const char* word : {"merge", "diff", "show"}) CHECK(r.out.find(word) != std::string::npos);
  r = cli_test::run_tool(dir, "--version");
  CHECK(r.status == 0);
  CHECK(r.out.find("scopeprof " SCOPEPROF_VERSION_STRING) != std::string::npos);
  r = cli_test::run_tool(dir, "");
  CHECK(r.status == 2);
  r = cli_test::run_tool(dir, "frobnicate x.json");
  CHECK(r.status == 2);
  r = cli_test::run_tool(dir, "diff a.json");  // the second report is missing
  CHECK(r.status == 2);
  r = cli_test::run_tool(dir, "diff a.json b.json --fail-above lots");
  CHECK(r.status == 2);
  CHECK(r.err.find("--fail-above lots") != std::string::npos);
}

TEST_CASE("cli exe: show renders a saved report in every table format, and refuses what it cannot") {
  sptest::temp_dir dir;
  REQUIRE(cli_test::rank_report(1, 2, 20).write_json(dir / "r.json"));
  auto r = cli_test::run_tool(dir, "show '" + dir / "r.json" + "'");
  CHECK(r.status == 0);
  CHECK(r.out.find("backward") != std::string::npos);
  CHECK(r.out.find("rank 1 of 2") != std::string::npos);
  r = cli_test::run_tool(dir, "show - < '" + dir / "r.json" + "'");
  CHECK(r.status == 0);
  CHECK(r.out.find("matmul") != std::string::npos);
  for (const char* out : {"o.html", "o.csv", "o.txt", "o.json"}) {
    r = cli_test::run_tool(dir, "show '" + dir / "r.json" + "' -o '" + dir / out + "'");
    CHECK_MESSAGE(r.status == 0, out, ": ", r.err);
    CHECK(sptest::read_file_bytes(dir / out).find("backward") != std::string::npos);
  }
  CHECK(sptest::read_file_bytes(dir / "o.html").rfind("<!DOCTYPE html>", 0) == 0);
  // The JSON it writes reads back (show of show).
  r = cli_test::run_tool(dir, "show '" + dir / "o.json" + "'");
  CHECK(r.status == 0);

  r = cli_test::run_tool(dir, "show '" + dir / "r.json" + "' -o '" + dir / "o.trace.json" + "'");
  CHECK(r.status == 2);
  CHECK(r.err.find("timeline") != std::string::npos);
  r = cli_test::run_tool(dir, "show '" + dir / "r.json" + "' -o '" + dir / "no/such/dir/o.txt" + "'");
  CHECK(r.status == 2);
  CHECK(r.err.find("no/such/dir/o.txt") != std::string::npos);
  r = cli_test::run_tool(dir, "show '" + dir / "missing.json" + "'");
  CHECK(r.status == 2);
  CHECK(r.err == "scopeprof show: " + dir / "missing.json" + ": cannot open (No such file or directory)\n");
}

TEST_CASE("cli exe: the tool itself writes no report, whatever SCOPEPROF_ variables the job exports") {
  sptest::temp_dir dir;
  REQUIRE(cli_test::rank_report(0, 1, 3).write_json(dir / "r.json"));
  const auto r = cli_test::run_tool(dir, "show '" + dir / "r.json" + "'",
                                    "SCOPEPROF_REPORT='" + dir / "own.json" + "' SCOPEPROF_REPORT_EVERY=1");
  CHECK(r.status == 0);
  CHECK(sptest::read_file_bytes(dir / "own.json").empty());
  CHECK(r.err.empty());
}

TEST_CASE("cli exe: merge names the straggler; a missing rank is an error") {
  sptest::temp_dir dir;
  save_ranks(dir, 4, 3.0);
  auto r = cli_test::run_tool(dir, "merge '" + dir / "r.0.json" + "' '" + dir / "r.1.json" + "' '" + dir / "r.2.json" +
                                       "' '" + dir / "r.3.json" + "' -o '" + dir / "m.json" + "'");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const nlohmann::json m = nlohmann::json::parse(sptest::read_file_bytes(dir / "m.json"));
  CHECK(m.dump().find("\"straggler\":2") != std::string::npos);
  r = cli_test::run_tool(dir, "merge '" + dir / "r.0.json" + "' '" + dir / "r.1.json" + "' '" + dir / "r.3.json" + "'");
  CHECK(r.status == 2);
  CHECK(r.err.find("2") != std::string::npos);
  CHECK(r.err.find("missing") != std::string::npos);
}

TEST_CASE("cli exe: diff fails a 20% slower scope at --fail-above 5%, and passes a rerun of the same program") {
  sptest::temp_dir dir;
  REQUIRE(cli_test::rank_report(0, 1, 200, 1.0, 11).write_json(dir / "a.json"));
  REQUIRE(cli_test::rank_report(0, 1, 200, 1.2, 12).write_json(dir / "slow.json"));
  REQUIRE(cli_test::rank_report(0, 1, 200, 1.0, 13).write_json(dir / "same.json"));
  auto r = cli_test::run_tool(dir, "diff '" + dir / "a.json" + "' '" + dir / "slow.json" + "' --fail-above 5%");
  CHECK_MESSAGE(r.status == 1, r.out, r.err);
  CHECK(r.out.find("backward") != std::string::npos);
  r = cli_test::run_tool(dir, "diff '" + dir / "a.json" + "' '" + dir / "same.json" + "' --fail-above 5%");
  CHECK_MESSAGE(r.status == 0, r.out, r.err);
  r = cli_test::run_tool(dir, "diff '" + dir / "a.json" + "' '" + dir / "slow.json" + "' --format md");
  CHECK(r.status == 0);
  CHECK(r.out.find("\n|") != std::string::npos);
  REQUIRE(cli_test::rank_report(0, 1, 20, 1.0, 1, 100'000, "other").write_json(dir / "other.json"));
  r = cli_test::run_tool(dir, "diff '" + dir / "a.json" + "' '" + dir / "other.json" + "'");
  CHECK(r.status == 2);
  CHECK(r.err.find("different programs") != std::string::npos);
  r = cli_test::run_tool(dir, "diff '" + dir / "a.json" + "' '" + dir / "other.json" + "' --allow-other-program");
  CHECK(r.status == 0);
}
