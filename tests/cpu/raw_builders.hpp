// Test builders: synthetic records, CUPTI activities and snapshots, as collect() would hand them to
// build_report (no clock, no GPU). Include after <scopeprof.hpp> (internals.hpp brings it, and the detail
// headers where the cold code is compiled elsewhere).
//
//   auto s = sptest::one_thread_snapshot("a.cpp", {"step", "inner"},
//                                        {sptest::host_record(1, 1, 20, 80), sptest::host_record(0, 0, 0, 100)});
#pragma once

#include "internals.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sptest {

using scopeprof::activity_kind;
using scopeprof::device_status;
using scopeprof::detail::raw_activity;
using scopeprof::detail::raw_instance;
using scopeprof::detail::raw_snapshot;
using scopeprof::detail::raw_thread;

/// A scope of site `site` at nesting `depth`, host time [begin_ns, end_ns), not device-timed.
inline raw_instance host_record(std::uint32_t site, std::uint32_t depth, std::int64_t begin_ns, std::int64_t end_ns) {
  raw_instance x;
  x.site = site;
  x.depth = depth;
  x.host_begin_ns = begin_ns;
  x.host_end_ns = end_ns;
  return x;
}

/// `x` with a device span [begin_ns, end_ns) on `device` and `stream` (status ok).
inline raw_instance device_timed(raw_instance x, std::int32_t device, std::uint64_t stream, std::int64_t begin_ns,
                                 std::int64_t end_ns) {
  x.device = device_status::ok;
  x.device_id = device;
  x.stream = stream;
  x.device_begin_ns = begin_ns;
  x.device_end_ns = end_ns;
  return x;
}

/// `x` with device status `s` (and no span).
inline raw_instance with_device_status(raw_instance x, device_status s) {
  x.device = s;
  return x;
}

/// A kernel, copy or memset on device 0: launched by record `record` of thread `thread` (-1, -1: outside any
/// recorded scope), named activity_names[name].
inline raw_activity device_work(activity_kind kind, std::int64_t thread, std::int64_t record, std::uint32_t name,
                                std::uint32_t stream, std::int64_t begin_ns, std::int64_t end_ns,
                                std::uint32_t correlation = 0) {
  raw_activity a;
  a.kind = kind;
  a.thread = thread;
  a.record = record;
  a.name = name;
  a.device = 0;
  a.stream = stream;
  a.begin_ns = begin_ns;
  a.end_ns = end_ns;
  a.correlation = correlation;
  return a;
}

/// `a` with the API call that launched it: activity_names[call] on OS thread `os_tid`, [begin_ns, end_ns).
inline raw_activity with_launch(raw_activity a, std::uint32_t call, std::uint64_t os_tid, std::int64_t begin_ns,
                                std::int64_t end_ns) {
  a.launch_name = call;
  a.launch_thread = os_tid;
  a.launch_begin_ns = begin_ns;
  a.launch_end_ns = end_ns;
  return a;
}

/// Sites named `names` (function "f", line 1) in `file`.
inline void add_sites(raw_snapshot& s, const std::vector<std::string>& names, const char* file) {
  for (const auto& n : names) s.sites.push_back({n, file, "f", 1});
}

/// A thread (index: its position) with these records (post-order) all recorded, and `in_flight` scopes
/// still open; the snapshot's counts grow by its own. Returns it, to name it, say.
inline raw_thread& add_thread(raw_snapshot& s, std::vector<raw_instance> records, std::uint64_t os_id = 0,
                              std::uint64_t in_flight = 0) {
  raw_thread t;
  t.desc.index = static_cast<std::uint32_t>(s.threads.size());
  t.desc.os_id = os_id;
  t.records = std::move(records);
  t.desc.counts.recorded = t.records.size();
  t.desc.counts.in_flight = in_flight;
  t.desc.counts.entered = t.desc.counts.recorded + in_flight;
  s.counts.entered += t.desc.counts.entered;
  s.counts.recorded += t.desc.counts.recorded;
  s.counts.in_flight += in_flight;
  s.threads.push_back(std::move(t));
  return s.threads.back();
}

/// Sites `names` in `file` and one thread (OS id `os_id`) with these records; ts 0 at `origin_ns`.
inline raw_snapshot one_thread_snapshot(const char* file, const std::vector<std::string>& names,
                                        std::vector<raw_instance> records, std::uint64_t os_id = 0,
                                        std::int64_t origin_ns = 0) {
  raw_snapshot s;
  add_sites(s, names, file);
  s.origin_ns = origin_ns;
  add_thread(s, std::move(records), os_id);
  return s;
}

}  // namespace sptest
