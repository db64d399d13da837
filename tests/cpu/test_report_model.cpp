// The report model, from synthetic snapshots: tree reconstruction from post-order records, orphans,
// recursion in the flat table, device self time, device status, Time % and the duration statistics.
#include "csv_check.hpp"
#include "json_check.hpp"
#include "output_check.hpp"

#include "internals.hpp"
#include "raw_builders.hpp"
#include "report_lookup.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::device_status;
using scopeprof::detail::raw_instance;
using sptest::device_timed;
using sptest::host_record;
using sptest::with_device_status;

// A snapshot with the given site names and one thread per record list (records in post-order).
scopeprof::report build(const std::vector<std::string>& names, const std::vector<std::vector<raw_instance>>& threads,
                        std::uint64_t in_flight = 0) {
  scopeprof::detail::raw_snapshot s;
  sptest::add_sites(s, names, "model.cpp");
  for (std::size_t t = 0; t < threads.size(); ++t) sptest::add_thread(s, threads[t], 0, t == 0 ? in_flight : 0);
  return scopeprof::detail::build_report(std::move(s));
}

std::string name_of(const scopeprof::report& r, std::size_t i) { return r.sites()[r.instances()[i].site].name; }

using sptest::row;

// The line of the flat text table whose name column is `name`.
std::string flat_table_line(const scopeprof::report& r, const std::string& name) {
  const auto lines = sptest::split_lines(r.to_string());
  bool in_flat = false;
  for (const auto& l : lines) {
    if (l.rfind("By name (", 0) == 0) in_flat = true;
    if (in_flat && l.rfind(name + "  ", 0) == 0) return l;
  }
  FAIL("no flat table line for " << name);
  return {};
}

// The CSV flat row for `name`, as column name -> value.
std::vector<std::string> csv_flat_row(const scopeprof::report& r, const std::string& name, sptest::csv_rows& rows) {
  std::string err;
  REQUIRE_MESSAGE(sptest::parse_csv(r.csv(), rows, err), err);
  const int name_col = sptest::csv_column(rows, "name");
  for (const auto& cells : rows)
    if (cells[0] == "flat" && cells[static_cast<std::size_t>(name_col)] == name) return cells;
  FAIL("no CSV flat row for " << name);
  return {};
}

std::string csv_cell(const sptest::csv_rows& rows, const std::vector<std::string>& cells, const char* column) {
  const int c = sptest::csv_column(rows, column);
  REQUIRE_MESSAGE(c >= 0, "no CSV column " << column);
  return cells.at(static_cast<std::size_t>(c));
}

const sptest::json& json_flat_row(const sptest::json& doc, const std::string& name) {
  for (const auto& f : doc.find("flat")->items)
    if (f.find("name")->text == name) return f;
  FAIL("no JSON flat row for " << name);
  static const sptest::json none;
  return none;
}

}  // namespace

TEST_CASE("build_report rebuilds the call tree from post-order records and lists it in pre-order") {
  enum { A, B, C, D, E };
  const std::vector<std::string> names = {"A", "B", "C", "D", "E"};
  // A[0,100] { B[10,40] { C[20,30] }, D[50,90] }, E[200,300]; records in the order scopes ended.
  const std::vector<raw_instance> post = {host_record(C, 2, 20, 30), host_record(B, 1, 10, 40),
                                          host_record(D, 1, 50, 90), host_record(A, 0, 0, 100),
                                          host_record(E, 0, 200, 300)};
  SUBCASE("one thread") {
    const auto r = build(names, {post});
    REQUIRE(r.instances().size() == 5);
    const std::vector<std::string> order = {"A", "B", "C", "D", "E"};
    const std::vector<std::int64_t> parents = {-1, 0, 1, 0, -1};
    const std::vector<std::uint32_t> depths = {0, 1, 2, 1, 0};
    const std::vector<std::int64_t> self = {30, 20, 10, 40, 100};
    for (std::size_t i = 0; i < 5; ++i) {
      CAPTURE(i);
      CHECK(name_of(r, i) == order[i]);
      CHECK(r.instances()[i].parent == parents[i]);
      CHECK(r.instances()[i].depth == depths[i]);
      CHECK(r.instances()[i].host_self_ns == self[i]);
      CHECK_FALSE(r.instances()[i].orphan);
    }
    CHECK(r.orphan_count() == 0);
    // Tree rows: depth-first, heavier children first (D 40 before B 30).
    REQUIRE(r.tree().size() == 5);
    const std::vector<std::string> tree_names = {"A", "D", "B", "C", "E"};
    const std::vector<std::int64_t> tree_parents = {-1, 0, 0, 2, -1};
    for (std::size_t i = 0; i < 5; ++i) {
      CAPTURE(i);
      CHECK(r.tree()[i].name == tree_names[i]);
      CHECK(r.tree()[i].parent == tree_parents[i]);
    }
    const std::string problem = sptest::check_all_outputs(r);
    CHECK_MESSAGE(problem.empty(), problem);
  }
  SUBCASE("two threads keep their own trees") {
    std::vector<raw_instance> shifted = post;
    for (auto& x : shifted) x.host_begin_ns += 5, x.host_end_ns += 5;
    const auto r = build(names, {post, shifted});
    REQUIRE(r.instances().size() == 10);
    for (std::size_t i = 0; i < 10; ++i) CHECK(r.instances()[i].thread == (i < 5 ? 0u : 1u));
    CHECK(r.instances()[7].parent == 6);  // C under B on thread 1
    CHECK(row(r, "A").calls == 2);
    CHECK(row(r, "A").host_total_ns == 200);
    REQUIRE(r.tree().size() == 5);  // same paths merge
    CHECK(r.tree()[0].calls == 2);
  }
  SUBCASE("same-level siblings that ended in a different order than they began") {
    // Only possible with clock noise; siblings are still ordered by begin time.
    const auto r = build(names, {{host_record(B, 1, 40, 50), host_record(C, 1, 10, 20), host_record(A, 0, 0, 100)}});
    REQUIRE(r.instances().size() == 3);
    CHECK(name_of(r, 1) == "C");
    CHECK(name_of(r, 2) == "B");
  }
}

TEST_CASE("build_report shows scopes whose parent is missing or still open as orphan roots") {
  enum { A, B, C, D };
  const std::vector<std::string> names = {"A", "B", "C", "D"};
  SUBCASE("the parent was dropped and a sibling of the parent ended next") {
    // A[0,100] { B[10,40] (dropped) { C[20,30] }, D[50,90] }
    const auto r = build(names, {{host_record(C, 2, 20, 30), host_record(D, 1, 50, 90), host_record(A, 0, 0, 100)}});
    REQUIRE(r.instances().size() == 3);
    CHECK(name_of(r, 0) == "A");
    CHECK(name_of(r, 1) == "D");
    CHECK(r.instances()[1].parent == 0);
    CHECK(name_of(r, 2) == "C");
    CHECK(r.instances()[2].orphan);
    CHECK(r.instances()[2].parent == -1);
    CHECK(r.instances()[2].depth == 0);
    CHECK(r.instances()[0].host_self_ns == 60);  // C is not charged to A
    CHECK(r.orphan_count() == 1);
    CHECK(r.to_string().find("1 scopes whose parent was still open (or dropped)") != std::string::npos);
  }
  SUBCASE("the parent was dropped and the grandparent ended next") {
    const auto r = build(names, {{host_record(C, 2, 20, 30), host_record(A, 0, 0, 100)}});
    REQUIRE(r.instances().size() == 2);
    CHECK_FALSE(r.instances()[0].orphan);
    CHECK(r.instances()[1].orphan);
    CHECK(name_of(r, 1) == "C");
    CHECK(r.instances()[0].host_self_ns == 100);
    CHECK(r.orphan_count() == 1);
  }
  SUBCASE("the parent is still open") {
    // A still open: B (depth 1) and its child C have ended.
    const auto r = build(names, {{host_record(C, 2, 20, 30), host_record(B, 1, 10, 40)}}, 1);
    REQUIRE(r.instances().size() == 2);
    CHECK(name_of(r, 0) == "B");
    CHECK(r.instances()[0].orphan);
    CHECK(r.instances()[0].parent == -1);
    CHECK(name_of(r, 1) == "C");
    CHECK_FALSE(r.instances()[1].orphan);
    CHECK(r.instances()[1].parent == 0);
    CHECK(r.orphan_count() == 1);
    CHECK(r.counts().in_flight == 1);
  }
  SUBCASE("orphans keep the outputs valid") {
    const auto r = build(names,
                         {{host_record(C, 3, 20, 30), host_record(D, 1, 50, 90), host_record(B, 2, 5, 8),
                           host_record(A, 1, 0, 100)}},
                         1);
    const std::string problem = sptest::check_all_outputs(r);
    CHECK_MESSAGE(problem.empty(), problem);
    CHECK(r.orphan_count() >= 1);
  }
}

TEST_CASE("recursion: a name nested in itself counts its inclusive time once and every call") {
  enum { A, B };
  const std::vector<std::string> names = {"A", "B"};
  SUBCASE("directly") {
    // A[0,100] { A[10,60] { B[20,30] } }
    const auto r = build(names, {{host_record(B, 2, 20, 30), host_record(A, 1, 10, 60), host_record(A, 0, 0, 100)}});
    const auto& a = row(r, "A");
    CHECK(a.calls == 2);
    CHECK(a.host_total_ns == 100);
    CHECK(a.host_self_ns == 50 + 40);
    CHECK(a.host.min == 50);
    CHECK(a.host.max == 100);
    CHECK(row(r, "B").host_total_ns == 10);
    REQUIRE(r.tree().size() == 3);
    CHECK(r.tree()[1].name == "A");
    CHECK(r.tree()[1].depth == 1);
    CHECK(r.tree()[0].host_total_ns == 100);
    CHECK(r.tree()[1].host_total_ns == 50);
  }
  SUBCASE("through another name") {
    // A[0,100] { B[10,90] { A[20,80] } }
    const auto r = build(names, {{host_record(A, 2, 20, 80), host_record(B, 1, 10, 90), host_record(A, 0, 0, 100)}});
    CHECK(row(r, "A").calls == 2);
    CHECK(row(r, "A").host_total_ns == 100);
    CHECK(row(r, "A").host_self_ns == 20 + 60);
    CHECK(row(r, "B").host_total_ns == 80);
    CHECK(row(r, "B").host_self_ns == 20);
  }
  SUBCASE("siblings of the same name all count") {
    const auto r = build(names, {{host_record(A, 1, 10, 20), host_record(A, 1, 30, 50), host_record(B, 0, 0, 100),
                                  host_record(A, 0, 200, 210)}});
    CHECK(row(r, "A").calls == 3);
    CHECK(row(r, "A").host_total_ns == 10 + 20 + 10);
  }
  SUBCASE("the same name on two threads") {
    const auto r = build(names, {{host_record(A, 1, 10, 20), host_record(A, 0, 0, 100)}, {host_record(A, 0, 0, 50)}});
    CHECK(row(r, "A").calls == 3);
    CHECK(row(r, "A").host_total_ns == 150);
  }
  SUBCASE("device spans of a name nested in itself count once") {
    const auto r = build(names, {{device_timed(host_record(A, 1, 10, 60), 0, 1, 1100, 1300),
                                  device_timed(host_record(A, 0, 0, 100), 0, 1, 1000, 1500)}});
    CHECK(row(r, "A").device_calls == 2);
    CHECK(row(r, "A").device_total_ns == 500);
    CHECK(row(r, "A").device_self_ns == 300 + 200);
  }
}

TEST_CASE("device self time is the span minus the union of the child spans on the same device and stream") {
  enum { P, C1, C2, C3, C4, C5, C6, G };
  const std::vector<std::string> names = {"P", "C1", "C2", "C3", "C4", "C5", "C6", "G"};
  // P: device 0, stream 1, [1000, 2000]. Children on stream 1 overlap ([1100,1400] and [1300,1600]) and one
  // runs past P's end ([1900,2100] counts up to 2000); children on another stream or device do not count.
  const std::vector<raw_instance> post = {
      device_timed(host_record(G, 2, 120, 150), 0, 1, 1150, 1950),  // grandchild: charged to C1 only
      device_timed(host_record(C1, 1, 100, 200), 0, 1, 1100, 1400),
      device_timed(host_record(C2, 1, 300, 400), 0, 1, 1300, 1600),
      device_timed(host_record(C3, 1, 500, 600), 0, 2, 1000, 1900),  // other stream
      device_timed(host_record(C4, 1, 700, 800), 0, 1, 1900, 2100),
      device_timed(host_record(C5, 1, 850, 900), 1, 1, 1700, 1800),  // other device, same stream handle
      with_device_status(host_record(C6, 1, 920, 950), device_status::captured),
      device_timed(host_record(P, 0, 0, 1000), 0, 1, 1000, 2000),
  };
  const auto r = build(names, {post});
  REQUIRE(r.instances().size() == 8);
  const auto self = [&](const std::string& n) {
    for (const auto& s : r.instances())
      if (r.sites()[s.site].name == n) return s.device_self_ns;
    FAIL("no instance " << n);
    return std::int64_t{-1};
  };
  CHECK(self("P") == 1000 - (500 + 100));
  CHECK(self("C1") == 300 - 250);
  CHECK(self("C2") == 300);
  CHECK(self("C3") == 900);
  CHECK(self("C4") == 200);
  CHECK(self("G") == 800);
  CHECK(row(r, "P").device_calls == 1);
  CHECK(row(r, "P").device_total_ns == 1000);
  CHECK(row(r, "P").device_self_ns == 400);
  CHECK(row(r, "C6").device_calls == 0);
  CHECK(row(r, "C6").device_captured == 1);
  // Host self is unaffected by device spans.
  CHECK(row(r, "P").host_self_ns == 1000 - (100 + 100 + 100 + 100 + 50 + 30));
  const std::string problem = sptest::check_all_outputs(r);
  CHECK_MESSAGE(problem.empty(), problem);
}

TEST_CASE("device time that could not be measured shows as n/a with its reason in the table, CSV and JSON") {
  enum { graph, broken, mixed, plain };
  const std::vector<std::string> names = {"graph", "broken", "mixed", "plain"};
  const auto r = build(names, {{with_device_status(host_record(graph, 0, 0, 10), device_status::captured),
                                with_device_status(host_record(graph, 0, 20, 30), device_status::captured),
                                with_device_status(host_record(broken, 0, 40, 50), device_status::invalid),
                                device_timed(host_record(mixed, 0, 60, 70), 0, 0, 60, 75),
                                with_device_status(host_record(mixed, 0, 80, 90), device_status::captured),
                                host_record(plain, 0, 100, 110)}});
  CHECK(row(r, "graph").device_captured == 2);
  CHECK(row(r, "broken").device_invalid == 1);
  CHECK(row(r, "mixed").device_calls == 1);
  CHECK(row(r, "mixed").device_captured == 1);

  CHECK(flat_table_line(r, "graph").find("n/a (captured)") != std::string::npos);
  CHECK(flat_table_line(r, "broken").find("n/a (CUDA error)") != std::string::npos);
  CHECK(flat_table_line(r, "plain").find("n/a (") == std::string::npos);
  CHECK(flat_table_line(r, "mixed").find("n/a (") == std::string::npos);

  sptest::csv_rows rows;
  CHECK(csv_cell(rows, csv_flat_row(r, "graph", rows), "device_status") == "n/a (captured)");
  CHECK(csv_cell(rows, csv_flat_row(r, "broken", rows), "device_status") == "n/a (CUDA error)");
  CHECK(csv_cell(rows, csv_flat_row(r, "plain", rows), "device_status") == "n/a");
  CHECK(csv_cell(rows, csv_flat_row(r, "mixed", rows), "device_status") == "ok");
  CHECK(csv_cell(rows, csv_flat_row(r, "graph", rows), "device_total_us").empty());
  CHECK(csv_cell(rows, csv_flat_row(r, "mixed", rows), "device_total_us") == "0.015");

  sptest::json doc;
  std::string err;
  REQUIRE_MESSAGE(sptest::parse_json(r.json(), doc, err), err);
  CHECK(json_flat_row(doc, "graph").find("device_status")->text == "n/a (captured)");
  CHECK(json_flat_row(doc, "broken").find("device_status")->text == "n/a (CUDA error)");
  CHECK(json_flat_row(doc, "graph").find("device")->is(sptest::json::type::null));
  CHECK(json_flat_row(doc, "mixed").find("device")->find("captured")->text == "1");
}

TEST_CASE("a name whose device time was both captured and failed shows the same reason in every output") {
  const auto r = build({"both"}, {{with_device_status(host_record(0, 0, 0, 10), device_status::captured),
                                   with_device_status(host_record(0, 0, 20, 30), device_status::invalid)}});
  const std::string table_line = flat_table_line(r, "both");
  sptest::csv_rows rows;
  const std::string csv_status = csv_cell(rows, csv_flat_row(r, "both", rows), "device_status");
  sptest::json doc;
  std::string err;
  REQUIRE_MESSAGE(sptest::parse_json(r.json(), doc, err), err);
  const std::string json_status = json_flat_row(doc, "both").find("device_status")->text;
  CHECK(csv_status == json_status);
  CHECK_MESSAGE(table_line.find(csv_status) != std::string::npos,
                "the table says '" << table_line << "' but CSV and JSON say '" << csv_status << "'");
}

TEST_CASE("Time % of the flat rows adds up to 100") {
  enum { A, B, C, D };
  const auto r = build({"A", "B", "C", "D"},
                       {{host_record(B, 1, 10, 40), host_record(C, 1, 40, 47), host_record(A, 0, 0, 100),
                         host_record(D, 0, 100, 103)},
                        {host_record(A, 1, 5, 6), host_record(D, 0, 0, 333)}});
  double sum = 0;
  std::int64_t all_self = 0;
  for (const auto& f : r.flat()) all_self += f.host_self_ns;
  for (const auto& f : r.flat()) {
    sum += f.host_time_pct;
    CHECK(f.host_time_pct == doctest::Approx(100.0 * static_cast<double>(f.host_self_ns) / static_cast<double>(all_self)));
  }
  CHECK(sum == doctest::Approx(100.0).epsilon(1e-12));
  // Rows come heaviest self time first.
  for (std::size_t i = 1; i < r.flat().size(); ++i) CHECK(r.flat()[i - 1].host_self_ns >= r.flat()[i].host_self_ns);
  // The CSV column (3 decimals) adds up too.
  sptest::csv_rows rows;
  std::string err;
  REQUIRE_MESSAGE(sptest::parse_csv(r.csv(), rows, err), err);
  const int pct = sptest::csv_column(rows, "host_time_pct");
  double csv_sum = 0;
  for (const auto& cells : rows)
    if (cells[0] == "flat") csv_sum += std::stod(cells.at(static_cast<std::size_t>(pct)));
  CHECK(csv_sum == doctest::Approx(100.0).epsilon(0.0001));
}

TEST_CASE("duration stats: avg, median, min, max and population stddev") {
  using scopeprof::duration_stats;
  SUBCASE("even count: the median is the nearest-rank p50 (the lower middle), not an average") {
    const auto s = duration_stats::of({40, 10, 30, 20});
    CHECK(s.count == 4);
    CHECK(s.sum == 100);
    CHECK(s.min == 10);
    CHECK(s.max == 40);
    CHECK(s.mean == doctest::Approx(25.0));
    CHECK(s.median == 20);
    CHECK(s.p90 == 40);
    CHECK(s.p99 == 40);
    CHECK(s.stddev == doctest::Approx(std::sqrt(125.0)));
  }
  SUBCASE("odd count") {
    const auto s = duration_stats::of({5, 1, 3});
    CHECK(s.median == doctest::Approx(3.0));
    CHECK(s.mean == doctest::Approx(3.0));
    CHECK(s.stddev == doctest::Approx(std::sqrt(8.0 / 3.0)));
  }
  SUBCASE("one value and none") {
    const auto one = duration_stats::of({7});
    CHECK(one.median == 7);
    CHECK(one.stddev == 0);
    const auto none = duration_stats::of({});
    CHECK(none.count == 0);
    CHECK(none.mean == 0);
    CHECK(none.max == 0);
  }
  SUBCASE("large values keep their precision") {
    const std::int64_t big = 4'000'000'000'000'000'000;  // ~46 days in ns, times 1000
    const auto s = duration_stats::of({big, big + 2});
    CHECK(s.min == big);
    CHECK(s.max == big + 2);
    CHECK(s.sum == 2 * big + 2);
  }
  SUBCASE("in the report and its outputs") {
    const auto r = build({"s"}, {{host_record(0, 0, 0, 10), host_record(0, 0, 100, 120), host_record(0, 0, 200, 230),
                                  host_record(0, 0, 300, 340)}});
    const auto& f = row(r, "s");
    CHECK(f.host.mean == doctest::Approx(25.0));
    CHECK(f.host.median == 20);
    CHECK(f.host.stddev == doctest::Approx(std::sqrt(125.0)));
    sptest::csv_rows rows;
    const auto cells = csv_flat_row(r, "s", rows);
    CHECK(csv_cell(rows, cells, "host_avg_us") == "0.025");
    CHECK(csv_cell(rows, cells, "host_med_us") == "0.020");
    CHECK(csv_cell(rows, cells, "host_p90_us") == "0.040");
    CHECK(csv_cell(rows, cells, "host_self_med_us") == "0.020");
    CHECK(csv_cell(rows, cells, "host_min_us") == "0.010");
    CHECK(csv_cell(rows, cells, "host_max_us") == "0.040");
    CHECK(csv_cell(rows, cells, "host_stddev_us") == "0.011");
    CHECK(csv_cell(rows, cells, "host_total_us") == "0.100");
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(r.json(), doc, err), err);
    const sptest::json* host = json_flat_row(doc, "s").find("host");
    CHECK(host->find("avg")->number() == doctest::Approx(25.0));
    CHECK(host->find("median")->number() == doctest::Approx(20.0));
    CHECK(host->find("p99")->number() == doctest::Approx(40.0));
    CHECK(host->find("self_stats")->find("count")->text == "4");
    CHECK(host->find("min")->text == "10");
    CHECK(host->find("max")->text == "40");
    CHECK(host->find("stddev")->number() == doctest::Approx(11.2));
  }
}

TEST_CASE("the tables' quantiles are within 1/129 of the exact ones; every other statistic is exact") {
  // step { work } repeated with durations spread over five decades; self = step total - work total.
  std::vector<raw_instance> recs;
  std::vector<std::int64_t> step_totals, work_totals, step_selfs;
  std::uint64_t x = 12345;
  std::int64_t t = 0;
  for (int i = 0; i < 5000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const std::int64_t work = 100 + static_cast<std::int64_t>((x >> 33) % 10'000'000);
    const std::int64_t pad = 1 + static_cast<std::int64_t>((x >> 20) % 5000);
    recs.push_back(host_record(1, 1, t + pad, t + pad + work));
    recs.push_back(host_record(0, 0, t, t + 2 * pad + work));
    step_totals.push_back(2 * pad + work);
    work_totals.push_back(work);
    step_selfs.push_back(2 * pad);
    t += 2 * pad + work + 10;
  }
  const auto r = build({"step", "work"}, {recs});
  const auto exact_rank = [](std::vector<std::int64_t> v, double q) {
    std::sort(v.begin(), v.end());
    auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
    k = std::max<std::size_t>(1, std::min(k, v.size()));
    return static_cast<double>(v[k - 1]);
  };
  const auto check_stats = [&](const scopeprof::duration_stats& s, const std::vector<std::int64_t>& values) {
    std::int64_t sum = 0;
    for (auto v : values) sum += v;
    CHECK(s.count == values.size());
    CHECK(s.sum == sum);
    CHECK(s.min == *std::min_element(values.begin(), values.end()));
    CHECK(s.max == *std::max_element(values.begin(), values.end()));
    CHECK(s.mean == doctest::Approx(static_cast<double>(sum) / static_cast<double>(values.size())));
    for (const auto& [q, got] : {std::pair<double, double>{0.5, s.median}, {0.9, s.p90}, {0.99, s.p99}}) {
      const double want = exact_rank(values, q);
      CHECK_MESSAGE(std::abs(got - want) <= want / 129.0, "q=" << q << " got " << got << " want " << want);
    }
  };
  check_stats(row(r, "step").host, step_totals);
  check_stats(row(r, "step").host_self, step_selfs);
  check_stats(row(r, "work").host, work_totals);
  check_stats(row(r, "work").host_self, work_totals);
  CHECK(row(r, "step").device.count == 0);
  // One path per name here: the tree rows carry the same statistics.
  REQUIRE(r.tree().size() == 2);
  check_stats(r.tree()[0].host, step_totals);
  check_stats(r.tree()[1].host_self, work_totals);
  // The histogram behind them: ascending non-empty buckets that hold every call, each value in its bucket.
  const auto& bins = row(r, "work").host_histogram;
  std::uint64_t binned = 0;
  for (std::size_t i = 0; i < bins.size(); ++i) {
    CHECK(bins[i].count > 0);
    CHECK(bins[i].lower_ns <= bins[i].upper_ns);
    CHECK(bins[i].upper_ns - bins[i].lower_ns <= bins[i].lower_ns / 64);
    if (i) CHECK(bins[i - 1].upper_ns < bins[i].lower_ns);
    binned += bins[i].count;
  }
  CHECK(binned == work_totals.size());
  for (const auto v : {work_totals.front(), work_totals.back()}) {
    const auto in = std::find_if(bins.begin(), bins.end(), [&](const auto& b) { return b.lower_ns <= v && v <= b.upper_ns; });
    CHECK(in != bins.end());
  }
  CHECK(row(r, "work").device_histogram.empty());
  CHECK(r.json().find("\"histogram\":[[") != std::string::npos);
  // Every output says which figures are approximate.
  CHECK(r.to_string().find("within 1%") != std::string::npos);
  CHECK(r.csv().find("meta,,,,quantiles,") != std::string::npos);
  CHECK(r.json().find("\"quantiles\":{\"fields\":[\"median\",\"p90\",\"p99\"]") != std::string::npos);
}
