// Declared work (PROF_SCOPE_WORK, add_work): the join of each declaration to its scope, the sums in the
// rows under both ways the tables are built (from the timeline's records and from the fold), the rates
// derived from them in every output, and what happens to work that has no scope to go to.
#include "csv_check.hpp"
#include "json_check.hpp"
#include "raw_builders.hpp"
#include "report_lookup.hpp"
#include "trace_check.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::declared_work;
using scopeprof::work_basis;
using scopeprof::detail::work_mark;
using scopeprof::detail::work_match;

// A report of four sites with known work: "tail" (two device-timed instances), "linear" (host only, FLOPs
// only), "capt" (device time n/a: captured), "plain" (no work), all on thread 0; with `peaks`, device 0's
// peaks are known: spec 3000 GB/s and 50 TFLOP/s, measured 2500 GB/s (no measured FLOP rate), L2 50 MB.
scopeprof::report synthetic_work_report(bool peaks = false) {
  auto tail1 = sptest::device_timed(sptest::host_record(0, 1, 100, 200), 0, 7, 1000, 2000);
  auto tail2 = sptest::device_timed(sptest::host_record(0, 1, 300, 400), 0, 7, 3000, 6000);
  for (auto* t : {&tail1, &tail2}) {
    t->has_work = true;
    t->work_bytes = 3e6;
    t->work_flops = 1e6;
  }
  auto linear = sptest::host_record(1, 1, 500, 2500);
  linear.has_work = true;
  linear.work_flops = 4e6;
  auto capt = sptest::with_device_status(sptest::host_record(2, 1, 2600, 2700), scopeprof::device_status::captured);
  capt.has_work = true;
  capt.work_bytes = 5e5;
  auto plain = sptest::host_record(3, 0, 0, 10000);
  auto snap = sptest::one_thread_snapshot("w.cpp", {"tail", "linear", "capt", "plain"}, {tail1, tail2, linear, capt, plain});
  if (peaks) {
    scopeprof::device_peak p;
    p.device = 0;
    p.name = "Test GPU";
    p.cc_major = 9;
    p.l2_bytes = 50'000'000;
    p.spec_bytes_per_s = 3e12;
    p.spec_flops_per_s = 50e12;
    p.measured_bytes_per_s = 2.5e12;
    p.measured_note = "test";
    snap.peaks.push_back(p);
  }
  return scopeprof::detail::build_report(std::move(snap));
}

const sptest::json* member(const sptest::json& o, const char* key) {
  const sptest::json* v = o.find(key);
  REQUIRE_MESSAGE(v != nullptr, key);
  return v;
}

const sptest::json& json_row(const sptest::json& doc, const char* table, const std::string& name) {
  for (const auto& row : member(doc, table)->items)
    if (member(row, "name")->text == name) return row;
  FAIL("no row " << name);
  return doc;
}

void declare_in_loops(int n) {
  for (int i = 0; i < n; ++i) {
    PROF_SCOPE("outer");
    {
      PROF_SCOPE_WORK("work", 100, 50);
      { PROF_SCOPE("child"); }
      scopeprof::add_work(1, 2);  // after the child ended: to "work" again
    }
    PROF_SCOPE_DYN_WORK(std::string("dyn"), 7, 0);
  }
}

}  // namespace

TEST_CASE("declared work: rates over device span, host time or none, exact in every output") {
  const scopeprof::report r = synthetic_work_report();
  const declared_work& tail = sptest::row(r, "tail").work;
  CHECK(tail.calls == 2);
  CHECK(tail.device_calls == 2);
  CHECK(tail.bytes == 6e6);
  CHECK(tail.device_ns == 4000);
  CHECK(tail.device == 0);
  const scopeprof::work_rate tr = scopeprof::rate_of(tail);
  CHECK(tr.basis == work_basis::device);
  CHECK(tr.bytes_per_s == doctest::Approx(1.5e12).epsilon(1e-12));
  CHECK(tr.flops_per_s == doctest::Approx(0.5e12).epsilon(1e-12));
  CHECK(tr.intensity == doctest::Approx(1.0 / 3.0).epsilon(1e-12));

  const scopeprof::work_rate lr = scopeprof::rate_of(sptest::row(r, "linear").work);
  CHECK(lr.basis == work_basis::host);
  CHECK(std::isnan(lr.bytes_per_s));  // no bytes declared: no bandwidth, never 0 GB/s
  CHECK(lr.flops_per_s == doctest::Approx(2e12).epsilon(1e-12));
  CHECK(std::isnan(lr.intensity));

  const declared_work& capt = sptest::row(r, "capt").work;
  CHECK(capt.unmeasured == 1);
  const scopeprof::work_rate cr = scopeprof::rate_of(capt);
  CHECK(cr.basis == work_basis::none);  // a captured scope's host time is not its device time: no number
  CHECK(std::isnan(cr.bytes_per_s));
  CHECK(!sptest::row(r, "plain").work.any());
  // The tree rows hold the same sums per path.
  for (const auto& t : r.tree())
    if (t.name == "tail") CHECK(t.work.device_bytes == 6e6);

  SUBCASE("text table") {
    const std::string text = r.to_string();
    REQUIRE(sptest::contains(text, "Declared work"));
    CHECK(sptest::contains(text, "1500.0"));   // GB/s of tail
    CHECK(sptest::contains(text, "2.000"));    // TFLOP/s of linear
    CHECK(sptest::contains(text, "n/a (device time not measured"));
  }
  SUBCASE("CSV") {
    sptest::csv_rows rows;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_csv(r.csv(), rows, err), err);
    const int gbs = sptest::csv_column(rows, "achieved_gb_per_s");
    const int tfs = sptest::csv_column(rows, "achieved_tflop_per_s");
    const int ai = sptest::csv_column(rows, "declared_flop_per_byte");
    const int basis = sptest::csv_column(rows, "work_basis");
    REQUIRE(gbs > 0);
    int seen = 0;
    for (const auto& row : rows) {
      REQUIRE(row.size() == rows[0].size());
      if (row[0] != "flat") continue;
      if (row[4] == "tail") {
        CHECK(row[gbs] == "1500.000");
        CHECK(row[tfs] == "0.500000");
        CHECK(row[ai] == "0.3333");
        CHECK(row[basis] == "device");
        ++seen;
      } else if (row[4] == "linear") {
        CHECK(row[gbs].empty());
        CHECK(row[tfs] == "2.000000");
        CHECK(row[basis] == "host");
        ++seen;
      } else if (row[4] == "capt") {
        CHECK(row[basis] == "n/a");
        CHECK(row[gbs].empty());
        ++seen;
      } else if (row[4] == "plain") {
        CHECK(row[basis].empty());
        ++seen;
      }
    }
    CHECK(seen == 4);
  }
  SUBCASE("JSON") {
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(r.json(), doc, err), err);
    const sptest::json& w = *member(json_row(doc, "flat", "tail"), "work");
    CHECK(member(w, "bytes_per_s")->number() == 1.5e12);
    CHECK(member(w, "basis")->text == "device");
    CHECK(member(w, "device_span")->text == "4000");
    CHECK(member(*member(json_row(doc, "flat", "linear"), "work"), "bytes_per_s")->is(sptest::json::type::null));
    CHECK(member(json_row(doc, "flat", "plain"), "work")->is(sptest::json::type::null));
    CHECK(member(json_row(doc, "tree", "tail"), "work")->is(sptest::json::type::object));
  }
  SUBCASE("Chrome trace: per-instance cells in scopeprofScopes") {
    const std::string text = r.chrome_trace();
    CHECK(sptest::check_chrome_trace(r, text) == "");
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(text, doc, err), err);
    const sptest::json& table = *member(doc, "scopeprofScopes");
    std::vector<std::string> fields;
    for (const auto& f : member(table, "fields")->items) fields.push_back(f.text);
    REQUIRE(fields.size() == 11);
    CHECK(fields[7] == "declared_bytes");
    CHECK(fields[9] == "achieved_gb_per_s");
    std::vector<double> gbs;
    for (const auto& row : member(table, "rows")->items) {
      REQUIRE(row.items.size() == fields.size());
      if (row.items[9].is(sptest::json::type::number)) gbs.push_back(row.items[9].number());
    }
    // The two tail instances: 3e6 bytes over 1000 and 3000 ns.
    REQUIRE(gbs.size() == 2);
    CHECK(gbs[0] == 3000.0);
    CHECK(gbs[1] == 1000.0);
  }
}

TEST_CASE("declared work against the device's peaks: percent of spec and measured, the bound, the L2 note") {
  const scopeprof::report plain = synthetic_work_report(false);
  CHECK(!sptest::contains(plain.to_string(), "%BW spec"));  // no peaks: no percentage columns
  const scopeprof::report r = synthetic_work_report(true);
  const declared_work& tail = sptest::row(r, "tail").work;
  const scopeprof::work_vs_peak v = scopeprof::against_peak(scopeprof::rate_of(tail), tail, r.peak_of(0));
  REQUIRE(v.valid);
  CHECK(v.pct_bw_spec == doctest::Approx(50.0).epsilon(1e-12));
  CHECK(v.pct_bw_measured == doctest::Approx(60.0).epsilon(1e-12));
  CHECK(v.pct_flops_spec == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(std::isnan(v.pct_flops_measured));
  CHECK(v.ridge == doctest::Approx(50.0 / 3.0));  // spec: the measured FLOP rate is missing
  CHECK(std::string(v.bound) == "memory");
  CHECK(v.fits_l2);  // 3 MB per call in a 50 MB L2
  // Host-time rates are never set against a device's peak.
  const declared_work& linear = sptest::row(r, "linear").work;
  CHECK(!scopeprof::against_peak(scopeprof::rate_of(linear), linear, r.peak_of(0)).valid);

  const std::string text = r.to_string();
  CHECK(sptest::contains(text, "%BW spec"));
  CHECK(sptest::contains(text, "50.0"));
  CHECK(sptest::contains(text, "60.0"));
  CHECK(sptest::contains(text, "device 0 (Test GPU"));
  CHECK(sptest::contains(text, "tail declares no more bytes per call than the L2 cache holds"));
  sptest::csv_rows rows;
  std::string err;
  REQUIRE_MESSAGE(sptest::parse_csv(r.csv(), rows, err), err);
  const int spec = sptest::csv_column(rows, "pct_peak_bw_spec");
  const int bound = sptest::csv_column(rows, "roofline_bound");
  REQUIRE(spec > 0);
  bool seen = false, meta = false;
  for (const auto& row : rows) {
    REQUIRE(row.size() == rows[0].size());
    if (row[0] == "flat" && row[4] == "tail") {
      CHECK(row[spec] == "50.00");
      CHECK(row[bound] == "memory");
      seen = true;
    }
    if (row[0] == "meta" && row[4] == "device0_spec_gb_per_s") meta = row[5] == "3000.0";
  }
  CHECK(seen);
  CHECK(meta);
  sptest::json doc;
  REQUIRE_MESSAGE(sptest::parse_json(r.json(), doc, err), err);
  const sptest::json& w = *member(json_row(doc, "flat", "tail"), "work");
  CHECK(member(w, "pct_bw_measured")->number() == doctest::Approx(60.0));
  CHECK(member(w, "bound")->text == "memory");
  const sptest::json& peaks = *member(doc, "device_peaks");
  REQUIRE(peaks.items.size() == 1);
  CHECK(member(peaks.items[0], "measured_flops_per_s")->is(sptest::json::type::null));
  CHECK(member(peaks.items[0], "spec_bytes_per_s")->number() == 3e12);
}

TEST_CASE("PROF_SCOPE_WORK and add_work() sum exactly into the scope they name, with and without a timeline") {
  for (const char* policy : {"all", "off"}) {
    CAPTURE(policy);
    scopeprof::reset();
    REQUIRE(scopeprof::set_trace_policy(policy));
    declare_in_loops(1000);
    const scopeprof::report r = scopeprof::collect();
    const declared_work& w = sptest::row(r, "work").work;
    CHECK(w.calls == 1000);
    CHECK(w.bytes == 101000);
    CHECK(w.flops == 52000);
    CHECK(w.host_calls == 1000);  // no GPU here: host time is the basis
    CHECK(sptest::row(r, "dyn").work.bytes == 7000);
    CHECK(!sptest::row(r, "outer").work.any());
    CHECK(!sptest::row(r, "child").work.any());
    CHECK(r.work().declared == 3000);
    CHECK(r.work().lost + r.work().no_scope + r.work().rejected + r.work().pending == 0);
  }
  REQUIRE(scopeprof::set_trace_policy("all"));
  scopeprof::reset();
}

TEST_CASE("work with no scope, with bad values, or on a disabled profiler adds nothing and is counted") {
  scopeprof::reset();
  scopeprof::add_work(5, 5);  // no scope open
  {
    PROF_SCOPE("bad");
    scopeprof::add_work(-1, 0);
    scopeprof::add_work(std::numeric_limits<double>::quiet_NaN(), 1);
    scopeprof::add_work(1, std::numeric_limits<double>::infinity());
  }
  { PROF_SCOPE_WORK("bad_entry", -5, 0); }
  std::thread([] { scopeprof::add_work(1, 1); }).join();  // a thread that never opened a scope
  scopeprof::set_enabled(false);
  { PROF_SCOPE_WORK("while_off", 1, 1); }
  scopeprof::add_work(1, 1);
  scopeprof::set_enabled(true);
  const scopeprof::report r = scopeprof::collect();
  CHECK(r.work().no_scope == 2);
  CHECK(r.work().rejected == 4);
  CHECK(r.work().declared == 0);
  CHECK(!sptest::row(r, "bad").work.any());
  CHECK(sptest::flat(r, "while_off") == nullptr);
  CHECK(sptest::contains(r.warnings(), "declared work not added"));
  CHECK(!sptest::contains(r.to_string(), "Declared work ("));  // no row declared any: no work table
}

TEST_CASE("work still pending while its scope is open is counted as pending, then joins the scope") {
  scopeprof::reset();
  {
    PROF_SCOPE("long");
    scopeprof::add_work(10, 0);
    const scopeprof::report during = scopeprof::collect();
    CHECK(during.work().pending == 1);
    CHECK(sptest::flat(during, "long") == nullptr);
  }
  const scopeprof::report after = scopeprof::collect();
  CHECK(after.work().pending == 0);
  CHECK(after.work().declared == 1);
  CHECK(sptest::row(after, "long").work.bytes == 10);
}

TEST_CASE("work declared on a dropped scope is lost, never another scope's") {
  scopeprof::reset();
  const std::uint64_t room = 1000;
  scopeprof::set_max_records(scopeprof::detail::the_registry().allocated_records.load() + room);
  std::thread([] {
    for (int i = 0; i < 5000; ++i) {
      PROF_SCOPE_WORK("capped_work", 8, 0);
    }
  }).join();
  scopeprof::set_max_records(4194304);
  const scopeprof::report r = scopeprof::collect();
  REQUIRE(r.counts().dropped > 0);
  const scopeprof::flat_row& row = sptest::row(r, "capped_work");
  CHECK(row.work.calls == row.calls);  // every recorded scope has its own work, and only that
  CHECK(row.work.bytes == 8.0 * static_cast<double>(row.calls));
  CHECK(r.work().declared == r.counts().recorded);
  CHECK(r.work().declared + r.work().lost + r.work().pending == 5000);
  CHECK(r.work().lost + r.work().pending == r.counts().dropped);
}

TEST_CASE("the join: a mark goes to the first record at its depth that spans it, else it is lost") {
  using chunk = scopeprof::detail::work_chunk;
  chunk* c = chunk::make(16);
  REQUIRE(c != nullptr);
  std::vector<chunk*> chunks{c};
  // depth 1, declared at t=50 before record 0: the scope [40, 60] at depth 1 (record 1, after a child at
  // depth 2) is it. depth 1 at t=70 before record 2: its scope was dropped, record 2 is a sibling
  // [80, 90] that began later. depth 2 at t=95 (record 3): never ends at depth 2; the parent at depth 0
  // (record 3) settles it as lost.
  c->items()[0] = work_mark{0, 50, 10, 1, 1, 0};
  c->items()[1] = work_mark{0, 55, 5, 0, 1, 0};  // same scope again: merged with the first
  c->items()[2] = work_mark{2, 70, 99, 0, 1, 0};
  c->items()[3] = work_mark{3, 95, 77, 0, 2, 0};
  const std::uint64_t count = 4;
  work_match m;
  struct rec { std::uint32_t depth; std::uint64_t begin, end; };
  const rec records[] = {{2, 51, 52}, {1, 40, 60}, {1, 80, 90}, {0, 0, 100}};
  std::vector<scopeprof::detail::joined_work> got;
  for (std::uint64_t i = 0; i < 4; ++i) {
    m.feed(chunks, count, i);
    got.push_back(m.take(records[i].depth, records[i].begin, records[i].end));
  }
  CHECK(!got[0].has);
  CHECK(got[1].has);
  CHECK(got[1].bytes == 15);
  CHECK(got[1].flops == 1);
  CHECK(!got[2].has);
  CHECK(!got[3].has);
  CHECK(m.declared() == 2);
  CHECK(m.lost() == 2);
  CHECK(m.pending_marks() == 0);
  CHECK(m.cursor() == 4);
  chunk::destroy(c);
}
