// scopeprof merge: the streaming merger's figures across ranks (exact, on synthetic reports), its checks
// that the inputs are the ranks of one job, the three writers, and the command on saved JSON reports.
#include "raw_builders.hpp"
#include "temp_files.hpp"

#include "commands.hpp"
#include "merge.hpp"
#include "merge_output.hpp"
#include "report_file.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using scopeprof_cli::merged_node;
using scopeprof_cli::merged_result;
using scopeprof_cli::merger;
using scopeprof_cli::report_file;

/// The identity of rank `rank` of `world`.
scopeprof::process_desc process_of(std::int64_t rank, std::int64_t world, const std::string& program = "train") {
  scopeprof::process_desc p;
  p.rank = rank;
  p.world_size = world;
  p.host = "node" + std::to_string(rank / 2);
  p.program = program;
  p.pid = 100 + rank;
  p.base_unix_ns = 1'700'000'000'000'000'000 + rank;
  return p;
}

/// One step: step > forward > matmul (matmul device-timed for `device_ns`), step > backward taking
/// `backward_ns`, and step > extra (2 ns) when `extra`. Host times: matmul 30, forward 45.
report_file step_rank(std::int64_t rank, std::int64_t world, std::int64_t backward_ns, std::int64_t device_ns,
                      bool extra, const std::string& program = "train") {
  using sptest::host_record;
  std::vector<sptest::raw_instance> post = {
      sptest::device_timed(host_record(2, 2, 10, 40), 0, 7, 1000, 1000 + device_ns),  // matmul
      host_record(1, 1, 5, 50),                                                       // forward
      host_record(3, 1, 50, 50 + backward_ns),                                        // backward
  };
  const std::int64_t end = 50 + backward_ns;
  if (extra) post.push_back(host_record(4, 1, end, end + 2));
  post.push_back(host_record(0, 0, 0, end + 5));  // step
  auto snap = sptest::one_thread_snapshot("train.cpp", {"step", "forward", "matmul", "backward", "extra"}, post);
  snap.process = process_of(rank, world, program);
  return {"run." + std::to_string(rank) + ".json", scopeprof::detail::build_report(std::move(snap))};
}

/// The node at this path ("step/backward"), or null.
const merged_node* find_node(const merged_result& m, const std::string& path) {
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    std::string p;
    for (const auto& n : m.path_of(i)) p += (p.empty() ? "" : "/") + n;
    if (p == path) return &m.nodes[i];
  }
  return nullptr;
}

/// Four ranks, added out of order; rank 2's backward 3x slower; "extra" on ranks 1 and 3 only; matmul's
/// device span 20 ns except 60 on rank 3.
merged_result four_ranks() {
  merger m;
  std::string error;
  for (std::int64_t rank : {3, 1, 0, 2}) {
    const report_file f = step_rank(rank, 4, rank == 2 ? 300 : 100, rank == 3 ? 60 : 20, rank % 2 == 1);
    REQUIRE_MESSAGE(m.add(f, error), error);
  }
  merged_result r = m.finish(error);
  REQUIRE_MESSAGE(error.empty(), error);
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

TEST_CASE("cli merge: the straggler, imbalance, median, min and max of each call path across ranks") {
  const merged_result m = four_ranks();
  CHECK(m.world_size == 4);
  CHECK(m.program == "train");
  CHECK(m.hosts == std::vector<std::string>{"node0", "node1"});
  REQUIRE(m.inputs.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(m.inputs[i].rank == static_cast<std::int64_t>(i));
  CHECK(m.inputs[2].file == "run.2.json");
  CHECK(m.inputs[3].pid == 103);

  const merged_node* bwd = find_node(m, "step/backward");
  REQUIRE(bwd != nullptr);
  CHECK(bwd->ranks_present == 4);
  CHECK(bwd->calls == 4);
  CHECK(bwd->host_total.straggler == 2);
  CHECK(bwd->host_total.imbalance == 2.0);  // 300 / ((100 + 100 + 300 + 100) / 4), exact
  CHECK(bwd->host_total.min_ns == 100);
  CHECK(bwd->host_total.median_ns == 100.0);
  CHECK(bwd->host_total.max_ns == 300);
  CHECK(bwd->host_total.mean_ns == 150.0);
  CHECK_FALSE(bwd->has_device());

  const merged_node* step = find_node(m, "step");
  REQUIRE(step != nullptr);
  CHECK(step->host_total.median_ns == 155.0);  // 155, 155, 355, 155
  CHECK(step->host_total.max_ns == 355);
}

TEST_CASE("cli merge: host and device stay separate; a path on some ranks says how many") {
  const merged_result m = four_ranks();
  const merged_node* mm = find_node(m, "step/forward/matmul");
  REQUIRE(mm != nullptr);
  REQUIRE(mm->has_device());
  CHECK(mm->device_calls == 4);
  CHECK(mm->device_total.ranks == 4);
  CHECK(mm->device_total.straggler == 3);
  CHECK(mm->device_total.max_ns == 60);
  CHECK(mm->device_total.min_ns == 20);
  CHECK(mm->device_total.imbalance == 2.0);  // 60 / ((20 + 20 + 20 + 60) / 4)
  CHECK(mm->host_total.max_ns == 30);        // the host figures are the host's, untouched by the device
  CHECK(mm->host_total.imbalance == 1.0);
  CHECK(mm->host_total.straggler == 0);      // a tie goes to the lowest rank

  const merged_node* extra = find_node(m, "step/extra");
  REQUIRE(extra != nullptr);
  CHECK(extra->ranks_present == 2);
  CHECK(extra->host_total.ranks == 2);
  REQUIRE(extra->per_rank.size() == 2);
  CHECK(extra->per_rank[0].rank == 1);
  CHECK(extra->per_rank[1].rank == 3);
  CHECK(extra->calls == 2);
}

TEST_CASE("cli merge: nodes come depth-first, children heaviest first, with their parents") {
  const merged_result m = four_ranks();
  std::vector<std::string> names;
  for (const auto& n : m.nodes) names.push_back(n.name);
  // step's children by max-over-ranks host total: backward 300, forward 45, extra 2.
  CHECK(names == std::vector<std::string>{"step", "backward", "forward", "matmul", "extra"});
  CHECK(m.nodes[0].parent == -1);
  CHECK(m.nodes[1].parent == 0);
  CHECK(m.nodes[2].parent == 0);
  CHECK(m.nodes[3].parent == 2);
  CHECK(m.nodes[3].depth == 2);
  CHECK(m.nodes[4].parent == 0);
  CHECK(m.path_of(3) == std::vector<std::string>{"step", "forward", "matmul"});
}

TEST_CASE("cli merge: statistics over ranks: the median of an even count, ties, all zero") {
  const auto s = scopeprof_cli::stats_over({4, 1, 3, 2, 4}, {0, 1, 2, 3, 4});
  CHECK(s.ranks == 5);
  CHECK(s.median_ns == 3.0);
  CHECK(s.straggler == 0);  // 4 on ranks 0 and 4: the lowest
  CHECK(s.imbalance == doctest::Approx(4.0 / 2.8));
  const auto even = scopeprof_cli::stats_over({40, 10, 30, 20}, {7, 5, 6, 4});
  CHECK(even.median_ns == 25.0);
  CHECK(even.min_ns == 10);
  CHECK(even.straggler == 7);
  const auto zero = scopeprof_cli::stats_over({0, 0}, {0, 1});
  CHECK(zero.imbalance == 1.0);
  CHECK(scopeprof_cli::stats_over({}, {}).ranks == 0);
}

TEST_CASE("cli merge: one report of world size 1 merges as rank 0 of 1") {
  merger m;
  std::string error;
  REQUIRE(m.add(step_rank(0, 1, 100, 20, false), error));
  const merged_result r = m.finish(error);
  CHECK(error.empty());
  CHECK(r.world_size == 1);
  CHECK(r.nodes.size() == 4);
  CHECK(find_node(r, "step/backward")->host_total.imbalance == 1.0);
}

TEST_CASE("cli merge: inputs that are not the ranks of one job are refused, naming the files") {
  merger m;
  std::string error;
  REQUIRE(m.add(step_rank(0, 4, 100, 20, false), error));
  SUBCASE("a rank twice: both files named") {
    report_file again = step_rank(0, 4, 100, 20, false);
    again.path = "other/run.0.json";
    CHECK_FALSE(m.add(again, error));
    CHECK(error.find("other/run.0.json") != std::string::npos);
    CHECK(error.rfind("other/run.0.json: rank 0", 0) == 0);  // the new file first
    CHECK(error.find(" run.0.json is rank 0") != std::string::npos);
  }
  SUBCASE("missing ranks are named") {
    REQUIRE(m.add(step_rank(2, 4, 100, 20, false), error));
    const merged_result r = m.finish(error);
    CHECK(error.find("ranks 1, 3 missing") != std::string::npos);
    CHECK(r.nodes.empty());
  }
  SUBCASE("world sizes differ") {
    CHECK_FALSE(m.add(step_rank(1, 8, 100, 20, false), error));
    CHECK(error.find("run.1.json: world size 8") != std::string::npos);
    CHECK(error.find("run.0.json has world size 4") != std::string::npos);
  }
  SUBCASE("a rank outside the world") {
    CHECK_FALSE(m.add(step_rank(4, 4, 100, 20, false), error));
    CHECK(error.find("rank 4 is outside 0..3") != std::string::npos);
  }
  SUBCASE("different programs: the first file and the one that differs") {
    CHECK_FALSE(m.add(step_rank(1, 4, 100, 20, false, "eval"), error));
    CHECK(error.find("run.1.json: program 'eval' differs from 'train' in run.0.json") != std::string::npos);
  }
  SUBCASE("a refused report leaves the merge as it was") {
    CHECK_FALSE(m.add(step_rank(1, 4, 100, 20, false, "eval"), error));
    for (std::int64_t r : {1, 2, 3}) REQUIRE(m.add(step_rank(r, 4, 100, 20, false), error));
    const merged_result r = m.finish(error);
    CHECK(error.empty());
    CHECK(find_node(r, "step")->calls == 4);
  }
}

TEST_CASE("cli merge: more than ten missing ranks are named up to ten, then counted") {
  merger m;
  std::string error;
  REQUIRE(m.add(step_rank(5, 30, 100, 20, false), error));
  m.finish(error);
  CHECK(error.find("ranks 0, 1, 2, 3, 4, 6, 7, 8, 9, 10 and 19 more missing") != std::string::npos);
}

TEST_CASE("cli merge: the text table fits the width, names cut with ..., and carries the legend") {
  merger m;
  std::string error;
  const std::string long_name(150, 'L');
  for (std::int64_t rank : {0, 1}) {
    report_file f = step_rank(rank, 2, 100, 20, false);
    auto snap = sptest::one_thread_snapshot("x.cpp", {"step", long_name},
                                            {sptest::device_timed(sptest::host_record(1, 1, 10, 20), 0, 1, 5, 9),
                                             sptest::host_record(0, 0, 0, 30)});
    snap.process = process_of(rank, 2);
    f.report = scopeprof::detail::build_report(std::move(snap));
    REQUIRE(m.add(f, error));
  }
  const merged_result r = m.finish(error);
  for (int width : {80, 60, 200}) {
    const std::string text = scopeprof_cli::merge_text(r, width);
    CAPTURE(text);
    for (const auto& line : lines_of(text)) CHECK(code_points(line) <= static_cast<std::size_t>(width));
    CHECK(text.find("LLL...") != std::string::npos);
    CHECK(text.find("2 ranks of program train") != std::string::npos);
    CHECK(text.find("hosts: node0") != std::string::npos);
    CHECK(text.find("device span") != std::string::npos);
  }
  const std::string text = scopeprof_cli::merge_text(r, 80);
  CHECK(text.find("imbalance = max/mean over ranks") != std::string::npos);
  CHECK(text.find("straggler = rank with the max") != std::string::npos);
}

TEST_CASE("cli merge: JSON parses, with the schema, the inputs and the straggler; Markdown has a table") {
  const merged_result m = four_ranks();
  const auto doc = nlohmann::json::parse(scopeprof_cli::merge_json(m));
  CHECK(doc["schema"] == "scopeprof-merge/1");
  CHECK(doc["world_size"] == 4);
  REQUIRE(doc["inputs"].size() == 4);
  CHECK(doc["inputs"][2]["file"] == "run.2.json");
  CHECK(doc["inputs"][2]["rank"] == 2);
  CHECK(doc["inputs"][2]["host"] == "node1");
  const auto& bwd = doc["nodes"][1];
  CHECK(bwd["path"] == nlohmann::json::array({"step", "backward"}));
  CHECK(bwd["parent"] == 0);
  CHECK(bwd["depth"] == 1);
  CHECK(bwd["host_total"]["straggler"] == 2);
  CHECK(bwd["host_total"]["imbalance"] == 2.0);
  CHECK(bwd["host_total"]["median"] == 100);
  CHECK(bwd["host_total"]["per_rank"] == nlohmann::json::array({100, 100, 300, 100}));
  CHECK(bwd["device_total"].is_null());
  const auto& extra = doc["nodes"][4];
  CHECK(extra["ranks_present"] == 2);
  CHECK(extra["calls"]["per_rank"] == nlohmann::json::parse("[null, 1, null, 1]"));
  CHECK(doc["nodes"][3]["device_total"]["per_rank"] == nlohmann::json::array({20, 20, 20, 60}));

  const std::string md = scopeprof_cli::merge_markdown(m);
  CHECK(md.find("| scope | calls | host total min |") != std::string::npos);
  CHECK(md.find("| --- | ---: |") != std::string::npos);
  CHECK(md.find("| &nbsp;&nbsp;backward | 4 |") != std::string::npos);
  CHECK(md.find("extra \\[2/4 ranks\\]") != std::string::npos);
}

TEST_CASE("cli merge: 64 ranks of about 200 call paths merge correctly") {
  constexpr std::int64_t world = 64;
  merger m;
  std::string error;
  for (std::int64_t rank = 0; rank < world; ++rank) {
    // 10 layers of 20 ops under one root: 211 paths; op k of layer l takes (l+1)*(k+1) ns, rank 63 twice.
    std::vector<std::string> names{"step"};
    std::vector<sptest::raw_instance> post;
    std::int64_t t = 0;
    for (int l = 0; l < 10; ++l) {
      names.push_back("layer" + std::to_string(l));
      const std::int64_t layer_begin = t;
      for (int k = 0; k < 20; ++k) {
        names.push_back("op" + std::to_string(k));
        const std::int64_t d = (l + 1) * (k + 1) * (rank == world - 1 ? 2 : 1);
        post.push_back(sptest::host_record(static_cast<std::uint32_t>(names.size() - 1), 2, t, t + d));
        t += d;
      }
      post.push_back(sptest::host_record(static_cast<std::uint32_t>(1 + l * 21), 1, layer_begin, t));
    }
    post.push_back(sptest::host_record(0, 0, 0, t));
    auto snap = sptest::one_thread_snapshot("big.cpp", names, post);
    snap.process = process_of(rank, world);
    REQUIRE(m.add({"r" + std::to_string(rank), scopeprof::detail::build_report(std::move(snap))}, error));
  }
  const merged_result r = m.finish(error);
  REQUIRE(error.empty());
  CHECK(r.nodes.size() == 211);
  const merged_node* op = find_node(r, "step/layer9/op19");
  REQUIRE(op != nullptr);
  CHECK(op->ranks_present == 64);
  CHECK(op->host_total.straggler == 63);
  CHECK(op->host_total.max_ns == 400);
  CHECK(op->host_total.median_ns == 200.0);
  CHECK(op->host_total.imbalance == doctest::Approx(400.0 / (200.0 * 65 / 64)));
  CHECK(r.nodes[1].name == "layer9");  // the heaviest layer first
  CHECK(r.nodes[2].name == "op19");
}

TEST_CASE("cli merge: the command on saved reports writes text, JSON and Markdown, and refuses bad input") {
  sptest::temp_dir dir;
  scopeprof_cli::merge_options o;
  for (std::int64_t rank = 0; rank < 4; ++rank) {
    const std::string path = dir / ("run." + std::to_string(rank) + ".json");
    REQUIRE(step_rank(rank, 4, rank == 2 ? 300 : 100, 20, false).report.write_json(path).ok());
    o.inputs.push_back(path);
  }
  std::ostringstream out, err;
  SUBCASE("text on the stream") {
    o.width = 80;
    CHECK(scopeprof_cli::run_merge(o, out, err) == 0);
    CHECK(err.str() == "");
    CHECK(out.str().find("4 ranks of program train") != std::string::npos);
  }
  SUBCASE("JSON and Markdown by suffix") {
    o.output = dir / "merged.json";
    REQUIRE(scopeprof_cli::run_merge(o, out, err) == 0);
    const auto doc = nlohmann::json::parse(sptest::read_file_bytes(o.output));
    CHECK(doc["nodes"][1]["host_total"]["straggler"] == 2);
    o.output = dir / "merged.md";
    REQUIRE(scopeprof_cli::run_merge(o, out, err) == 0);
    CHECK(sptest::read_file_bytes(o.output).find("| scope |") != std::string::npos);
  }
  SUBCASE("reports give no trace or HTML, and say why") {
    o.output = dir / "m.trace.json";
    CHECK(scopeprof_cli::run_merge(o, out, err) == 2);
    CHECK(err.str().find("a merged trace is made from the ranks' traces") != std::string::npos);
    o.output = dir / "m.html";
    CHECK(scopeprof_cli::run_merge(o, out, err) == 2);
    CHECK(err.str().find("an HTML report is per rank") != std::string::npos);
  }
  SUBCASE("an unwritable output is named") {
    o.output = dir / "no/such/folder/m.txt";
    CHECK(scopeprof_cli::run_merge(o, out, err) == 2);
    CHECK(err.str().find(o.output) != std::string::npos);
  }
  SUBCASE("a missing rank") {
    o.inputs.pop_back();
    CHECK(scopeprof_cli::run_merge(o, out, err) == 2);
    CHECK(err.str().find("rank 3 missing") != std::string::npos);
  }
  SUBCASE("a truncated report is named") {
    const std::string bytes = sptest::read_file_bytes(o.inputs[1]);
    std::ofstream(o.inputs[1], std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    CHECK(scopeprof_cli::run_merge(o, out, err) == 2);
    CHECK(err.str().find(o.inputs[1]) != std::string::npos);
  }
  SUBCASE("no inputs") {
    o.inputs.clear();
    CHECK(scopeprof_cli::run_merge(o, out, err) == 2);
    CHECK(err.str().find("no input") != std::string::npos);
  }
}
