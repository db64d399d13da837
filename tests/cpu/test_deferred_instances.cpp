// The report's instances built on the first instances() call: collect() hands the timeline over as tick
// records and takes its tables from the fold; the instances built later are those the records would give
// at once, copies of the report share them, and concurrent first calls build them once.
#include "internals.hpp"
#include "raw_builders.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::device_status;
using scopeprof::scope_instance;
using scopeprof::detail::positioned_device;
using scopeprof::detail::positioned_work;
using scopeprof::detail::raw_instance;
using scopeprof::detail::raw_snapshot;
using scopeprof::detail::tick_record;
using scopeprof::detail::tick_records;

// The same scopes as raw_instance records (a snapshot built by hand) and as tick records (as collect()
// hands them over, ticks = ns): one thread, post-order, a device span, a captured scope and declared work.
std::vector<raw_instance> as_records() {
  std::vector<raw_instance> r;
  r.push_back(sptest::device_timed(sptest::host_record(1, 1, 10, 40), 0, 7, 100, 130));
  raw_instance captured = sptest::with_device_status(sptest::host_record(1, 1, 50, 60), device_status::captured);
  captured.device_id = 0;
  r.push_back(captured);
  raw_instance outer = sptest::device_timed(sptest::host_record(0, 0, 0, 100), 0, 7, 90, 200);
  outer.has_work = true;
  outer.work_bytes = 4096;
  outer.work_flops = 512;
  r.push_back(outer);
  r.push_back(sptest::host_record(1, 0, 120, 125));
  return r;
}

tick_records as_ticks(const std::vector<raw_instance>& recs) {
  tick_records t;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const raw_instance& x = recs[i];
    t.records.push_back({static_cast<std::uint64_t>(x.host_begin_ns), static_cast<std::uint64_t>(x.host_end_ns), x.site, x.depth});
    if (x.device != device_status::not_timed)
      t.device.push_back({i, x.device, x.device_id, x.stream, x.device_begin_ns, x.device_end_ns});
    if (x.has_work) t.work.push_back({i, x.work_bytes, x.work_flops});
  }
  return t;
}

raw_snapshot snapshot(bool ticks) {
  raw_snapshot s;
  sptest::add_sites(s, {"outer", "inner"}, "deferred.cpp");
  sptest::add_thread(s, as_records(), 0, 0);
  if (ticks) {
    s.threads[0].ticks = as_ticks(s.threads[0].records);
    s.threads[0].records.clear();
    s.folded.present = true;  // collect()'s snapshots always carry the fold; an empty one here
    s.folded.device = true;
  }
  return s;
}

void check_same(const scope_instance& a, const scope_instance& b) {
  CHECK(a.site == b.site);
  CHECK(a.thread == b.thread);
  CHECK(a.parent == b.parent);
  CHECK(a.depth == b.depth);
  CHECK(a.orphan == b.orphan);
  CHECK(a.host_begin_ns == b.host_begin_ns);
  CHECK(a.host_end_ns == b.host_end_ns);
  CHECK(a.host_self_ns == b.host_self_ns);
  CHECK(a.device == b.device);
  CHECK(a.device_id == b.device_id);
  CHECK(a.stream == b.stream);
  CHECK(a.device_begin_ns == b.device_begin_ns);
  CHECK(a.device_end_ns == b.device_end_ns);
  CHECK(a.device_self_ns == b.device_self_ns);
  CHECK(a.has_work == b.has_work);
  CHECK(a.work_bytes == b.work_bytes);
  CHECK(a.work_flops == b.work_flops);
}

}  // namespace

TEST_CASE("deferred instances: tick records give, on the first instances() call, the instances raw records give at once") {
  const scopeprof::report eager = scopeprof::detail::build_report(snapshot(false));
  const scopeprof::report deferred = scopeprof::detail::build_report(snapshot(true));
  CHECK(deferred.timeline().kept == 0);  // a snapshot with a fold says what its timeline kept itself
  REQUIRE(eager.instances().size() == 4);
  REQUIRE(deferred.instances().size() == eager.instances().size());
  for (std::size_t i = 0; i < eager.instances().size(); ++i) {
    CAPTURE(i);
    check_same(deferred.instances()[i], eager.instances()[i]);
  }
  // The outer scope's host self excludes its two children; its device self, the child's span on stream 7.
  CHECK(deferred.instances()[0].host_self_ns == 100 - 30 - 10);
  CHECK(deferred.instances()[0].device_self_ns == 110 - 30);
  CHECK_FALSE(deferred.instances_lost());
  // The devices the deferred instances name are the report's before any instance is built.
  const scopeprof::report again = scopeprof::detail::build_report(snapshot(true));
  REQUIRE(again.process().devices.size() == 1);
  CHECK(again.process().devices[0] == 0);
}

TEST_CASE("deferred instances: a copy shares them, and threads asking at once build them once") {
  scopeprof::reset();
  {
    PROF_SCOPE("deferred outer");
    for (int i = 0; i < 1000; ++i) {
      PROF_SCOPE("deferred inner");
    }
  }
  const scopeprof::report r = scopeprof::collect();
  const scopeprof::report copy = r;  // before anyone asked
  REQUIRE(r.timeline().kept == 1001);
  std::vector<const scope_instance*> seen(4, nullptr);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < seen.size(); ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < static_cast<int>(seen.size())) std::this_thread::yield();
      seen[t] = (t % 2 ? copy : r).instances().data();
    });
  for (auto& th : threads) th.join();
  for (const scope_instance* p : seen) CHECK(p == r.instances().data());
  REQUIRE(r.instances().size() == 1001);
  CHECK(copy.instances().size() == 1001);
  // The tables came from the fold without them, and agree: 1000 inner calls under the outer one, whose
  // self time and its children's totals add up to its total.
  const scopeprof::flat_row* inner = r.find("deferred inner");
  const scopeprof::flat_row* outer = r.find("deferred outer");
  REQUIRE(inner != nullptr);
  REQUIRE(outer != nullptr);
  CHECK(inner->calls == 1000);
  CHECK(outer->host_self_ns + inner->host_total_ns == outer->host_total_ns);
  std::int64_t inner_total = 0;
  for (const scope_instance& s : r.instances())
    if (r.sites()[s.site].name == "deferred inner") inner_total += s.host_total_ns();
  // Each instance converts its own begin and end; the table converts the sum: at most 1 ns apart per call.
  CHECK(std::llabs(inner_total - inner->host_total_ns) <= 1000);
  scopeprof::reset();
}
