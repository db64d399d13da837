// scopeprof: what collect() hands to the report builder: per-thread records already in nanoseconds, the
// call sites, the counts, the evidence, and the CUPTI records. The recorder and the backends fill it;
// build_report() (the builder, report_builder.hpp) turns it into a report. Neither side sees the other.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/call_path_fold.hpp>
#include <scopeprof/report_types.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
class report;

namespace detail {

/// What collect() gathers before any analysis: one thread's records, already converted to nanoseconds.
struct raw_instance {
  std::uint32_t site = 0;
  std::uint32_t depth = 0;  // nesting level at entry, as recorded
  std::int64_t host_begin_ns = 0;
  std::int64_t host_end_ns = 0;
  device_status device = device_status::not_timed;
  std::int32_t device_id = -1;
  std::uint64_t stream = 0;
  std::int64_t device_begin_ns = 0;
  std::int64_t device_end_ns = 0;
  bool has_work = false;  // declared work (PROF_SCOPE_WORK, add_work), summed over its declarations
  double work_bytes = 0;
  double work_flops = 0;
};

/// A kept record as the timeline holds it, before conversion: host times in the recorder's ticks.
struct tick_record {
  std::uint64_t begin_ticks = 0;
  std::uint64_t end_ticks = 0;
  std::uint32_t site = 0;
  std::uint32_t depth = 0;
};

/// The device outcome of the tick_record at `position` (only records that have one).
struct positioned_device {
  std::uint64_t position = 0;
  device_status status = device_status::not_timed;
  std::int32_t device = -1;
  std::uint64_t stream = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
};

/// The declared work of the tick_record at `position` (only records that declared some).
struct positioned_work {
  std::uint64_t position = 0;
  double bytes = 0;
  double flops = 0;
};

/// One thread's timeline as collect() copies it: 24 bytes a record, the few device outcomes and work
/// declarations beside them. They become raw_instances (raw_snapshot::ticks converts the host times)
/// only when the report's instances are first asked for.
struct tick_records {
  std::vector<tick_record> records;
  std::vector<positioned_device> device;  // by ascending position
  std::vector<positioned_work> work;      // by ascending position
};

/// A CUPTI record as collect() attributes it: thread = position in raw_snapshot::threads, record =
/// position in that thread's records (-1 for both: launched outside any recorded scope).
struct raw_activity {
  activity_kind kind = activity_kind::kernel;
  std::int64_t thread = -1;
  std::int64_t record = -1;
  std::uint32_t name = 0;  // index into raw_snapshot::activity_names
  std::int32_t device = -1;
  std::uint32_t stream = 0;
  std::uint32_t graph = 0;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t correlation = 0;  // CUPTI correlation id of the launching API call
  // The launching runtime/driver API call where CUPTI recorded it (as in device_activity).
  std::uint32_t launch_name = device_activity::no_launch;  // index into raw_snapshot::activity_names
  bool launch_driver = false;
  std::uint64_t launch_thread = 0;  // OS thread id
  std::int64_t launch_begin_ns = 0;
  std::int64_t launch_end_ns = 0;
};

/// A next_step() call: its process-wide sequence number, the thread (position in raw_snapshot::threads),
/// its time, and the scopes open on that thread then.
struct raw_step {
  std::uint64_t sequence = 0;
  std::uint32_t thread = 0;
  std::int64_t ns = 0;
  std::uint32_t open_scopes = 0;
};

/// Where a run of consecutive log indices starts in raw_thread::records.
struct record_run {
  std::uint64_t first_index = 0;  // the thread's log index of records[position]
  std::uint64_t position = 0;
};

struct raw_thread {
  thread_desc desc;
  std::vector<raw_instance> records;  // in the order scopes ended (post-order); a snapshot built by hand
  tick_records ticks;                 // the same, as collect() fills it (a thread has one or the other)
  /// The log indices of `records`, as runs (one run when the timeline kept every scope since the reset).
  /// Empty: records[i] has index i (a snapshot built by hand).
  std::vector<record_run> runs;

  /// How many records the thread has, in either form.
  std::size_t size() const noexcept { return records.empty() ? ticks.records.size() : records.size(); }

  /// The position in `records` of the record with this log index, or -1 when the timeline does not hold it.
  std::int64_t position_of(std::uint64_t index) const noexcept {
    if (runs.empty()) return index < size() ? static_cast<std::int64_t>(index) : -1;
    std::size_t lo = 0, hi = runs.size();  // the last run whose first_index <= index
    while (hi - lo > 1) {
      const std::size_t mid = lo + (hi - lo) / 2;
      (runs[mid].first_index <= index ? lo : hi) = mid;
    }
    const record_run& r = runs[lo];
    if (index < r.first_index) return -1;
    const std::uint64_t end = lo + 1 < runs.size() ? runs[lo + 1].position : size();
    const std::uint64_t pos = r.position + (index - r.first_index);
    return pos < end ? static_cast<std::int64_t>(pos) : -1;
  }
};

/// The tables' figures folded from every scope recorded since the last reset(), whether or not the
/// timeline kept it (call_path_fold.hpp). Host durations are in host clock ticks: ns = ticks *
/// ns_per_tick; device spans in ns. collect() always fills it; a snapshot built by hand may leave it out.
struct folded_paths {
  bool present = false;  // false: the tables come from the records alone
  bool device = false;   // true: every resolved device span was folded too; the tables' device span and
                         // self come from the fold, not from the records
  path_tree tree;
  double ns_per_tick = 1.0;
  std::uint64_t orphans = 0;  // scopes whose parent's record is missing or still open, placed at the root
};

struct raw_snapshot {
  std::vector<site_desc> sites;
  std::vector<raw_thread> threads;
  scope_counts counts;
  evidence sources;
  std::int64_t origin_ns = 0;  // the process's time zero for traces
  tick_converter ticks;        // host ticks to ns, for the threads' tick_records
  process_desc process;        // rank, host, pid, wall clock (pid 0: the builder fills in this process)
  std::string warnings;        // lines the report prints in its header
  std::vector<raw_activity> activities;  // CUPTI records (used only when sources.cupti_valid)
  std::vector<std::string> activity_names;
  std::vector<raw_step> steps;   // every thread's step marks, in no particular order
  std::uint64_t steps_lost = 0;  // next_step() calls not recorded (out of memory)
  folded_paths folded;
  timeline_counts timeline;
  std::uint64_t device_unresolved = 0;  // device-timed scopes folded while their work still ran (no span)
  work_counts work;                     // what became of the declared work
  std::vector<device_peak> peaks;       // the devices scopes timed on: spec and measured peaks
};

/// Build a report from a raw snapshot (collect() does this; tests may too, with <scopeprof.hpp> and this
/// header). Defined in impl/report.hpp.
SCOPEPROF_API report build_report(raw_snapshot raw);

}  // namespace detail
SCOPEPROF_NAMESPACE_END
