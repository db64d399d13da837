// scopeprof merge of Chrome traces: the ranks' traces as one, checked by taking it apart again. Each
// rank's share of the merged trace, its processes named back and its times moved back, must be the rank's
// own trace event for event, and must pass the trace-format checker the writers' tests use (nesting in
// doubles, flows bound, fields per kind). Also: pids and flow ids never shared across ranks, gzip, and
// every refusal (a missing or repeated rank, a report among traces, a truncated trace) leaves no file.
#include "cli_fixtures.hpp"
#include "trace_check.hpp"

#include "commands.hpp"
#include "file_bytes.hpp"
#include "trace_merge.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ojson = nlohmann::ordered_json;

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  REQUIRE(f.good());
}

/// Rank r of `world` writes its trace to DIR/run.r.trace.json (bases 1 us apart); returns the paths.
std::vector<std::string> write_rank_traces(const sptest::temp_dir& dir, std::int64_t world, int steps = 3) {
  std::vector<std::string> paths;
  for (std::int64_t r = 0; r < world; ++r) {
    const std::string path = dir / ("run." + std::to_string(r) + ".trace.json");
    write_text(path, cli_test::rank_report(r, world, steps, r == 1 ? 2.0 : 1.0, 7 + static_cast<std::uint32_t>(r))
                         .chrome_trace());
    paths.push_back(path);
  }
  return paths;
}

ojson parse_file(const std::string& path) {
  std::string bytes, error;
  REQUIRE_MESSAGE(scopeprof_cli::read_file_bytes(path, bytes, error), error);
  return ojson::parse(bytes);
}

/// Rank `rank`'s share of a merged trace as a trace of its own: its original top-level fields, its events
/// with "rank R: " taken off the process names and the rank's shift taken off ts.
ojson unmerge(const ojson& merged, const ojson& original, std::int64_t rank) {
  const std::string prefix = "rank " + std::to_string(rank) + ": ";
  std::set<std::int64_t> pids;
  for (const auto& ev : merged["traceEvents"])
    if (ev["ph"] == "M" && ev["name"] == "process_name" && ev["args"]["name"].get<std::string>().rfind(prefix, 0) == 0)
      pids.insert(ev["pid"].get<std::int64_t>());
  double shift = 0;
  for (const auto& r : merged["otherData"]["ranks"])
    if (r["rank"] == rank) shift = r["shift_us"].get<double>();
  ojson doc = original;
  doc["traceEvents"] = ojson::array();
  for (auto ev : merged["traceEvents"]) {
    if (!pids.count(ev["pid"].get<std::int64_t>())) continue;
    if (ev.contains("ts")) ev["ts"] = ev["ts"].get<double>() - shift;
    if (ev["ph"] == "M" && ev["name"] == "process_name")
      ev["args"]["name"] = ev["args"]["name"].get<std::string>().substr(prefix.size());
    doc["traceEvents"].push_back(ev);
  }
  return doc;
}

/// The slices of a trace as comparable text: name, category, tid, ts and dur (bit-exact doubles).
std::vector<std::string> slices_of(const ojson& trace) {
  std::vector<std::string> out;
  for (const auto& ev : trace["traceEvents"]) {
    if (ev["ph"] != "X") continue;
    std::ostringstream s;
    s.precision(17);
    s << ev["name"].get<std::string>() << '|' << ev.value("cat", "") << '|' << ev["tid"] << '|'
      << ev["ts"].get<double>() << '|' << ev["dur"].get<double>();
    out.push_back(s.str());
  }
  return out;
}

}  // namespace

TEST_CASE("merged trace: each rank's share is its own trace again, on one time axis") {
  sptest::temp_dir dir;
  const auto paths = write_rank_traces(dir, 3);
  const std::string out = dir / "merged.trace.json";
  std::string error;
  REQUIRE_MESSAGE(scopeprof_cli::merge_traces({paths[2], paths[0], paths[1]}, out, error), error);
  const ojson merged = parse_file(out);

  CHECK(merged["otherData"]["world_size"] == 3);
  CHECK(merged["baseTimeNanoseconds"] == 1'796'000'000'000'000'000);  // rank 0's, the earliest
  std::map<std::int64_t, std::int64_t> rank_of_pid;
  std::set<std::string> flow_ids;
  std::size_t bind_ids = 0;
  for (std::int64_t r = 0; r < 3; ++r) {
    CAPTURE(r);
    const ojson original = parse_file(paths[static_cast<std::size_t>(r)]);
    const ojson own = unmerge(merged, original, r);
    // Rank r started r us after rank 0: its times moved by exactly that.
    CHECK(merged["otherData"]["ranks"][static_cast<std::size_t>(r)]["shift_us"].get<double>() == static_cast<double>(r));
    CHECK(slices_of(own) == slices_of(original));
    CHECK(own["traceEvents"].size() == original["traceEvents"].size());
    CHECK(sptest::check_trace_format(own.dump(1)) == "");  // (indented: HTA's regex wants "rank": N)
    for (const auto& ev : own["traceEvents"]) {
      const auto [it, inserted] = rank_of_pid.emplace(ev["pid"].get<std::int64_t>(), r);
      CHECK_MESSAGE(it->second == r, "pid " << it->first << " holds events of two ranks");
      (void)inserted;
      if (ev.contains("bind_id")) {
        ++bind_ids;
        flow_ids.insert(ev["bind_id"].dump() + (ev.value("flow_out", false) ? ">" : "<"));
      }
    }
  }
  CHECK(bind_ids > 0);
  CHECK(flow_ids.size() == bind_ids);  // no flow end is shared by two slices, across ranks either
  // Ranks sort in order in the viewer, and every process says its rank.
  std::map<std::int64_t, std::int64_t> sort_of_pid;
  for (const auto& ev : merged["traceEvents"])
    if (ev["ph"] == "M" && ev["name"] == "process_sort_index")
      sort_of_pid[ev["pid"].get<std::int64_t>()] = ev["args"]["sort_index"].get<std::int64_t>();
  for (const auto& [pid, rank] : rank_of_pid) {
    REQUIRE(sort_of_pid.count(pid));
    CHECK(sort_of_pid[pid] / 1000 == rank);
  }
}

TEST_CASE("merged trace: gzip in and out, through the executable") {
  sptest::temp_dir dir;
  const auto paths = write_rank_traces(dir, 2);
  const auto r = cli_test::run_tool(dir, "merge '" + paths[0] + "' '" + paths[1] + "' -o '" + (dir / "m.trace.json.gz") + "'");
  CHECK_MESSAGE(r.status == 0, r.err);
  const std::string gz = sptest::read_file_bytes(dir / "m.trace.json.gz");
  REQUIRE(gz.size() > 2);
  CHECK(static_cast<unsigned char>(gz[0]) == 0x1f);
  const ojson merged = parse_file(dir / "m.trace.json.gz");
  CHECK(merged["otherData"]["ranks"].size() == 2);
  // A gzipped rank trace is an input like any other.
  std::string error;
  REQUIRE_MESSAGE(scopeprof_cli::write_file_text(dir / "r0.trace.json.gz", sptest::read_file_bytes(paths[0]), error), error);
  const auto again = cli_test::run_tool(dir, "merge '" + (dir / "r0.trace.json.gz") + "' '" + paths[1] + "' -o '" +
                                                 (dir / "again.trace.json") + "'");
  CHECK_MESSAGE(again.status == 0, again.err);
  CHECK(parse_file(dir / "again.trace.json")["traceEvents"].size() == merged["traceEvents"].size());
}

TEST_CASE("merged trace: refusals name the file and leave no output") {
  sptest::temp_dir dir;
  const auto paths = write_rank_traces(dir, 3);
  const std::string out = dir / "merged.trace.json";
  auto refused = [&](const std::vector<std::string>& inputs, const std::string& expected) {
    scopeprof_cli::merge_options o;
    o.inputs = inputs;
    o.output = out;
    std::ostringstream sout, serr;
    CHECK(scopeprof_cli::run_merge(o, sout, serr) == scopeprof_cli::exit_bad_input);
    CHECK_MESSAGE(serr.str().find(expected) != std::string::npos, serr.str());
    CHECK_FALSE(std::filesystem::exists(out));
  };
  refused({paths[0], paths[2]}, "rank 1 missing");
  refused({paths[0], paths[1], paths[1], paths[2]}, "rank 1 again");
  write_text(dir / "report.json", cli_test::rank_report(1, 3, 2).json());
  refused({paths[0], dir / "report.json", paths[2]}, "report.json: not a .trace.json");
  const std::string whole = sptest::read_file_bytes(paths[1]);
  write_text(dir / "cut.trace.json", whole.substr(0, whole.size() * 2 / 3));
  refused({paths[0], dir / "cut.trace.json", paths[2]}, "cut.trace.json: truncated");
  write_text(dir / "list.trace.json", "[1, 2]");
  refused({dir / "list.trace.json"}, "list.trace.json: a JSON array");
  write_text(dir / "nobase.trace.json", "{\"distributedInfo\":{\"rank\":1,\"world_size\":3},\"traceEvents\":[]}");
  refused({paths[0], dir / "nobase.trace.json", paths[2]}, "nobase.trace.json: no baseTimeNanoseconds");
  write_text(dir / "bad_event.trace.json",
             "{\"distributedInfo\":{\"rank\":1,\"world_size\":3},\"baseTimeNanoseconds\":5,\"traceEvents\":[{},3]}");
  refused({paths[0], dir / "bad_event.trace.json", paths[2]}, "bad_event.trace.json: traceEvents[1] is not an object");
  // A key given twice: a viewer keeps the last value, a streaming reader would meet both (events of two
  // arrays), so the trace is refused wherever the repeat stands: after the events, before them, and inside
  // distributedInfo (whose rank the merge places by).
  // (With otherData, the header's reader stops at the first traceEvents: the events' reader finds the second.)
  const std::string head =
      "{\"distributedInfo\":{\"rank\":1,\"world_size\":3},\"otherData\":{},\"baseTimeNanoseconds\":5,";
  write_text(dir / "two_arrays.trace.json", head + "\"traceEvents\":[],\"traceEvents\":[{\"ph\":\"i\"}]}");
  refused({paths[0], dir / "two_arrays.trace.json", paths[2]},
          "two_arrays.trace.json: field traceEvents: given twice in one object");
  write_text(dir / "two_bases.trace.json", head + "\"baseTimeNanoseconds\":6,\"traceEvents\":[]}");
  refused({paths[0], dir / "two_bases.trace.json", paths[2]},
          "two_bases.trace.json: field baseTimeNanoseconds: given twice in one object");
  write_text(dir / "two_ranks.trace.json",
             "{\"distributedInfo\":{\"rank\":1,\"world_size\":3,\"rank\":0},\"baseTimeNanoseconds\":5,\"traceEvents\":[]}");
  refused({paths[0], dir / "two_ranks.trace.json", paths[2]},
          "two_ranks.trace.json: field distributedInfo.rank: given twice in one object");
  write_text(dir / "odd_key.trace.json", head + "\"traceEvents\":[],\"a\\nb\":1,\"a\\nb\":2}");
  refused({paths[0], dir / "odd_key.trace.json", paths[2]},
          "odd_key.trace.json: field \"a\\nb\": given twice in one object");

  // A full disk part-way (/dev/full through a link): the message names the output. The link was there
  // before the merge, so it stays (a partial file the merge created is removed: test_report_file.cpp).
  std::filesystem::create_symlink("/dev/full", dir / "full.trace.json");
  std::string error;
  CHECK_FALSE(scopeprof_cli::merge_traces(paths, dir / "full.trace.json", error));
  CHECK_MESSAGE(error.find("cannot write merged trace to '" + (dir / "full.trace.json") + "'") == 0, error);
  CHECK(std::filesystem::is_symlink(std::filesystem::symlink_status(dir / "full.trace.json")));
  CHECK(std::filesystem::exists("/dev/full"));

  scopeprof_cli::merge_options o;
  o.inputs = paths;
  std::ostringstream sout, serr;
  CHECK(scopeprof_cli::run_merge(o, sout, serr) == scopeprof_cli::exit_bad_input);  // no -o
  CHECK(serr.str().find("-o merged.trace.json") != std::string::npos);
  // JSON reports asked for a trace: the message says where a merged trace comes from.
  o.inputs = {dir / "report.json"};
  o.output = out;
  serr.str("");
  CHECK(scopeprof_cli::run_merge(o, sout, serr) == scopeprof_cli::exit_bad_input);
  CHECK(serr.str().find("made from the ranks' traces") != std::string::npos);
}

TEST_CASE("merged trace: a Kineto-style trace with string pids and flow ids keeps them apart per rank") {
  sptest::temp_dir dir;
  auto trace = [](int rank) {
    return "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":" + std::to_string(rank) +
           ",\"world_size\":2},\"baseTimeNanoseconds\":" + std::to_string(1000 + rank * 2048) +
           ",\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":\"stream 7\",\"ts\":10,\"dur\":5},"
           "{\"ph\":\"s\",\"id\":42,\"pid\":\"Spans\",\"tid\":1,\"ts\":11,\"cat\":\"ac2g\",\"name\":\"ac2g\"},"
           "{\"ph\":\"f\",\"id\":\"abc\",\"pid\":0,\"tid\":\"stream 7\",\"ts\":12,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}]}";
  };
  write_text(dir / "a.trace.json", trace(0));
  write_text(dir / "b.trace.json", trace(1));
  std::string error;
  REQUIRE_MESSAGE(scopeprof_cli::merge_traces({dir / "a.trace.json", dir / "b.trace.json"}, dir / "m.trace.json", error), error);
  const ojson m = parse_file(dir / "m.trace.json");
  std::vector<ojson> kernels, starts, finishes;
  for (const auto& ev : m["traceEvents"]) {
    if (ev["ph"] == "X") kernels.push_back(ev);
    if (ev["ph"] == "s") starts.push_back(ev);
    if (ev["ph"] == "f") finishes.push_back(ev);
  }
  REQUIRE(kernels.size() == 2);
  CHECK(kernels[0]["pid"] != kernels[1]["pid"]);   // both ranks' device 0, apart
  CHECK(kernels[0]["ts"].get<double>() == 10.0);
  CHECK(kernels[1]["ts"].get<double>() == 10.0 + 2097.0 / 1024);  // 2048 ns later, in whole 1/1024 us
  REQUIRE(starts.size() == 2);
  CHECK(starts[0]["id"] == 84);                    // 42 * 2 inputs + index
  CHECK(starts[1]["id"] == 85);
  REQUIRE(finishes.size() == 2);
  CHECK(finishes[0]["id"] == "r0:abc");
  CHECK(finishes[1]["id"] == "r1:abc");
  CHECK(kernels[0]["tid"] == "stream 7");          // tids stay as they were
}
