// Declared work (PROF_SCOPE_WORK, add_work) in the scopeprof tool: the merge sums each path's work over the
// ranks and names the rank with the lowest rate; the streaming tree reader reads a row's work as the full
// loader does (and refuses work no run can produce); diff shows each run's rates side by side. Exact
// figures on synthetic reports.
#include "commands.hpp"
#include "diff.hpp"
#include "merge.hpp"
#include "merge_output.hpp"
#include "raw_builders.hpp"
#include "report_file.hpp"
#include "temp_files.hpp"

// After the project headers: with LibTorch, <scopeprof.hpp> brings glog, whose CHECK would replace doctest's.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using scopeprof_cli::report_file;

/// One rank: step > tail, the tail device-timed for `span_ns` and declaring 1 MB and 2 kFLOP; "other"
/// declares nothing.
report_file work_rank(std::int64_t rank, std::int64_t world, std::int64_t span_ns) {
  auto tail = sptest::device_timed(sptest::host_record(1, 1, 10, 40), 0, 7, 1000, 1000 + span_ns);
  tail.has_work = true;
  tail.work_bytes = 1e6;
  tail.work_flops = 2e3;
  std::vector<sptest::raw_instance> post{tail, sptest::host_record(2, 1, 40, 45), sptest::host_record(0, 0, 0, 50)};
  auto snap = sptest::one_thread_snapshot("train.cpp", {"step", "tail", "other"}, std::move(post));
  snap.process.rank = rank;
  snap.process.world_size = world;
  snap.process.program = "train";
  snap.process.host = "node" + std::to_string(rank);
  snap.process.pid = 100 + rank;
  return {"run." + std::to_string(rank) + ".json", scopeprof::detail::build_report(std::move(snap))};
}

const scopeprof_cli::merged_node& node_named(const scopeprof_cli::merged_result& m, const std::string& name) {
  for (const auto& n : m.nodes)
    if (n.name == name) return n;
  FAIL("no node " << name);
  return m.nodes.front();
}

/// A report of `calls` calls of "tail", each device-timed for `span_ns` and declaring `bytes`, and of
/// "host only" (no device timing) declaring 1e3 FLOPs over 500 ns when `host_work`.
scopeprof::report run_of(std::int64_t span_ns, double bytes, bool host_work, const char* extra = nullptr) {
  std::vector<sptest::raw_instance> records;
  std::vector<std::string> names{"tail", "host only"};
  std::int64_t t = 1000;
  for (int i = 0; i < 50; ++i, t += 3000) {
    auto r = sptest::device_timed(sptest::host_record(0, 0, t, t + 100), 0, 7, t + 10, t + 10 + span_ns);
    r.has_work = true;
    r.work_bytes = bytes;
    records.push_back(r);
    auto h = sptest::host_record(1, 0, t + 200, t + 700);
    h.has_work = host_work;
    h.work_flops = host_work ? 1e3 : 0;
    records.push_back(h);
    if (extra != nullptr) {
      names.resize(3, extra);
      auto e = sptest::host_record(2, 0, t + 800, t + 900);
      e.has_work = true;
      e.work_bytes = 10;
      records.push_back(e);
    }
  }
  auto snap = sptest::one_thread_snapshot("w.cpp", names, std::move(records));
  snap.process.pid = 7;
  snap.process.program = "w";
  return scopeprof::detail::build_report(std::move(snap));
}

const scopeprof_cli::work_diff_row& work_row(const scopeprof_cli::diff_result& d, const std::string& name) {
  for (const auto& r : d.work)
    if (r.name == name) return r;
  FAIL("no work row " << name);
  return d.work.front();
}

/// A report whose scopes declare nothing.
scopeprof::report no_work_report() {
  std::vector<sptest::raw_instance> records;
  for (int i = 0; i < 30; ++i) records.push_back(sptest::host_record(0, 0, 100 * i, 100 * i + 50));
  auto snap = sptest::one_thread_snapshot("q.cpp", {"quiet"}, std::move(records));
  snap.process.pid = 9;
  return scopeprof::detail::build_report(std::move(snap));
}

}  // namespace

TEST_CASE("cli merge: declared work summed over ranks, each rank's rate, the slowest rank named") {
  scopeprof_cli::merger m;
  std::string error;
  for (std::int64_t rank : {1, 0, 2}) REQUIRE_MESSAGE(m.add(work_rank(rank, 3, rank == 1 ? 2000 : 1000), error), error);
  const scopeprof_cli::merged_result r = m.finish(error);
  REQUIRE_MESSAGE(error.empty(), error);
  REQUIRE(r.any_work());
  const auto& tail = node_named(r, "tail");
  CHECK(tail.work.calls == 3);
  CHECK(tail.work.bytes == 3e6);
  CHECK(tail.work.flops == 6e3);
  CHECK(tail.bytes_per_s.ranks == 3);
  CHECK(tail.bytes_per_s.min == doctest::Approx(5e11));  // 1 MB over 2 us, rank 1
  CHECK(tail.bytes_per_s.median == doctest::Approx(1e12));
  CHECK(tail.bytes_per_s.max == doctest::Approx(1e12));
  CHECK(tail.bytes_per_s.slowest == 1);
  CHECK(tail.flops_per_s.slowest == 1);
  CHECK(tail.flops_per_s.min == doctest::Approx(1e9));
  CHECK_FALSE(node_named(r, "other").work.any());
  CHECK(node_named(r, "other").bytes_per_s.ranks == 0);

  const std::string text = scopeprof_cli::merge_text(r, 160);
  CHECK(text.find("GB/s min") != std::string::npos);
  CHECK(text.find("3M") != std::string::npos);  // bytes summed over the ranks: 3 MB
  CHECK(text.find("500.0") != std::string::npos);  // rank 1's GB/s
  CHECK(scopeprof_cli::merge_markdown(r).find("declared work GB/s median") != std::string::npos);

  const auto doc = nlohmann::json::parse(scopeprof_cli::merge_json(r));
  bool found = false;
  for (const auto& n : doc["nodes"]) {
    if (n["path"].back() != "tail") {
      if (n["path"].back() == "other") CHECK(n["work"].is_null());
      continue;
    }
    found = true;
    CHECK(n["work"]["bytes"] == 3e6);
    CHECK(n["work"]["bytes_per_s"]["slowest"] == 1);
    CHECK(n["work"]["bytes_per_s"]["per_rank"][1].get<double>() == doctest::Approx(5e11));
  }
  CHECK(found);
}

TEST_CASE("cli merge: without declared work the outputs carry no work columns") {
  scopeprof_cli::merger m;
  std::string error;
  auto f = work_rank(0, 1, 1000);
  auto snap = sptest::one_thread_snapshot("t.cpp", {"a"}, {sptest::host_record(0, 0, 0, 10)});
  snap.process.world_size = 1;
  f.report = scopeprof::detail::build_report(std::move(snap));
  REQUIRE(m.add(f, error));
  const auto r = m.finish(error);
  CHECK_FALSE(r.any_work());
  CHECK(scopeprof_cli::merge_text(r, 120).find("GB/s min") == std::string::npos);  // (the legend names it)
  CHECK(scopeprof_cli::merge_markdown(r).find("bytes (sum)") == std::string::npos);
}

TEST_CASE("cli report tree reader: a row's work as the full loader reads it; impossible work refused") {
  sptest::temp_dir dir;
  const std::string path = dir / "r.json";
  REQUIRE(work_rank(0, 1, 1500).report.write_json(path).ok());
  report_file full, tree;
  std::string error;
  REQUIRE_MESSAGE(scopeprof_cli::load_report(path, full, error), error);
  REQUIRE_MESSAGE(scopeprof_cli::load_report_tree(path, tree, error), error);
  REQUIRE(full.report.tree().size() == tree.report.tree().size());
  for (std::size_t i = 0; i < tree.report.tree().size(); ++i) {
    const auto& a = full.report.tree()[i].work;
    const auto& b = tree.report.tree()[i].work;
    CHECK(a.calls == b.calls);
    CHECK(a.bytes == b.bytes);
    CHECK(a.flops == b.flops);
    CHECK(a.device_calls == b.device_calls);
    CHECK(a.device_bytes == b.device_bytes);
    CHECK(a.device_ns == b.device_ns);
    CHECK(a.device == b.device);
    CHECK(a.host_calls == b.host_calls);
    CHECK(a.unmeasured == b.unmeasured);
  }

  // Calls that do not add up, and a negative quantity: the file and the field are named.
  const std::string bytes = sptest::read_file_bytes(path);
  const std::size_t tree_at = bytes.find("\"tree\":");
  REQUIRE(tree_at != std::string::npos);
  const std::size_t at = bytes.find("\"device_calls\":1", tree_at);
  REQUIRE(at != std::string::npos);
  std::string broken = bytes;
  broken.replace(at, 16, "\"device_calls\":5");
  CHECK_FALSE(scopeprof_cli::parse_report_tree(broken, "bad.json", tree, error));
  CHECK(error.find("bad.json") != std::string::npos);
  CHECK(error.find("work") != std::string::npos);
  const std::size_t b = bytes.find("\"bytes\":", tree_at);
  REQUIRE(b != std::string::npos);
  broken = bytes;
  broken.insert(b + 8, "-");
  CHECK_FALSE(scopeprof_cli::parse_report_tree(broken, "neg.json", tree, error));
  CHECK(error.find("negative") != std::string::npos);
}

TEST_CASE("cli diff: declared work side by side, the change of each rate, one-sided and changed work marked") {
  const scopeprof::report a = run_of(1000, 1e6, true);
  const scopeprof::report b = run_of(800, 1e6, true, "new");
  const scopeprof_cli::diff_result d = scopeprof_cli::compare(a, b, {});
  REQUIRE(d.work.size() == 3);
  const auto& tail = work_row(d, "tail");
  CHECK(tail.basis_a == "device");
  CHECK(tail.bytes_per_s_a == doctest::Approx(1e12));
  CHECK(tail.bytes_per_s_b == doctest::Approx(1.25e12));
  CHECK(std::isnan(tail.flops_per_s_a));  // no FLOPs declared: no rate, not 0
  CHECK(tail.same_work);
  const auto& host = work_row(d, "host only");
  CHECK(host.basis_a == "host");
  CHECK(host.flops_per_s_a == doctest::Approx(2e9));  // 1e3 FLOP over 500 ns
  CHECK(std::isnan(host.bytes_per_s_a));
  CHECK(d.work.back().name == "new");  // B's own names come last
  CHECK(d.work.back().basis_a.empty());
  CHECK(d.work.back().basis_b == "host");

  std::ostringstream text, md, json;
  scopeprof_cli::write_diff_text(d, text);
  CHECK(text.str().find("Declared work") != std::string::npos);
  CHECK(text.str().find("+25.0%") != std::string::npos);
  CHECK(text.str().find("only in B") != std::string::npos);
  scopeprof_cli::write_diff_markdown(d, md);
  CHECK(md.str().find("**Declared work**") != std::string::npos);
  scopeprof_cli::write_diff_json(d, json);
  const auto doc = nlohmann::json::parse(json.str());
  for (const auto& w : doc["work"]) {
    if (w["name"] == "tail") {
      CHECK(w["b"]["bytes_per_s"].get<double>() == doctest::Approx(1.25e12));
      CHECK(w["a"]["flops_per_s"].is_null());
    }
    if (w["name"] == "new") CHECK(w["a"].is_null());
  }

  const scopeprof_cli::diff_result changed = scopeprof_cli::compare(a, run_of(1000, 2e6, true), {});
  CHECK_FALSE(work_row(changed, "tail").same_work);
  CHECK(work_row(changed, "host only").same_work);
  std::ostringstream changed_text;
  scopeprof_cli::write_diff_text(changed, changed_text);
  CHECK(changed_text.str().find("work differs") != std::string::npos);

  const scopeprof_cli::diff_result plain = scopeprof_cli::compare(run_of(1000, 1e6, false), run_of(1000, 1e6, false), {});
  // "tail" still declares bytes; a pair of runs with no work at all has no section.
  CHECK(plain.work.size() == 1);
  std::ostringstream none;
  const scopeprof::report quiet = no_work_report();
  scopeprof_cli::write_diff_text(scopeprof_cli::compare(quiet, quiet, {}), none);
  CHECK(none.str().find("Declared work") == std::string::npos);
  CHECK(nlohmann::json::parse([&] {
          std::ostringstream j;
          scopeprof_cli::write_diff_json(scopeprof_cli::compare(quiet, quiet, {}), j);
          return j.str();
        }())["work"].empty());
}
