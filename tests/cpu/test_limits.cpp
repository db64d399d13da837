// The record cap: past it scopes are counted as dropped, every output says so, reset() makes room again,
// and memory stays bounded however many scopes run.
#include "csv_check.hpp"
#include "json_check.hpp"

#include "process_stats.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

constexpr std::uint64_t default_cap = 4194304;

// Restores the default cap however the test ends.
struct cap_guard {
  ~cap_guard() { scopeprof::set_max_records(default_cap); }
};

// Records already held (current chunks of live threads, anything reset() keeps): a cap is only meaningful
// relative to this.
std::uint64_t held_records() { return scopeprof::detail::the_registry().allocated_records.load(); }

void run_scopes(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    PROF_SCOPE("capped");
  }
}

// On a fresh thread: it holds no chunk yet, so everything it records counts against the cap.
void run_scopes_on_new_thread(std::uint64_t n) {
  std::thread t([n] { run_scopes(n); });
  t.join();
}

}  // namespace

TEST_CASE("past the record cap scopes are dropped and counted, every output shows it, reset() makes room") {
  cap_guard guard;
  scopeprof::reset();
  const std::uint64_t room = 1000;
  const std::uint64_t cap = held_records() + room;
  scopeprof::set_max_records(cap);
  run_scopes_on_new_thread(5000);

  const scopeprof::report r = scopeprof::collect();
  const auto& c = r.counts();
  CHECK(c.entered == 5000);
  CHECK(c.dropped > 0);
  CHECK(c.recorded > 0);
  CHECK(c.recorded <= room);
  CHECK(c.entered == c.recorded + c.dropped);
  CHECK(r.instances().size() == c.recorded);
  CHECK(held_records() <= cap);

  SUBCASE("the table header says DROPPED") {
    const std::string table = r.to_string();
    CHECK(table.find(std::to_string(c.dropped) + " DROPPED") != std::string::npos);
    CHECK(r.warnings().find("dropped") != std::string::npos);
  }
  SUBCASE("the CSV has a dropped meta row") {
    sptest::csv_rows rows;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_csv(r.csv(), rows, err), err);
    bool found = false;
    for (const auto& row : rows)
      if (row[0] == "meta" && row.at(4) == "dropped") found = row.at(5) == std::to_string(c.dropped);
    CHECK(found);
  }
  SUBCASE("the JSON counts say dropped") {
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(r.json(), doc, err), err);
    CHECK(doc.find("counts")->find("dropped")->text == std::to_string(c.dropped));
    CHECK(doc.find("warnings")->text.find("dropped") != std::string::npos);
  }
  SUBCASE("the Chrome trace otherData says dropped") {
    sptest::json doc;
    std::string err;
    REQUIRE_MESSAGE(sptest::parse_json(r.chrome_trace(), doc, err), err);
    CHECK(doc.find("otherData")->find("dropped")->text == std::to_string(c.dropped));
  }
  SUBCASE("after reset() recording works again") {
    scopeprof::reset();
    run_scopes_on_new_thread(100);
    const scopeprof::report again = scopeprof::collect();
    CHECK(again.counts().recorded == 100);
    CHECK(again.counts().dropped == 0);
  }
  SUBCASE("raising the cap lets a thread that found the buffer full record again") {
    scopeprof::scope_counts full, raised;
    std::thread t([&] {
      run_scopes(5000);  // fills what is left of the cap, then drops
      full = scopeprof::collect().counts();
      scopeprof::set_max_records(default_cap);
      run_scopes(10);
      raised = scopeprof::collect().counts();
    });
    t.join();
    CHECK(full.dropped > c.dropped);
    CHECK(raised.dropped == full.dropped);
    CHECK(raised.recorded == full.recorded + 10);
  }
}

TEST_CASE("reset() gives back the memory of threads that have exited") {
  cap_guard guard;
  scopeprof::reset();
  // Room for 8 first chunks; 8 short-lived threads take it all, each leaving a partly used chunk behind.
  const std::uint64_t cap = held_records() + 8 * scopeprof::detail::min_chunk_records;
  scopeprof::set_max_records(cap);
  for (int i = 0; i < 8; ++i) run_scopes_on_new_thread(1);
  CHECK(scopeprof::collect().counts().recorded == 8);
  // Their records are discarded and the threads are gone: nothing holds that memory any more.
  scopeprof::reset();
  run_scopes_on_new_thread(1);
  const scopeprof::report r = scopeprof::collect();
  CHECK_MESSAGE(r.counts().recorded == 1, "records still held after reset(): " << held_records() - (cap - 8 * 64));
  CHECK(r.counts().dropped == 0);
}

TEST_CASE("memory stays bounded: 2M scopes under a 100k record cap") {
  cap_guard guard;
  scopeprof::reset();
  const long before = sptest::vm_rss_kib();
  REQUIRE(before > 0);
  const std::uint64_t room = 100'000;
  const std::uint64_t cap = held_records() + room;
  scopeprof::set_max_records(cap);
  run_scopes_on_new_thread(2'000'000);
  const long after = sptest::vm_rss_kib();
  const scopeprof::report r = scopeprof::collect();
  CHECK(r.counts().entered == 2'000'000);
  // The cap bounds the records waiting for the drain and the timeline; the tables count every scope
  // the drain folded (all of them, unless it fell behind: those are dropped and counted).
  CHECK(r.instances().size() <= cap);
  CHECK(r.counts().recorded + r.counts().dropped == 2'000'000);
  CHECK(r.timeline().kept + r.timeline().left_out == r.counts().recorded);
  std::uint64_t calls = 0;
  for (const auto& f : r.flat()) calls += f.calls;
  CHECK(calls == r.counts().recorded);
  // Unbounded would be 2M x 24 bytes = 48 MB.
  CHECK_MESSAGE(after - before < 20 * 1024, "VmRSS grew by " << (after - before) << " KiB");
  scopeprof::reset();
}
