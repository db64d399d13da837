// The scopeprof tool reads saved JSON reports back: every table survives the round trip, and a bad file
// gets one line naming the file and what is wrong.
#include "cli_fixtures.hpp"
#include "file_bytes.hpp"
#include "report_file.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

/// Whether something (a file, a device, a dangling link) is at `path`.
bool path_exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(path, ec));
}

using scopeprof_cli::load_report;
using scopeprof_cli::parse_report;
using scopeprof_cli::report_file;

/// The report's JSON without the fields a re-read report changes on purpose (its warnings say where it
/// came from; it holds no timeline).
nlohmann::json comparable(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text);
  j.erase("warnings");
  j.erase("timeline");
  j["steps"].erase("first");
  j["steps"].erase("last");
  return j;
}

/// The full loader's message for `bytes`; the streaming tree reader (the merge's) must give the same one
/// when `tree_too` (for what it reads: everything but the flat rows, counts and histograms).
std::string load_error(const std::string& bytes, bool tree_too = true) {
  report_file f;
  std::string error;
  CHECK_FALSE(parse_report(bytes, "r.json", f, error));
  if (tree_too) {
    std::string tree_error;
    CHECK_FALSE(scopeprof_cli::parse_report_tree(bytes, "r.json", f, tree_error));
    CHECK(tree_error == error);
  }
  return error;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("cli report file: a saved report reads back into the same tables, and writes the same JSON") {
  const scopeprof::report original = cli_test::rank_report(3, 8, 40, 1.5, 7);
  report_file f;
  std::string error;
  REQUIRE_MESSAGE(parse_report(original.json(), "r.json", f, error), error);
  const scopeprof::report& r = f.report;
  CHECK(r.process().rank == 3);
  CHECK(r.process().world_size == 8);
  CHECK(r.process().program == "train");
  CHECK(r.process().host == "node1");
  REQUIRE(r.flat().size() == original.flat().size());
  REQUIRE(r.tree().size() == original.tree().size());
  const auto* fwd = r.find("forward");
  REQUIRE(fwd != nullptr);
  CHECK(fwd->device_calls == 40);
  CHECK(fwd->device_histogram.size() == original.find("forward")->device_histogram.size());
  CHECK(r.instances().empty());
  CHECK(r.timeline().kept == 0);
  CHECK(r.timeline().left_out == r.counts().recorded);
  CHECK(r.warnings().find("no timeline") != std::string::npos);
  CHECK(comparable(r.json()) == comparable(original.json()));
  // The text tables render from the tables alone.
  const std::string text = r.to_string();
  CHECK(text.find("backward") != std::string::npos);
  CHECK(text.find("rank 3 of 8") != std::string::npos);
}

TEST_CASE("cli report file: a report folded in clock ticks under 1 ns reads back (its buckets do not overlap)") {
  // The tables of a real run come from the drain's fold, kept in host clock ticks. At 0.385 ns per tick
  // (a 2.6 GHz TSC) the one-tick buckets below 128 ticks are narrower than a nanosecond, and two of them
  // can round to the same ns: the report must join them, or its own reader refuses it.
  std::vector<sptest::raw_instance> records;
  for (std::int64_t v = 0; v <= 600; ++v) records.push_back(sptest::host_record(0, 0, 1000 + 1000 * v, 1000 + 1000 * v + v));
  auto snap = sptest::one_thread_snapshot("tick.cpp", {"tiny"}, std::move(records));
  snap.folded.present = true;
  snap.folded.ns_per_tick = 0.385;
  const std::uint32_t node = snap.folded.tree.child(scopeprof::detail::path_tree::root, 0);
  for (std::int64_t v = 0; v <= 600; ++v) {
    snap.folded.tree.at(node).stats.host_total.add(v);
    snap.folded.tree.at(node).stats.host_self.add(v);
  }
  const scopeprof::report original = scopeprof::detail::build_report(std::move(snap));
  const auto* row = original.find("tiny");
  REQUIRE(row != nullptr);
  CHECK(row->calls == 601);
  const auto& bins = row->host_histogram;
  REQUIRE_FALSE(bins.empty());
  std::uint64_t binned = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    CHECK(bins[i].lower_ns <= bins[i].upper_ns);
    if (i) CHECK(bins[i - 1].upper_ns < bins[i].lower_ns);
    binned += bins[i].count;
  }
  CHECK(binned == 601);
  CHECK(bins.front().lower_ns == 0);
  CHECK(bins.back().upper_ns >= 231);  // 600 ticks: 231 ns
  report_file f;
  std::string error;
  REQUIRE_MESSAGE(parse_report(original.json(), "r.json", f, error), error);
  CHECK(f.report.find("tiny")->host_histogram.size() == bins.size());
  CHECK(comparable(f.report.json()) == comparable(original.json()));
}

TEST_CASE("cli report file: gzip reports read like plain ones, and damaged ones are refused") {
  sptest::temp_dir dir;
  const scopeprof::report original = cli_test::rank_report(0, 1, 5);
  report_file f;
  std::string error;
#if defined(SCOPEPROF_CLI_WITH_ZLIB) && SCOPEPROF_WITH_ZLIB
  REQUIRE(original.write_json(dir / "r.json.gz"));
  REQUIRE_MESSAGE(load_report(dir / "r.json.gz", f, error), error);
  CHECK(f.report.tree().size() == original.tree().size());
  const std::string gz = sptest::read_file_bytes(dir / "r.json.gz");
  write_text(dir / "cut.json.gz", gz.substr(0, gz.size() / 2));
  CHECK_FALSE(load_report(dir / "cut.json.gz", f, error));
  CHECK(error == dir / "cut.json.gz" + ": the gzip stream is truncated");
#else
  write_text(dir / "r.json.gz", std::string("\x1f\x8b\x08", 3));
  CHECK_FALSE(load_report(dir / "r.json.gz", f, error));
  CHECK(error.find("without zlib") != std::string::npos);
#endif
}

TEST_CASE("cli report file: a bad file gets one line naming it and what is wrong") {
  const std::string good = cli_test::rank_report(0, 1, 3).json();
  CHECK(load_error(good.substr(0, good.size() / 2)).rfind("r.json: truncated", 0) == 0);
  CHECK(load_error("") == "r.json: empty file, not a JSON report");
  CHECK(load_error("{\"schema\": oops}").rfind("r.json: not JSON: parse error at byte", 0) == 0);
  CHECK(load_error("[1,2]") == "r.json: not a scopeprof report (the document is not a JSON object)");
  CHECK(load_error("{\"traceEvents\":[]}").find("a Chrome trace, not a scopeprof JSON report") != std::string::npos);
  CHECK(load_error("{\"a\":1}") == "r.json: not a scopeprof report (no \"schema\" field)");

  nlohmann::json j = nlohmann::json::parse(good);
  j["schema"] = "scopeprof-report/2";
  CHECK(load_error(j.dump()) == "r.json: schema scopeprof-report/2: this scopeprof reads scopeprof-report/1 (a report "
                                "from another version)");
  j = nlohmann::json::parse(good);
  j["flat"][1]["host"]["total"] = "12";
  CHECK(load_error(j.dump(), false) == "r.json: field flat[1].host.total: expected an integer, found a string");
  j = nlohmann::json::parse(good);
  j["tree"][1]["host"]["total"] = "12";
  CHECK(load_error(j.dump()) == "r.json: field tree[1].host.total: expected an integer, found a string");
  j = nlohmann::json::parse(good);
  j["tree"][2]["name"] = 7;
  CHECK(load_error(j.dump()) == "r.json: field tree[2].name: expected a string, found a number");
  j = nlohmann::json::parse(good);
  j["tree"][0]["host"] = 7;
  CHECK(load_error(j.dump()) == "r.json: field tree[0].host: expected an object, found a number");
  j = nlohmann::json::parse(good);
  j["process"]["host"] = nullptr;
  CHECK(load_error(j.dump()) == "r.json: field process.host: expected a string, found null");
  j = nlohmann::json::parse(good);
  j.erase("tree");
  CHECK(load_error(j.dump()) == "r.json: field tree: missing");
  j = nlohmann::json::parse(good);
  j["tree"][0].erase("calls");
  CHECK(load_error(j.dump()) == "r.json: field tree[0].calls: missing");
  j = nlohmann::json::parse(good);
  j["tree"][1]["parent"] = 5;
  CHECK(load_error(j.dump()) == "r.json: field tree[1]: parent 5 is not an earlier row");
  j = nlohmann::json::parse(good);
  j["process"]["rank"] = 4;
  CHECK(load_error(j.dump()) == "r.json: field process: rank 4 of world size 1 is impossible");
  j = nlohmann::json::parse(good);
  j["counts"]["dropped"] = -1;
  CHECK(load_error(j.dump(), false) == "r.json: field counts.dropped: expected a count, found a negative number");
  j = nlohmann::json::parse(good);
  j["flat"][0]["host"]["histogram"] = nlohmann::json::parse("[[10, 20, 1], [15, 30, 2]]");
  CHECK(load_error(j.dump(), false) == "r.json: field flat[0].host.histogram[1]: buckets must be ascending and not overlap");

  report_file f;
  std::string error;
  CHECK_FALSE(load_report("/nonexistent/dir/r.json", f, error));
  CHECK(error == "/nonexistent/dir/r.json: cannot open (No such file or directory)");
}

TEST_CASE("cli report file: a key given twice in one object is refused, by both readers where they read it") {
  // JSON leaves open which value counts: the full loader (nlohmann/json) would keep the last, the streaming
  // tree reader meets the first. A fuzzer found a report whose first "tree" was broken and whose second was
  // not: the full loader took it, the merge refused it. Both refuse it now, in the same words.
  const std::string good = nlohmann::json::parse(cli_test::rank_report(0, 1, 3).json()).dump();
  const std::string tail = ",\"tree\":[]}";
  CHECK(load_error(good.substr(0, good.size() - 1) + tail) == "r.json: field tree: given twice in one object");

  const nlohmann::json j = nlohmann::json::parse(good);
  /// `good` with `key` given again, first, in the object that `where` holds (found by its text).
  auto repeat = [&](const nlohmann::json& where, const std::string& key) {
    const std::string text = where.dump();
    const std::size_t at = good.find(text);
    REQUIRE(at != std::string::npos);
    const std::string again = "{\"" + key + "\":" + where.at(key).dump() + ",";
    return good.substr(0, at) + again + good.substr(at + 1);
  };
  CHECK(load_error(repeat(j["tree"][1], "depth")) == "r.json: field tree[1].depth: given twice in one object");
  CHECK(load_error(repeat(j["tree"][2]["host"], "self")) == "r.json: field tree[2].host.self: given twice in one object");
  CHECK(load_error(repeat(j["process"], "rank")) == "r.json: field process.rank: given twice in one object");
  // Where the tree reader does not read, only the full loader refuses (the merge keeps nothing from there).
  CHECK(load_error(repeat(j["flat"][0]["host"], "avg"), false) ==
        "r.json: field flat[0].host.avg: given twice in one object");
  report_file f;
  std::string error;
  CHECK(scopeprof_cli::parse_report_tree(repeat(j["flat"][0]["host"], "avg"), "r.json", f, error));
  CHECK(load_error(repeat(j["flat"][1]["host"]["self_stats"], "max"), false) ==
        "r.json: field flat[1].host.self_stats.max: given twice in one object");
  // A number past int64 where nothing is read is no reason to refuse; where a count is read it is.
  const std::string big = good.substr(0, good.size() - 1) + ",\"extra\\n\":18446744073709551615}";
  CHECK(parse_report(big, "r.json", f, error));
  CHECK(scopeprof_cli::parse_report_tree(big, "r.json", f, error));
  nlohmann::json k = j;
  k["tree"][0]["depth"] = std::uint64_t{18446744073709551615u};
  CHECK(load_error(k.dump()) == "r.json: field tree[0].depth: integer out of range");
  k["tree"][0]["depth"] = std::uint64_t{4294967296u};
  CHECK(load_error(k.dump()) == "r.json: field tree[0].depth: integer out of range");
  k = j;  // counts are unsigned 64-bit in both readers
  k["tree"][1]["calls"] = std::uint64_t{18446744073709551615u};
  report_file full;
  REQUIRE_MESSAGE(parse_report(k.dump(), "r.json", full, error), error);
  REQUIRE_MESSAGE(scopeprof_cli::parse_report_tree(k.dump(), "r.json", f, error), error);
  CHECK(full.report.tree()[1].calls == 18446744073709551615u);
  CHECK(f.report.tree()[1].calls == 18446744073709551615u);
  // A key that is not printable is shown as a JSON string, so the message stays one line.
  const std::string odd = good.substr(0, good.size() - 1) + ",\"a\\nb\":1,\"a\\nb\":2}";
  CHECK(load_error(odd, false) == "r.json: field \"a\\nb\": given twice in one object");
  CHECK(scopeprof_cli::parse_report_tree(odd, "r.json", f, error));
  // The fuzzer's shape, short: the first "tree" is read before the second is met (its input is a seed
  // in tests/fuzz/corpus_report/repeated_tree_key.json).
  CHECK(load_error(std::string("{\"tree\":[],\"schema\":\"scopeprof-report/1\",\"tree\":[]}")) ==
        "r.json: field tree: given twice in one object");
}

TEST_CASE("cli report file: a device object with 0 calls is refused, by both readers where they read it") {
  // The writer gives a row with no valid device span "device": null. The fuzzer set a seed's
  // tree[2].device.calls to 0 and left its total at 1000 ns: both readers took it, and the JSON written
  // for it said null, so the total read back as 0.
  const nlohmann::json good = nlohmann::json::parse(cli_test::rank_report(0, 1, 3).json());
  auto forward = [&](const char* table) {  // the device-timed row
    std::size_t i = 0;
    while (i < good[table].size() && good[table][i]["name"] != "forward") ++i;
    REQUIRE(i < good[table].size());
    REQUIRE(good[table][i]["device"].is_object());
    return i;
  };
  const std::string why = "0 in a device object (a row with no valid device span has \"device\": null)";
  const std::string tree_row = "r.json: field tree[" + std::to_string(forward("tree")) + "].device.calls: ";
  nlohmann::json j = good;
  j["tree"][forward("tree")]["device"]["calls"] = 0;
  CHECK(load_error(j.dump()) == tree_row + why);
  j = good;
  j["tree"][forward("tree")]["device"].erase("calls");
  CHECK(load_error(j.dump()) == tree_row + "missing");
  j = good;
  j["tree"][forward("tree")]["device"].erase("total");
  CHECK(load_error(j.dump()) == "r.json: field tree[" + std::to_string(forward("tree")) + "].device.total: missing");
  // A negative duration the tree reader keeps: refused by both (the full loader once took it).
  j = good;
  j["tree"][forward("tree")]["host"]["total"] = -5;
  CHECK(load_error(j.dump()) == "r.json: field tree[" + std::to_string(forward("tree")) +
                                    "].host.total: expected a duration, found a negative number");
  j = good;
  j["flat"][forward("flat")]["device"]["calls"] = 0;
  CHECK(load_error(j.dump(), false) == "r.json: field flat[" + std::to_string(forward("flat")) + "].device.calls: " + why);
}

TEST_CASE("cli report file: the streaming tree reader keeps the process and the call tree as the full loader does") {
  const scopeprof::report original = cli_test::rank_report(5, 6, 30, 2.0, 3);
  report_file full, tree;
  std::string error;
  REQUIRE_MESSAGE(parse_report(original.json(), "r.json", full, error), error);
  REQUIRE_MESSAGE(scopeprof_cli::parse_report_tree(original.json(), "r.json", tree, error), error);
  CHECK(tree.path == "r.json");
  const auto& p = tree.report.process();
  CHECK(p.rank == 5);
  CHECK(p.world_size == 6);
  CHECK(p.local_rank == 1);
  CHECK(p.rank_source == "RANK");
  CHECK(p.host == "node2");
  CHECK(p.program == "train");
  CHECK(p.pid == 1005);
  CHECK(p.base_unix_ns == full.report.process().base_unix_ns);
  CHECK(p.devices == std::vector<std::int32_t>{0});
  REQUIRE(tree.report.tree().size() == full.report.tree().size());
  for (std::size_t i = 0; i < tree.report.tree().size(); ++i) {
    const auto& a = tree.report.tree()[i];
    const auto& b = full.report.tree()[i];
    CAPTURE(i);
    CHECK(a.name == b.name);
    CHECK(a.depth == b.depth);
    CHECK(a.parent == b.parent);
    CHECK(a.calls == b.calls);
    CHECK(a.host_total_ns == b.host_total_ns);
    CHECK(a.host_self_ns == b.host_self_ns);
    CHECK(a.device_calls == b.device_calls);
    CHECK(a.device_total_ns == b.device_total_ns);
  }
  CHECK(tree.report.flat().empty());
}

TEST_CASE("cli report file: path keys tell apart paths whose names contain the separators") {
  auto snap = sptest::one_thread_snapshot("k.cpp", {"a", "b\x1f" "c", "a\x1f" "b", "c", "x\\"},
                                          {sptest::host_record(1, 1, 10, 20), sptest::host_record(0, 0, 0, 30),
                                           sptest::host_record(3, 1, 40, 50), sptest::host_record(2, 0, 35, 60),
                                           sptest::host_record(4, 0, 70, 80)});
  const scopeprof::report r = scopeprof::detail::build_report(std::move(snap));
  REQUIRE(r.tree().size() == 5);
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < r.tree().size(); ++i) keys.push_back(scopeprof_cli::tree_path_key(r, i));
  std::sort(keys.begin(), keys.end());
  CHECK(std::unique(keys.begin(), keys.end()) == keys.end());
  for (std::size_t i = 0; i < r.tree().size(); ++i)
    if (r.tree()[i].name == "c") CHECK(scopeprof_cli::tree_path_text(r, i) == "a\x1f" "b / c");
}

TEST_CASE("cli report file: declared work reads back into the same sums and rates; impossible work is refused") {
  auto mm = sptest::device_timed(sptest::host_record(1, 1, 100, 300), 0, 7, 1000, 5000);
  mm.has_work = true;
  mm.work_bytes = 3.0e6 / 7.0;  // not a short decimal: must still read back exactly
  mm.work_flops = 2e9;
  auto load = sptest::host_record(2, 1, 400, 900);
  load.has_work = true;
  load.work_bytes = 65536;
  auto snap = sptest::one_thread_snapshot("w.cpp", {"step", "matmul", "load"}, {mm, load, sptest::host_record(0, 0, 0, 1000)});
  scopeprof::device_peak peak;
  peak.device = 0;
  peak.name = "Test GPU";
  peak.l2_bytes = 1 << 20;
  peak.spec_bytes_per_s = 1e12;
  peak.spec_flops_per_s = 20e12;  // measured: unknown (null in the file)
  snap.peaks.push_back(peak);
  const scopeprof::report original = scopeprof::detail::build_report(std::move(snap));
  report_file f;
  std::string error;
  REQUIRE_MESSAGE(parse_report(original.json(), "r.json", f, error), error);
  const scopeprof::flat_row* m = f.report.find("matmul");
  REQUIRE(m != nullptr);
  CHECK(m->work.device_bytes == 3.0e6 / 7.0);
  CHECK(m->work.device_ns == 4000);
  CHECK(f.report.find("load")->work.host_bytes == 65536);
  CHECK(!f.report.find("step")->work.any());
  REQUIRE(f.report.device_peaks().size() == 1);
  CHECK(f.report.device_peaks()[0].spec_flops_per_s == 20e12);
  CHECK(std::isnan(f.report.device_peaks()[0].measured_bytes_per_s));
  CHECK(comparable(f.report.json()) == comparable(original.json()));
  CHECK(f.report.csv() == original.csv());

  nlohmann::json j = nlohmann::json::parse(original.json());
  for (auto& row : j["flat"])
    if (row["name"] == "matmul") row["work"]["device_calls"] = 5;
  CHECK(load_error(j.dump(), false).find("declared work that no run can produce") != std::string::npos);
  // A device id past the ones a run writes (-1 none, -2 several, an ordinal): both readers refuse it, in
  // the tree too (the full loader once cut it to 32 bits, and took -3, where the merge refused it).
  for (const std::int64_t id : {std::int64_t{-3}, std::int64_t{1} << 31}) {
    j = nlohmann::json::parse(original.json());
    std::size_t at = 0;
    while (j["tree"][at]["name"] != "matmul") ++at;
    j["tree"][at]["work"]["device_id"] = id;
    CHECK(load_error(j.dump()) == "r.json: field tree[" + std::to_string(at) + "].work.device_id: expected a device id");
  }
  j = nlohmann::json::parse(original.json());
  for (auto& row : j["flat"]) row.erase("work");
  j.erase("work");
  REQUIRE_MESSAGE(parse_report(j.dump(), "old.json", f, error), error);  // a report from before declared work
  CHECK(!f.report.find("matmul")->work.any());
}

TEST_CASE("cli report file: a report with steps prints its tables again (no per-step timeline in the file)") {
  auto snap = sptest::one_thread_snapshot("s.cpp", {"step"}, {});
  for (std::int64_t i = 0; i < 5; ++i) {
    snap.threads[0].records.push_back(sptest::host_record(0, 0, 1000 * i + 10, 1000 * i + 900));
    snap.steps.push_back({static_cast<std::uint64_t>(i), 0, 1000 * i, 0});
  }
  snap.steps.push_back({5, 0, 5000, 0});
  snap.process.pid = 3;
  const scopeprof::report original = scopeprof::detail::build_report(std::move(snap));
  REQUIRE(original.step_stats().complete == 5);
  report_file f;
  std::string error;
  REQUIRE_MESSAGE(parse_report(original.json(), "steps.json", f, error), error);
  CHECK(f.report.step_stats().complete == 5);
  CHECK(f.report.steps().empty());
  const std::string text = f.report.to_string();  // used to read steps().front() of the empty timeline
  CHECK(text.find("5 complete") != std::string::npos);
  CHECK(original.to_string().find("ProfilerStep#0 .. #4") != std::string::npos);
}

TEST_CASE("cli report file: write_file_text writes plain and gzip, and a failed write keeps what was there") {
  sptest::temp_dir dir;
  std::string error;
  REQUIRE_MESSAGE(scopeprof_cli::write_file_text(dir / "t.txt", "hello\n", error), error);
  CHECK(sptest::read_file_bytes(dir / "t.txt") == "hello\n");
  std::string back;
#if defined(SCOPEPROF_CLI_WITH_ZLIB) && SCOPEPROF_WITH_ZLIB
  REQUIRE_MESSAGE(scopeprof_cli::write_file_text(dir / "t.txt.gz", "hello\n", error), error);
  REQUIRE_MESSAGE(scopeprof_cli::read_file_bytes(dir / "t.txt.gz", back, error), error);
  CHECK(back == "hello\n");
#else
  CHECK_FALSE(scopeprof_cli::write_file_text(dir / "t.txt.gz", "hello\n", error));
  CHECK(error.find("zlib") != std::string::npos);
  CHECK_FALSE(path_exists(dir / "t.txt.gz"));
#endif
  // No such folder: the message names the path and the reason, and the tool's own name is not doubled.
  error.clear();
  CHECK_FALSE(scopeprof_cli::write_file_text(dir / "no/such/dir/t.txt", "x", error));
  CHECK(error.find(dir / "no/such/dir/t.txt") != std::string::npos);
  CHECK(error.rfind("scopeprof: ", 0) == std::string::npos);
  CHECK_FALSE(path_exists(dir / "no/such/dir/t.txt"));
  // A file the write created and could not finish (RLIMIT_FSIZE stands in for a full disk) is removed.
  {
    rlimit saved{};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    const auto saved_handler = std::signal(SIGXFSZ, SIG_IGN);  // a write past the limit fails with EFBIG
    rlimit small = saved;
    small.rlim_cur = 1 << 16;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    error.clear();
    const bool written = scopeprof_cli::write_file_text(dir / "big.txt", std::string(std::size_t{4} << 20, 'x'), error);
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, saved_handler);
    CHECK_FALSE(written);
    CHECK_MESSAGE(error.find(dir / "big.txt") != std::string::npos, error);
    CHECK_FALSE(path_exists(dir / "big.txt"));
  }
  // A path that was there before is never removed after a failure: /dev/full fails every write (ENOSPC),
  // and removing it (as root) would delete the device node.
  if (path_exists("/dev/full")) {
    error.clear();
    CHECK_FALSE(scopeprof_cli::write_file_text("/dev/full", std::string(1 << 16, 'x'), error));
    CHECK(error.find("/dev/full") != std::string::npos);
    CHECK(path_exists("/dev/full"));
  }
}
