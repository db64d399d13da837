// The drain's device side (detail/device_fold.hpp), without a GPU: scopes get device records the way a
// device-timed scope stores them (right after its host record), and a stand-in for the CUDA backend's
// hooks "finishes" them when the test says the GPU has. Checked: spans fold with their scopes into every
// table under any timeline policy, a background pass waits for the GPU and never for a lock, a complete
// pass folds what still runs without a span and hands those events back, the device log's memory goes
// back as the drain moves on, and spans are placed on the host timeline only while a timeline may keep them.
#include "json_check.hpp"
#include "report_lookup.hpp"
#include "temp_files.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using namespace scopeprof;
using sptest::flat;

// The stand-in GPU: records of host index below `finished_below` are done, but for `still_running`; with
// `finish_on_wait` a complete pass's bounded wait finishes everything. It counts the calls that asked for
// places on the host timeline and those that asked for spans only.
std::atomic<std::uint64_t> finished_below{0};
std::atomic<std::uint64_t> still_running{detail::no_record};
std::atomic<bool> finish_on_wait{false};
std::atomic<std::uint64_t> retired{0};
std::atomic<bool> replayed{false};  // captured scopes: the graph has been replayed
std::atomic<std::uint64_t> placing_calls{0}, span_only_calls{0};

// A record the stand-in finished: placed as add_device() said, or (as the CUDA backend does without
// `place`) its span alone.
void finish(detail::device_record& x, bool place) {
  if (!place) {
    x.end_ns -= x.begin_ns;
    x.begin_ns = 0;
  }
  x.state = place ? detail::dev_resolved : detail::dev_span_only;
}

void fake_resolve(std::vector<detail::device_record*>& records, const std::vector<std::size_t>&, bool wait,
                  bool place) noexcept {
  (place ? placing_calls : span_only_calls).fetch_add(1);
  for (detail::device_record* x : records) {
    if (x->capture_id != 0) {
      if (x->state != detail::dev_pending && x->state != detail::dev_captured) continue;
      if (replayed.load()) finish(*x, place);
      else x->state = detail::dev_captured;
    } else if (x->state == detail::dev_pending && x->host_index != still_running.load() &&
               (x->host_index < finished_below.load() || (wait && finish_on_wait.load()))) {
      finish(*x, place);
    }
  }
}
void fake_retire(const std::vector<detail::device_record*>& records) noexcept { retired.fetch_add(records.size()); }
constexpr detail::device_drain_hooks fake_hooks{&fake_resolve, &fake_retire};

// Installs the stand-in for one test, with a policy, and puts everything back after.
struct fake_gpu {
  const detail::device_drain_hooks* saved = detail::g_device_drain.load();
  std::string policy = collect().timeline().policy;
  explicit fake_gpu(const char* trace) {
    reset();
    finished_below = ~std::uint64_t{0};
    still_running = detail::no_record;
    finish_on_wait = false;
    retired = 0;
    replayed = false;
    detail::g_device_drain.store(&fake_hooks);
    REQUIRE(set_trace_policy(trace));  // (its pass may run under the policy before)
    placing_calls = 0;
    span_only_calls = 0;
  }
  ~fake_gpu() {
    reset();
    detail::g_device_drain.store(saved);
    set_trace_policy(policy);
  }
};

detail::thread_buffer& this_thread() {
  { PROF_SCOPE("devfold attach"); }
  return *detail::t_buffer;
}

// The newest host record of this thread gets a device record with span [begin, end) on stream 1, pending
// (capture: recorded into that graph capture).
void add_device(std::int64_t begin, std::int64_t end, std::uint64_t capture = 0) {
  detail::thread_buffer& b = *detail::t_buffer;
  detail::device_record* slot = detail::device_slot(b);
  REQUIRE(slot != nullptr);
  slot->host_index = b.records.published.load() - 1;
  slot->begin_event = slot->end_event = nullptr;
  slot->stream = reinterpret_cast<void*>(std::uintptr_t{1});
  slot->capture_id = capture;
  slot->device = 0;
  slot->reference = 0;
  slot->state = detail::dev_pending;
  slot->begin_ns = begin;
  slot->end_ns = end;
  detail::device_commit(b);
}

// `n` steps: outer [T, T+100) around three inner scopes of 20 ns each, one after the other on its stream, and one
// host-only scope; device self of outer is 40 ns, of each inner 20 ns.
void device_steps(int n) {
  for (int i = 0; i < n; ++i) {
    const std::int64_t t = 1'000'000 + std::int64_t{1000} * i;
    {
      PROF_SCOPE("devfold outer");
      for (int k = 1; k <= 3; ++k) {
        { PROF_SCOPE("devfold inner"); }
        add_device(t + 25 * k, t + 25 * k + 20);
      }
      { PROF_SCOPE("devfold host only"); }
    }
    add_device(t, t + 100);
  }
}


void pass(detail::pass_scope scope) {
  detail::registry& r = detail::the_registry();
  std::lock_guard<std::mutex> serial(r.collect_mu);
  detail::drain_pass(r, detail::the_drain(), detail::view_registry(r), detail::pass_kind::fold, scope);
}

std::uint64_t folded_of(const detail::thread_buffer& b) {
  std::lock_guard<std::mutex> serial(detail::the_registry().collect_mu);
  const auto& threads = detail::the_drain().threads;
  const auto it = threads.find(&b);
  return it == threads.end() ? 0 : it->second.folded;
}

void check_device_tables(const report& r, std::uint64_t steps) {
  const flat_row* outer = flat(r, "devfold outer");
  const flat_row* inner = flat(r, "devfold inner");
  const flat_row* host = flat(r, "devfold host only");
  REQUIRE(outer != nullptr);
  REQUIRE(inner != nullptr);
  REQUIRE(host != nullptr);
  CHECK(outer->calls == steps);
  CHECK(outer->device_calls == steps);
  CHECK(outer->device_total_ns == static_cast<std::int64_t>(100 * steps));
  CHECK(outer->device_self_ns == static_cast<std::int64_t>(40 * steps));
  CHECK(outer->device.max == 100);
  CHECK(inner->device_calls == 3 * steps);
  CHECK(inner->device_self_ns == static_cast<std::int64_t>(60 * steps));
  CHECK(host->device_calls == 0);
  // The tree: outer > {inner, host only}.
  for (const auto& t : r.tree())
    if (t.name == "devfold outer") CHECK(t.device_self_ns == static_cast<std::int64_t>(40 * steps));
}

}  // namespace

TEST_CASE("drain, device: every scope's span is folded with it, whatever the timeline keeps") {
  for (const char* trace : {"last:50", "off", "all"}) {
    const std::string policy_text = trace;
    CAPTURE(policy_text);
    fake_gpu gpu(trace);
    detail::thread_buffer& b = this_thread();
    const std::uint64_t held_before = detail::the_registry().device_records_held.load();
    device_steps(3000);  // 15000 scopes, 12000 with device records: several device chunks
    const report r = collect();
    check_device_tables(r, 3000);
    CHECK(retired.load() == 0);
    // The device log went back as it was folded: at most the chunk being written stays.
    {
      std::lock_guard<std::mutex> serial(detail::the_registry().collect_mu);  // the floor is the drain's
      CHECK(b.device.floor == b.device.published.load());
    }
    CHECK(detail::the_registry().device_records_held.load() <= held_before + detail::device_chunk_records);
    // The timeline's instances carry their spans.
    std::uint64_t timed = 0;
    for (const auto& s : r.instances())
      if (s.device == device_status::ok) {
        ++timed;
        CHECK(s.device_span_ns() == (r.sites()[s.site].name == "devfold outer" ? 100 : 20));
      }
    if (std::string(trace) == "all") CHECK(timed == 12000);
    if (std::string(trace) == "last:50") CHECK(timed >= 30);
  }
}

TEST_CASE("drain, device: a background pass waits for the GPU's work, in order, and holds back the newest record") {
  fake_gpu gpu("off");
  detail::thread_buffer& b = this_thread();
  finished_below = 0;  // the GPU has done nothing yet
  const std::uint64_t first = b.records.published.load();
  device_steps(10);  // host records first .. first + 49
  pass(detail::pass_scope::background);
  // The first device-timed scope is inner #1 of step 0 (first + 0): nothing folds past it.
  CHECK(folded_of(b) == first);
  finished_below = first + 25;  // the GPU reached the middle of step 5
  pass(detail::pass_scope::background);
  const std::uint64_t at = folded_of(b);
  CHECK(at >= first + 25);
  CHECK(at <= first + 26);  // stopped at the first record still running (a host-only one may pass)
  finished_below = ~std::uint64_t{0};
  pass(detail::pass_scope::background);
  CHECK(folded_of(b) == first + 50);  // the newest record has its device record: nothing held back
  { PROF_SCOPE("devfold host only"); }  // newest, and no device record (yet, as far as the drain knows)
  pass(detail::pass_scope::background);
  CHECK(folded_of(b) == first + 50);
  pass(detail::pass_scope::everything);
  CHECK(folded_of(b) == first + 51);
  const report r = collect();
  check_device_tables(r, 10);
  CHECK(retired.load() == 0);
}

TEST_CASE("drain, device: collect() folds what the GPU has not finished without a span, and its events go aside") {
  fake_gpu gpu("off");
  (void)this_thread();
  finished_below = 0;
  device_steps(5);  // 20 device records, none finished
  const report r = collect();
  const flat_row* outer = flat(r, "devfold outer");
  REQUIRE(outer != nullptr);
  CHECK(outer->calls == 5);
  CHECK(outer->device_calls == 0);
  CHECK(flat(r, "devfold inner")->calls == 15);
  CHECK(retired.load() == 20);
  {
    std::lock_guard<std::mutex> serial(detail::the_registry().collect_mu);
    CHECK(detail::the_drain().device_unresolved == 20);
  }
  // The wait a complete pass makes lets the stand-in finish: those spans are there.
  finish_on_wait = true;
  device_steps(5);
  const report again = collect();
  CHECK(flat(again, "devfold outer")->device_calls == 5);
  CHECK(flat(again, "devfold outer")->device_self_ns == 5 * 40);
  CHECK(retired.load() == 20);
  // reset() never waits: what is still running is set aside with the scopes it forgets.
  device_steps(2);
  finished_below = 0;
  reset();
  CHECK(retired.load() == 28);
}

TEST_CASE("drain, device: reset() while a scope is open keeps its device self right") {
  fake_gpu gpu("off");
  (void)this_thread();
  {
    PROF_SCOPE("devfold outer");
    { PROF_SCOPE("devfold inner"); }
    add_device(100, 120);
    reset();  // the finished inner scope is forgotten, but not what it covers of outer's span
    { PROF_SCOPE("devfold inner"); }
    add_device(130, 150);
  }
  add_device(90, 200);
  const report r = collect();
  const flat_row* outer = flat(r, "devfold outer");
  REQUIRE(outer != nullptr);
  CHECK(outer->device_calls == 1);
  CHECK(outer->device_self_ns == 110 - 20 - 20);
  CHECK(flat(r, "devfold inner")->device_calls == 1);
}

TEST_CASE("drain, device: interval lines carry each row's device span and self") {
  fake_gpu gpu("off");
  (void)this_thread();
  sptest::temp_dir dir;
  const std::string path = dir / "device.intervals.jsonl";
  REQUIRE(set_report_every("2steps", path));
  next_step();
  for (int i = 0; i < 4; ++i) {
    device_steps(1);
    next_step();
  }
  const report tables = collect();
  set_report_every("off");
  std::istringstream in(sptest::read_file_bytes(path));
  std::string line, error;
  int lines = 0;
  std::int64_t outer_device_calls = 0, outer_self = 0;
  while (std::getline(in, line)) {
    ++lines;
    sptest::json j;
    REQUIRE_MESSAGE(sptest::parse_json(line, j, error), error);
    for (const sptest::json& row : j.find("tree")->items) {
      if (row.find("name")->text != "devfold outer") continue;
      const sptest::json* device = row.find("device");
      REQUIRE(device != nullptr);
      REQUIRE(device->find("calls") != nullptr);
      std::int64_t calls = 0, self = 0;
      REQUIRE(device->find("calls")->integer(calls));
      REQUIRE(device->find("self")->integer(self));
      outer_device_calls += calls;
      outer_self += self;
    }
  }
  CHECK(lines == 2);
  CHECK(outer_device_calls == 4);
  CHECK(outer_self == 4 * 40);
  CHECK(flat(tables, "devfold outer")->device_calls == 4);
}

TEST_CASE("drain, device: a captured scope waits for its graph's first replay, for at most a second") {
  fake_gpu gpu("all");
  detail::thread_buffer& b = this_thread();
  const std::uint64_t first = b.records.published.load();
  { PROF_SCOPE("devfold inner"); }
  add_device(100, 120, 7);
  { PROF_SCOPE("devfold inner"); }
  add_device(130, 150, 7);
  { PROF_SCOPE("devfold outer"); }
  add_device(0, 10);
  pass(detail::pass_scope::background);
  CHECK(folded_of(b) == first);  // the graph has not run yet
  replayed = true;
  pass(detail::pass_scope::background);
  CHECK(folded_of(b) == first + 3);
  const report r = collect();
  CHECK(flat(r, "devfold inner")->device_calls == 2);
  CHECK(flat(r, "devfold inner")->device_self_ns == 40);
  // A graph never replayed: the fold waits about a second, then its scope is folded "captured".
  replayed = false;
  { PROF_SCOPE("devfold inner"); }
  add_device(200, 220, 8);
  { PROF_SCOPE("devfold outer"); }
  add_device(300, 310);
  pass(detail::pass_scope::background);
  CHECK(folded_of(b) == first + 3);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  pass(detail::pass_scope::background);
  CHECK(folded_of(b) == first + 5);
  const report again = collect();
  CHECK(flat(again, "devfold inner")->device_calls == 2);
  CHECK(flat(again, "devfold inner")->device_captured == 1);
  CHECK(flat(again, "devfold outer")->device_calls == 2);
}

TEST_CASE("drain, device: spans are placed on the host timeline only while a timeline may keep them") {
  SUBCASE("off: spans only, and the tables are whole") {
    fake_gpu gpu("off");
    (void)this_thread();
    device_steps(50);
    check_device_tables(collect(), 50);
    CHECK(span_only_calls.load() > 0);
    CHECK(placing_calls.load() == 0);
  }
  SUBCASE("all, and last:N: placed") {
    for (const char* trace : {"all", "last:10"}) {
      CAPTURE(trace);
      fake_gpu gpu(trace);
      (void)this_thread();
      device_steps(50);
      const report r = collect();
      check_device_tables(r, 50);
      CHECK(placing_calls.load() > 0);
      CHECK(span_only_calls.load() == 0);
      for (const auto& s : r.instances())
        if (s.device == device_status::ok) CHECK(s.device_begin_ns >= 1'000'000);  // where add_device put it
    }
  }
  SUBCASE("all and steps:A-B, once the timeline holds SCOPEPROF_MAX_RECORDS: spans only") {
    const auto d = std::make_unique<detail::drain_state>();
    const detail::registry& r = detail::the_registry();
    const std::uint64_t cap = r.max_records.load();
    for (const detail::trace_mode mode : {detail::trace_mode::all, detail::trace_mode::steps}) {
      d->policy.mode = mode;
      d->kept = cap - 1;
      CHECK(detail::timeline_may_keep(*d, r));
      d->kept = cap;
      CHECK_FALSE(detail::timeline_may_keep(*d, r));
    }
    d->policy.mode = detail::trace_mode::last;
    CHECK(detail::timeline_may_keep(*d, r));  // the ring takes every scope, and lets the oldest go
    d->policy.mode = detail::trace_mode::off;
    d->kept = 0;
    CHECK_FALSE(detail::timeline_may_keep(*d, r));
  }
  SUBCASE("a span resolved unplaced and kept after the policy changed: in the tables, not in the timeline") {
    fake_gpu gpu("off");
    detail::thread_buffer& b = this_thread();
    const std::uint64_t first = b.records.published.load();
    { PROF_SCOPE("devfold inner"); }
    add_device(1'000'000, 1'000'020);  // still running: the fold stops here
    { PROF_SCOPE("devfold outer"); }
    add_device(1'000'100, 1'000'200);  // finished, on the same stream as far as the fold knows
    still_running = first;
    pass(detail::pass_scope::background);
    CHECK(folded_of(b) == first);
    REQUIRE(set_trace_policy("all"));
    still_running = detail::no_record;
    const report r = collect();
    CHECK(flat(r, "devfold inner")->device_calls == 1);
    CHECK(flat(r, "devfold outer")->device_calls == 1);
    CHECK(flat(r, "devfold outer")->device_total_ns == 100);
    std::uint64_t inner_timed = 0, outer_kept = 0, outer_timed = 0;
    for (const auto& s : r.instances()) {
      const std::string& name = r.sites()[s.site].name;
      if (name == "devfold inner") inner_timed += s.device == device_status::ok;
      if (name == "devfold outer") {
        ++outer_kept;
        outer_timed += s.device == device_status::ok;
      }
    }
    CHECK(inner_timed == 1);  // resolved after the change: placed
    CHECK(outer_kept == 1);
    CHECK(outer_timed == 0);  // resolved before it, without a place
  }
}
