// Fuzz target for the report writers. The input bytes become a few scope names and a small program that
// opens, closes and drops scopes on a few threads; the resulting snapshot goes through detail::build_report
// and all five writers, whose outputs must parse strictly, agree with the report and be valid UTF-8.
// Any failure prints the reason and aborts.
//
// Input layout:
//   byte 0          bits 0-2: names - 1 (1..8), bits 3-4: threads - 1 (1..4), bit 5: CUPTI evidence valid,
//                   with one kernel per recorded scope named after a scope name (bits 6-7 pick which), and
//                   one launched outside any scope
//   then per name   one length byte L, then L bytes of name (cut short at the end of the input)
//   then ops        one byte each (at most 4096):
//     xxx sss 00    open a scope of name sss % names; xxx: 0-3 no device time, 4/5 device span on stream
//                   1/2, 6 captured, 7 CUDA error
//     ...... 01     close the innermost open scope (recorded, or dropped if marked)
//     kkkkkk 10     advance the clock by (k + 1)^2 ns
//     tttt 00 11    switch to thread t % threads
//     .... 01 11    mark the innermost open scope as dropped (its parent record goes missing)
//     iiii 10 11    name the current thread after name i % names
//     kkkk 11 11    advance the clock by (k + 1) seconds
//   Scopes still open at the end are in flight.
#include "output_check.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct open_scope {
  std::uint32_t site;
  std::uint32_t device_kind;
  std::int64_t begin;
  bool dropped;
};

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "fuzz_writers: %s\n", why.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using scopeprof::device_status;
  if (size == 0) return 0;
  std::size_t pos = 0;
  const unsigned header = data[pos++];
  const std::size_t name_count = 1 + (header & 7u);
  const std::size_t thread_count = 1 + ((header >> 3) & 3u);

  scopeprof::detail::raw_snapshot snap;
  for (std::size_t i = 0; i < name_count; ++i) {
    std::size_t len = pos < size ? data[pos++] : 0;
    if (len > size - pos) len = size - pos;
    snap.sites.push_back({std::string(reinterpret_cast<const char*>(data + pos), len), "fuzz.cpp", "fuzz", 1});
    pos += len;
  }
  snap.origin_ns = 1'000'000'000;
  snap.sources.host = "fuzz \"host\", clock";
  snap.sources.device = "fuzz\ndevice";
  snap.threads.resize(thread_count);
  std::vector<std::vector<open_scope>> stacks(thread_count);
  std::vector<std::uint64_t> dropped(thread_count, 0);
  for (std::size_t t = 0; t < thread_count; ++t) {
    snap.threads[t].desc.index = static_cast<std::uint32_t>(t);
    snap.threads[t].desc.os_id = 1000 + t;
  }

  std::int64_t now = snap.origin_ns + 5;
  std::size_t cur = 0;
  const std::size_t end = pos + 4096 < size ? pos + 4096 : size;
  for (; pos < end; ++pos) {
    const unsigned b = data[pos];
    auto& stack = stacks[cur];
    switch (b & 3u) {
      case 0:
        stack.push_back({static_cast<std::uint32_t>(((b >> 2) & 7u) % name_count), b >> 5, now, false});
        break;
      case 1: {
        if (stack.empty()) break;
        const open_scope s = stack.back();
        stack.pop_back();
        if (s.dropped) {
          ++dropped[cur];
          break;
        }
        scopeprof::detail::raw_instance x;
        x.site = s.site;
        x.depth = static_cast<std::uint32_t>(stack.size());
        x.host_begin_ns = s.begin;
        x.host_end_ns = now;
        if (s.device_kind == 4 || s.device_kind == 5) {
          x.device = device_status::ok;
          x.device_id = 0;
          x.stream = s.device_kind == 4 ? 0 : 0x7f00;
          x.device_begin_ns = s.begin + static_cast<std::int64_t>(b % 7);
          x.device_end_ns = x.device_begin_ns + (now - s.begin) + static_cast<std::int64_t>(b % 13) * 100;
        } else if (s.device_kind == 6) {
          x.device = device_status::captured;
        } else if (s.device_kind == 7) {
          x.device = device_status::invalid;
        }
        snap.threads[cur].records.push_back(x);
        break;
      }
      case 2: {
        const std::int64_t k = static_cast<std::int64_t>(b >> 2) + 1;
        now += k * k;
        break;
      }
      default:
        switch ((b >> 2) & 3u) {
          case 0: cur = (b >> 4) % thread_count; break;
          case 1:
            if (!stack.empty()) stack.back().dropped = true;
            break;
          case 2: snap.threads[cur].desc.name = snap.sites[(b >> 4) % name_count].name; break;
          default: now += static_cast<std::int64_t>((b >> 4) + 1) * 1'000'000'000; break;
        }
    }
  }

  std::uint64_t total_records = 0;
  for (std::size_t t = 0; t < thread_count; ++t) {
    auto& c = snap.threads[t].desc.counts;
    c.recorded = snap.threads[t].records.size();
    c.dropped = dropped[t];
    c.in_flight = stacks[t].size();
    c.entered = c.recorded + c.dropped + c.in_flight;
    snap.counts.entered += c.entered;
    snap.counts.recorded += c.recorded;
    snap.counts.dropped += c.dropped;
    snap.counts.in_flight += c.in_flight;
    total_records += c.recorded;
  }
  if (snap.counts.dropped) snap.warnings = "  warning: " + std::to_string(snap.counts.dropped) + " dropped\n";
  const scopeprof::scope_counts expected = snap.counts;
  if (header & 0x20u) {  // CUPTI: kernel names are the same arbitrary bytes as scope names
    snap.sources.cupti_valid = true;
    snap.sources.cupti = "fuzz \"cupti\"\n";
    for (const auto& s : snap.sites) snap.activity_names.push_back(s.name);
    std::int64_t t0 = snap.origin_ns + 10;
    for (std::size_t t = 0; t < thread_count; ++t)
      for (std::size_t i = 0; i < snap.threads[t].records.size(); ++i) {
        scopeprof::detail::raw_activity a;
        a.thread = static_cast<std::int64_t>(t);
        a.record = static_cast<std::int64_t>(i);
        a.name = static_cast<std::uint32_t>((i + (header >> 6)) % name_count);
        a.device = 0;
        a.stream = static_cast<std::uint32_t>(t);
        a.begin_ns = t0;
        a.end_ns = t0 + static_cast<std::int64_t>(i % 5) * 1000;
        t0 += 7;
        snap.activities.push_back(a);
      }
    scopeprof::detail::raw_activity outside;
    outside.begin_ns = outside.end_ns = t0;
    snap.activities.push_back(outside);
  }

  const scopeprof::report r = scopeprof::detail::build_report(std::move(snap));
  if (r.instances().size() != total_records) fail("instances lost or invented");
  if (r.counts().entered != expected.entered || r.counts().dropped != expected.dropped) fail("counts changed");
  std::uint64_t calls = 0;
  for (const auto& f : r.flat()) calls += f.calls;
  if (calls != total_records) fail("flat calls do not add up to the instances");
  const std::string problem = sptest::check_all_outputs(r);
  if (!problem.empty()) fail(problem);
  return 0;
}

#if defined(SCOPEPROF_FUZZ_REPLAY_MAIN)
#include "replay_main.hpp"
SCOPEPROF_FUZZ_REPLAY("fuzz_writers_replay")
#endif
