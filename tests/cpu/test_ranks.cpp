// Ranks of a job: the launcher's variables and set_rank(), path templates, the rank added to a path that
// would make the ranks write over each other, and the process every output carries.
#include "csv_check.hpp"
#include "json_check.hpp"
#include "output_check.hpp"
#include "raw_builders.hpp"
#include "speedscope_check.hpp"
#include "stderr_capture.hpp"
#include "trace_check.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::process_desc;
using namespace scopeprof::detail;

const char* const launcher_vars[] = {"RANK",          "WORLD_SIZE",       "LOCAL_RANK",           "OMPI_COMM_WORLD_RANK",
                                     "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE",
                                     "MPI_LOCALRANKID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"};

/// Clears the launcher's variables and set_rank() for the test, and puts both back after it.
struct launcher_guard {
  std::vector<std::pair<std::string, std::string>> saved;
  launcher_guard() {
    for (const char* v : launcher_vars) {
      if (const char* x = std::getenv(v)) saved.emplace_back(v, x);
      ::unsetenv(v);
    }
    clear_override();
  }
  ~launcher_guard() {
    for (const char* v : launcher_vars) ::unsetenv(v);
    for (const auto& [k, v] : saved) ::setenv(k.c_str(), v.c_str(), 1);
    clear_override();
  }
  static void clear_override() {
    rank_override& o = the_rank_override();
    std::lock_guard<std::mutex> lock(o.mu);
    o.set = false;
  }
};

process_desc sample_process() {
  process_desc p;
  p.rank = 3;
  p.world_size = 4;
  p.local_rank = 1;
  p.rank_source = "OMPI_COMM_WORLD_RANK";
  p.host = "node/7\n\"x\"";  // hostile: a slash, a newline, quotes
  p.pid = 4242;
  p.base_unix_ns = 1'764'000'000'123'456'789;
  p.devices = {0, 1};
  return p;
}

}  // namespace

TEST_CASE("ranks: local rank from each launcher, set_rank() overrides the rank and world size") {
  launcher_guard guard;
  CHECK(current_rank().source.empty());
  CHECK(current_rank().local_rank == 0);
  ::setenv("SLURM_PROCID", "9", 1);
  ::setenv("SLURM_NTASKS", "16", 1);
  ::setenv("SLURM_LOCALID", "1", 1);
  CHECK(current_rank().local_rank == 1);
  ::setenv("PMI_RANK", "5", 1);
  ::setenv("MPI_LOCALRANKID", "2", 1);
  CHECK(current_rank().rank == 5);  // MPICH before Slurm
  CHECK(current_rank().local_rank == 2);
  ::setenv("OMPI_COMM_WORLD_RANK", "6", 1);
  ::setenv("OMPI_COMM_WORLD_SIZE", "8", 1);
  CHECK(current_rank().local_rank == 0);  // Open MPI's local rank is not set: 0, not MPICH's
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  CHECK(current_rank().local_rank == 3);
  ::setenv("RANK", "1", 1);
  ::setenv("WORLD_SIZE", "2", 1);
  ::setenv("LOCAL_RANK", "1", 1);
  CHECK(current_rank().rank == 1);
  CHECK(current_rank().world_size == 2);
  CHECK(current_rank().local_rank == 1);
  CHECK(current_rank().source == "RANK");

  CHECK(scopeprof::set_rank(1, 8));  // the launcher's rank: its local rank stays
  CHECK(current_rank().world_size == 8);
  CHECK(current_rank().local_rank == 1);
  CHECK(current_rank().source == "set_rank()");
  CHECK(scopeprof::set_rank(5, 8));  // another rank: the launcher's local rank is not this one's
  CHECK(current_rank().rank == 5);
  CHECK(current_rank().local_rank == 0);
  {
    sptest::stderr_capture err;
    CHECK_FALSE(scopeprof::set_rank(8, 8));
    CHECK_FALSE(scopeprof::set_rank(-1, 4));
    const std::string text = err.finish();
    CHECK(text.find("set_rank(8, 8) ignored") != std::string::npos);
    CHECK(text.find("set_rank(-1, 4) ignored") != std::string::npos);
  }
  CHECK(current_rank().rank == 5);  // unchanged by the refused calls
  CHECK(scopeprof::collect().process().rank == 5);
  CHECK(scopeprof::collect().process().world_size == 8);
}

TEST_CASE("ranks: path templates") {
  const process_desc p = sample_process();
  CHECK(expand_path_template("prof/run.{rank}.json", p) == "prof/run.3.json");
  CHECK(expand_path_template("{host}/{local_rank}-of-{world_size}.{pid}.csv", p) == "node_7__x_/1-of-4.4242.csv");
  CHECK(expand_path_template("a{b}c{rank", p) == "a{b}c{rank");  // unknown or unclosed: kept
  CHECK(expand_path_template("{{rank}}", p) == "{3}");
  CHECK(expand_path_template("", p).empty());
  process_desc dots = p;
  dots.host = "..";
  CHECK(expand_path_template("/tmp/{host}/r.json", dots) == "/tmp/unknown/r.json");  // never a parent directory

  CHECK(path_separates_ranks("r.{rank}.json"));
  CHECK(path_separates_ranks("r.{pid}.json"));
  CHECK(path_separates_ranks("scopeprof-%p-%n.trace.json"));
  CHECK(path_separates_ranks("{host}/r.{local_rank}.json"));
  CHECK_FALSE(path_separates_ranks("{host}/r.json"));
  CHECK_FALSE(path_separates_ranks("r.{local_rank}.json"));

  CHECK(path_with_rank("prof/run.json", 3) == "prof/run.rank3.json");
  CHECK(path_with_rank("prof/run.trace.json.gz", 3) == "prof/run.rank3.trace.json.gz");
  CHECK(path_with_rank("run.speedscope.json", 0) == "run.rank0.speedscope.json");
  CHECK(path_with_rank("run.intervals.jsonl", 12) == "run.rank12.intervals.jsonl");
  CHECK(path_with_rank("RUN.CSV", 1) == "RUN.rank1.CSV");
  CHECK(path_with_rank("report", 2) == "report.rank2");
  CHECK(path_with_rank("dir.json/report", 2) == "dir.json/report.rank2");  // the suffix of the file name only
  CHECK(path_with_rank(".json", 2) == ".json.rank2");                      // a name that is only a suffix
}

TEST_CASE("ranks: a path the environment names gets the rank when several ranks would share it, with one warning") {
  process_desc single = sample_process();
  single.world_size = 1;
  single.rank = 0;
  CHECK(job_output_path("r.json", "SCOPEPROF_TEST_VAR_A", single) == "r.json");
  const process_desc p = sample_process();
  sptest::stderr_capture err;
  CHECK(job_output_path("out/r.json", "SCOPEPROF_TEST_VAR_B", p) == "out/r.rank3.json");
  CHECK(job_output_path("out/r.json", "SCOPEPROF_TEST_VAR_B", p) == "out/r.rank3.json");
  CHECK(job_output_path("out/r.{rank}.json", "SCOPEPROF_TEST_VAR_C", p) == "out/r.3.json");
  const std::string text = err.finish();
  std::size_t warnings = 0;
  for (std::size_t at = 0; (at = text.find("names one file for all 4 ranks", at)) != std::string::npos; ++at) ++warnings;
  CHECK(warnings == 1);
  CHECK(text.find("SCOPEPROF_TEST_VAR_B='out/r.json'") != std::string::npos);
  CHECK(text.find("'out/r.rank3.json'") != std::string::npos);
}

TEST_CASE("ranks: every output carries the process, hostile host names escaped") {
  using sptest::host_record;
  raw_snapshot raw = sptest::one_thread_snapshot("ranks.cpp", {"step"}, {host_record(0, 0, 1000, 5000)}, 77, 1000);
  raw.threads[0].desc.counts.entered = raw.threads[0].desc.counts.recorded = 1;
  raw.counts = raw.threads[0].desc.counts;
  raw.process = sample_process();
  const scopeprof::report r = build_report(std::move(raw));
  CHECK(r.process().rank == 3);
  CHECK(r.process().devices == std::vector<std::int32_t>{0, 1});
  CHECK(sptest::check_all_outputs(r) == "");

  sptest::json doc;
  std::string err;
  REQUIRE(sptest::parse_json(r.json(), doc, err));
  CHECK(sptest::check_process_object(doc.find("process"), r.process(), "JSON") == "");

  const std::string trace = r.chrome_trace();
  CHECK(trace.find("\"distributedInfo\": {\"rank\": 3, \"world_size\": 4}") != std::string::npos);
  CHECK(sptest::hta_rank(trace) == 3);
  sptest::json t;
  REQUIRE(sptest::parse_json(trace, t, err));
  CHECK(t.find("baseTimeNanoseconds")->text == "1764000000123456789");
  CHECK(t.find("otherData")->find("host")->text == "node/7\n\"x\"");
  CHECK(t.find("otherData")->find("pid")->text == "4242");
  CHECK(t.find("otherData")->find("local_rank")->text == "1");

  sptest::json ss;
  REQUIRE(sptest::parse_json(r.speedscope(), ss, err));
  CHECK(ss.find("name")->text.find("rank 3 of 4") != std::string::npos);
  CHECK(sptest::check_process_object(ss.find("scopeprof")->find("process"), r.process(), "speedscope") == "");

  sptest::csv_rows rows;
  REQUIRE(sptest::parse_csv(r.csv(), rows, err));
  std::vector<std::pair<std::string, std::string>> meta;
  for (const auto& row : rows)
    if (row[0] == "meta") meta.emplace_back(row[4], row[5]);
  const auto value = [&meta](const std::string& key) {
    for (const auto& [k, v] : meta)
      if (k == key) return v;
    return std::string("(missing)");
  };
  CHECK(value("rank") == "3");
  CHECK(value("world_size") == "4");
  CHECK(value("local_rank") == "1");
  CHECK(value("rank_source") == "OMPI_COMM_WORLD_RANK");
  CHECK(value("host") == "node/7\n\"x\"");
  CHECK(value("pid") == "4242");
  CHECK(value("base_unix_ns") == "1764000000123456789");
  CHECK(value("devices") == "0 1");

  const std::string text = r.to_string();
  CHECK(text.find("  process:     rank 3 of 4 (local 1, from OMPI_COMM_WORLD_RANK), host node/7\\n\"x\", pid 4242, GPUs 0,1\n") !=
        std::string::npos);
  const std::string html = r.html();
  CHECK(html.find("rank 3 of 4 (local 1, from OMPI_COMM_WORLD_RANK), host node/7\\n&quot;x&quot;, pid 4242") !=
        std::string::npos);
}

TEST_CASE("ranks: a report of this process names this host and pid, and no rank when no launcher set one") {
  launcher_guard guard;
  const scopeprof::report r = scopeprof::collect();
  CHECK(r.process().pid == static_cast<std::int64_t>(::getpid()));
  CHECK(r.process().host == current_host_name());
  CHECK_FALSE(r.process().host.empty());
#if defined(__linux__)
  // The test binary's own name: every suite that runs this file is an executable named scopeprof_*.
  CHECK(r.process().program.rfind("scopeprof_", 0) == 0);
#endif
  CHECK(r.process().rank_source.empty());
  CHECK(r.process().world_size == 1);
  CHECK(r.process().base_unix_ns > 1'600'000'000'000'000'000);  // after 2020
  CHECK(r.to_string().find("  process:     host ") != std::string::npos);
}
