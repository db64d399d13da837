// scopeprof: the drain: every finished scope is folded into per-call-path statistics (call_path_fold.hpp),
// the timeline keeps what SCOPEPROF_TRACE asks for (timeline.hpp), and the record chunks go back to the
// pool. Memory then grows with call paths and the timeline's bound, not with run length.
//
// A pass runs under the registry's collect_mu: from the background drain thread (impl/drain.hpp), at the
// start of every collect() and reset(), never on a scope's path. It reads each thread's published
// records as collect() always did (chunked_log.hpp: no lock, the owner never waits), and frees only chunks
// that hold nothing unfolded, never the one its owner writes to.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/call_path_fold.hpp>
#include <scopeprof/detail/chunk_pool.hpp>
#include <scopeprof/detail/device_fold.hpp>
#include <scopeprof/detail/intervals.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/snapshot.hpp>
#include <scopeprof/detail/timeline.hpp>
#include <scopeprof/detail/work_match.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>  // getpid (dump file names)
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// registry::drain_thread: none yet, running, off (SCOPEPROF_DRAIN=0, or the process is exiting), or it
/// could not be started.
enum drain_thread_state : std::uint8_t { drain_none = 0, drain_running = 1, drain_off = 2, drain_failed = 3 };

/// What the drain keeps of one thread.
struct thread_drain {
  thread_fold fold;
  std::uint64_t folded = 0;       // log index of the next record to fold
  std::uint64_t step_cursor = 0;  // next step mark to look at (steps:A-B)
  std::uint64_t interval_cursor = 0;  // ... for SCOPEPROF_REPORT_EVERY=<N>steps
  std::uint64_t device_cursor = 0;    // device log index of the next device record to fold
  capture_wait capture;               // the captured graph a background pass waits for (device_fold.hpp)
  work_match work;                    // declared work on its way to its scopes (work_match.hpp)
  record_store kept;              // the timeline's records of this thread (all, steps:A-B)
};

/// The drain's state, process-wide; under collect_mu.
struct drain_state {
  trace_policy policy;
  path_tree tree;  // every folded scope whose path is complete, host durations in ticks (with intervals
                   // on: those of the intervals already written)
  interval_state intervals;  // SCOPEPROF_REPORT_EVERY
  std::unordered_map<const thread_buffer*, thread_drain> threads;
  record_ring ring;                  // last:N
  std::uint64_t kept = 0;            // records the timeline holds
  std::uint64_t left_out = 0;        // folded, not in the timeline
  std::uint64_t fold_failed = 0;     // not folded: out of memory
  std::uint64_t step_begin = 0;      // steps:A-B: ticks of mark A (0: not seen yet) ...
  std::uint64_t step_end = 0;        // ... and of mark B + 1 (0: not seen yet)
  std::uint64_t passes = 0;          // drain passes run
  std::uint64_t background_passes = 0;
  std::uint64_t folded_total = 0;    // records passed over: folded, or forgotten by reset() (never reset)
  std::uint64_t pass_ns_total = 0;   // steady-clock time spent in passes
  std::uint64_t pass_ns_max = 0;
  std::uint64_t device_unresolved = 0;  // device-timed scopes folded while their work still ran (no span)
  std::uint64_t work_declared = 0;      // work marks joined to a folded scope (since reset())
  std::uint64_t work_lost = 0;          // work marks whose scope was never recorded
  std::vector<device_record*> device_batch, device_scratch, device_retire;  // scratch of a pass
  std::vector<std::size_t> device_batch_ends;  // where each thread's run of device_batch ends
};

/// The process's drain state: created on first use, never destroyed (the drain thread may still run
/// while static objects are destroyed at exit).
SCOPEPROF_API drain_state& the_drain();

/// SCOPEPROF_DUMP_SIGNAL (impl/dump_signal.hpp): install the signal `name` (USR1, USR2 or a number) that
/// makes the drain thread write dump_trace(pattern with %p and %n expanded). False, with a warning, when
/// it cannot be served.
SCOPEPROF_API bool install_dump_signal(const std::string& name, const std::string& pattern) noexcept;

/// SCOPEPROF_REPORT_EVERY (impl/intervals.hpp): write a line for each interval the pass just closed
/// (d.intervals.cuts), add them to the run's tables and go on with the next. Under collect_mu.
SCOPEPROF_API void close_intervals(registry& r, drain_state& d, const registry_view& view) noexcept;

/// The file name for dump number `n`: %p the process id, %n the number, %% a percent sign.
inline std::string dump_path(const std::string& pattern, std::uint64_t n) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char c = pattern[++i];
#if defined(__unix__) || defined(__APPLE__)
    if (c == 'p') out += std::to_string(static_cast<long long>(::getpid()));
    else
#endif
    if (c == 'n') out += std::to_string(n);
    else if (c == '%') out += '%';
    else (out += '%') += c;
  }
  return out;
}

/// steps:A-B: find the marks that open and close the window among those published since the last pass.
inline void scan_step_marks(drain_state& d, const registry_view& view) {
  const std::uint64_t open = d.policy.first_step, close = d.policy.last_step + 1;
  for (const thread_view& t : view.threads) {
    thread_drain& td = d.threads[t.buffer];
    const std::uint64_t from = (std::max)(td.step_cursor, t.step_floor);
    chunked_log<step_mark>::for_each(t.step_chunks, from, t.step_count, [&](std::uint64_t, const step_mark& m) {
      if (m.sequence == open) d.step_begin = m.ticks ? m.ticks : 1;
      if (m.sequence == close) d.step_end = m.ticks ? m.ticks : 1;
    });
    td.step_cursor = (std::max)(from, t.step_count);
  }
}

/// Cuts of a pass closing more intervals than this are merged (a pass hours late with 1 ms intervals).
constexpr std::size_t max_interval_cuts = 4096;

/// SCOPEPROF_REPORT_EVERY: where the intervals this pass closes end. Seconds: every multiple of the
/// period reached by the view's time; steps: the marks of steps A + k*N published; at exit also the view's
/// own time. Under collect_mu. May throw (out of memory).
inline void plan_interval(const registry& r, drain_state& d, const registry_view& view) {
  interval_state& iv = d.intervals;
  iv.cuts.clear();
  if (iv.every.unit == interval_unit::nanoseconds) {
    const tick_converter conv = tick_converter::between(g_clock_kind, r.clock_start, read_anchor());
    const std::int64_t now = conv.to_ns(view.ticks);
    std::int64_t due = iv.due_ns;
    for (; due <= now; due += static_cast<std::int64_t>(iv.every.n)) {
      const double ticks = conv.kind == clock_kind::steady
                               ? static_cast<double>(due)
                               : static_cast<double>(conv.start.ticks) + static_cast<double>(due - conv.start.ns) / conv.ns_per_tick;
      if (iv.cuts.size() == max_interval_cuts) iv.cuts.pop_back();
      iv.cuts.push_back({static_cast<std::uint64_t>(ticks), 0, due});
    }
    iv.next_due_ns = due;
  } else if (iv.every.unit == interval_unit::steps) {
    const std::uint64_t first = iv.begin_step + iv.every.n;
    for (const thread_view& t : view.threads) {
      thread_drain& td = d.threads[t.buffer];
      const std::uint64_t from = (std::max)(td.interval_cursor, t.step_floor);
      chunked_log<step_mark>::for_each(t.step_chunks, from, t.step_count, [&](std::uint64_t, const step_mark& m) {
        if (m.sequence >= first && (m.sequence - iv.begin_step) % iv.every.n == 0) iv.cuts.push_back({m.ticks, m.sequence});
      });
      td.interval_cursor = (std::max)(from, t.step_count);
    }
    std::sort(iv.cuts.begin(), iv.cuts.end(), [](const interval_cut& a, const interval_cut& b) { return a.step < b.step; });
    for (std::size_t k = 1; k < iv.cuts.size(); ++k)  // marks of two threads read the counter out of order
      iv.cuts[k].ticks = (std::max)(iv.cuts[k].ticks, iv.cuts[k - 1].ticks);
    if (iv.cuts.size() > max_interval_cuts) iv.cuts.erase(iv.cuts.begin(), iv.cuts.end() - max_interval_cuts);
  }
  if (iv.final_line && (iv.cuts.empty() || iv.cuts.back().ticks < view.ticks))
    iv.cuts.push_back({view.ticks, r.next_step.load(std::memory_order_relaxed), 0});
  if (iv.parts.size() < iv.cuts.size() + 1) iv.parts.resize(iv.cuts.size() + 1);
}

/// Whether the timeline may still keep scopes folded from now on: not with SCOPEPROF_TRACE=off, nor once
/// `all` (or a window of steps) has reached SCOPEPROF_MAX_RECORDS. When it may not, device spans are
/// resolved without their place on the host timeline.
inline bool timeline_may_keep(const drain_state& d, const registry& r) noexcept {
  switch (d.policy.mode) {
    case trace_mode::off: return false;
    case trace_mode::last: return true;
    default: return d.kept < r.max_records.load(std::memory_order_relaxed);
  }
}

/// Give one folded record to the timeline. May throw (out of memory). A device span resolved while no
/// timeline could keep it has no place on the host timeline: kept after the policy changed (or the record
/// cap was raised), such a scope is kept without its span (the tables have it).
inline void keep_in_timeline(drain_state& d, const registry& r, thread_drain& td, const thread_buffer* owner,
                             std::uint64_t index, const record& rec, const device_outcome& placed_or_not,
                             const joined_work& work) {
  const device_outcome device = placed_or_not.placed ? placed_or_not : device_outcome{};
  bool keep = false;
  switch (d.policy.mode) {
    case trace_mode::all: keep = d.kept < r.max_records.load(std::memory_order_relaxed); break;
    case trace_mode::off: break;
    case trace_mode::steps:  // bounded as `all` is: a window of steps may hold more scopes than expected
      keep = d.step_begin != 0 && rec.end_ticks >= d.step_begin && (d.step_end == 0 || rec.begin_ticks < d.step_end) &&
             d.kept < r.max_records.load(std::memory_order_relaxed);
      break;
    case trace_mode::last:
      if (d.ring.put({rec, index, owner, device, work})) ++d.left_out;
      else ++d.kept;
      return;
  }
  if (!keep) {
    ++d.left_out;
    return;
  }
  td.kept.push(index, rec, device, work);
  ++d.kept;
}

/// What a pass does with the records it reads: fold them, or (reset()) only keep the structure open
/// scopes need and forget them.
enum class pass_kind : std::uint8_t { fold, forget };

/// What a pass may leave for later (device_fold.hpp): a background pass (and one for a new setting) stops a
/// thread's fold where device work is still running; reset()'s folds everything at once (what it forgets
/// needs no span); one for collect(), a dump or the exit waits, boundedly, for the GPU, then folds
/// everything.
enum class pass_scope : std::uint8_t { background, everything, after_wait };

/// Fold one thread's records [td.folded, to) (a background pass: up to its device gate) and hand the
/// chunks that hold only folded records back. Returns true when a chunk went back.
inline bool drain_thread(registry& r, drain_state& d, const thread_view& t, pass_kind kind, pass_scope scope) {
  thread_drain& td = d.threads[t.buffer];
  thread_buffer& b = *t.buffer;
  const device_drain_hooks* hooks = g_device_drain.load(std::memory_order_acquire);
  d.device_retire.clear();
  device_walk device(t, td.device_cursor, d.device_scratch, d.device_retire);
  const std::uint64_t from = (std::max)(td.folded, b.records.floor);
  std::uint64_t to = t.counters.recorded;
  if (scope == pass_scope::background)
    to = (std::max)(from, device.gate(to, t.exited || hooks == nullptr, td.capture, steady_now_ns()));
  td.work.set_cursor(t.work_floor);
  const bool any_work = td.work.cursor() < t.work_count || td.work.has_pending();
  const auto input = [&](std::uint64_t i, const record& rec, const device_outcome& out) {
    fold_input in{rec.site, rec.depth, static_cast<std::int64_t>(rec.begin_ticks), static_cast<std::int64_t>(rec.end_ticks)};
    add_span(in, out);
    if (any_work) {
      td.work.feed(t.work_chunks, t.work_count, i);
      const joined_work w = td.work.take(rec.depth, rec.begin_ticks, rec.end_ticks);
      in.has_work = w.has;
      in.unmeasured = out.status == device_status::captured || out.status == device_status::invalid;
      in.work_bytes = w.bytes;
      in.work_flops = w.flops;
    }
    return in;
  };
  if (from < to && kind == pass_kind::forget) {
    try {
      b.records.for_each(from, to, [&](std::uint64_t i, const record& rec) { td.fold.skip(input(i, rec, device.take(i))); });
    } catch (...) {
      // out of memory for a deeper level: open scopes' self times may count those children as their own
    }
  } else if (from < to) {
    b.records.for_each(from, to, [&](std::uint64_t i, const record& rec) {
      try {
        const device_outcome out = device.take(i);
        const fold_input in = input(i, rec, out);
        td.fold.add(in, d.intervals.active() ? d.intervals.target(rec.end_ticks) : d.tree);
        keep_in_timeline(d, r, td, t.buffer, i, rec, out, {in.has_work, in.work_bytes, in.work_flops});
      } catch (...) {
        ++d.fold_failed;  // counted in the report's warnings
      }
    });
  }
  if (kind == pass_kind::fold) {
    d.work_declared += td.work.declared();
    d.work_lost += td.work.lost();
  }
  td.work.clear_counts();
  b.work.discard_below(td.work.cursor(), t.exited, [&](work_chunk* ch) { return_work_chunk(r, ch); });
  if (to > from) d.folded_total += to - from;
  td.folded = (std::max)(from, to);
  td.device_cursor = device.finish(td.folded);
  if (kind == pass_kind::fold) d.device_unresolved += device.unresolved();
  if (hooks != nullptr && !d.device_retire.empty()) hooks->retire(d.device_retire);
  b.device.discard_below(td.device_cursor, t.exited, [&](device_chunk* ch) {
    r.device_records_held.fetch_sub(ch->capacity, std::memory_order_relaxed);
    device_chunk::destroy(ch);
  });
  bool freed = false;
  b.records.discard_below(td.folded, t.exited, [&](record_chunk* ch) {
    return_chunk(r, ch);
    freed = true;
  });
  return freed;
}

/// Resolve what the GPU has finished among the device records not folded yet, every thread's at once
/// (one round of CUDA set-up); an after_wait pass first waits, boundedly, for each stream. Spans are placed
/// on the host timeline only while a timeline may keep them. Under collect_mu.
inline void resolve_device_work(registry& r, drain_state& d, const registry_view& view, pass_scope scope) {
  const device_drain_hooks* hooks = g_device_drain.load(std::memory_order_acquire);
  if (hooks == nullptr) return;
  d.device_batch.clear();
  d.device_batch_ends.clear();
  for (const thread_view& t : view.threads) {
    const auto it = d.threads.find(t.buffer);
    const std::uint64_t from = (std::max)(it == d.threads.end() ? 0 : it->second.device_cursor, t.device_floor);
    chunked_log<device_record>::for_each(t.device_chunks, from, t.device_count, [&](std::uint64_t, device_record& x) {
      if (x.state == dev_pending || x.state == dev_captured) d.device_batch.push_back(&x);
    });
    d.device_batch_ends.push_back(d.device_batch.size());
  }
  hooks->resolve(d.device_batch, d.device_batch_ends, scope == pass_scope::after_wait, timeline_may_keep(d, r));
}

/// One pass over the threads of `view` (read under collect_mu just before). Under collect_mu.
inline void drain_pass(registry& r, drain_state& d, const registry_view& view, pass_kind kind = pass_kind::fold,
                       pass_scope scope = pass_scope::after_wait) {
  const auto start = std::chrono::steady_clock::now();
  if (d.policy.mode == trace_mode::steps) scan_step_marks(d, view);
  const bool intervals = d.intervals.active() && kind == pass_kind::fold;
  if (intervals) plan_interval(r, d, view);
  try {
    resolve_device_work(r, d, view, scope);
  } catch (...) {
    // out of memory listing the device records: those not resolved are folded without a span or wait
  }
  bool freed = false;
  for (const thread_view& t : view.threads) freed |= drain_thread(r, d, t, kind, scope);
  if (intervals && !d.intervals.cuts.empty()) close_intervals(r, d, view);
  ++d.passes;
  const auto ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  d.pass_ns_total += ns;
  d.pass_ns_max = (std::max)(d.pass_ns_max, ns);
  if (freed) r.alloc_epoch.fetch_add(1, std::memory_order_acq_rel);  // threads that found the cap reached retry
}

/// The tables' fold for a report taken now: the complete paths, and what ended under scopes still open
/// grafted at the root (as the records of such scopes are placed). Under collect_mu. May throw.
inline void snapshot_fold(const drain_state& d, const registry_view& view, double ns_per_tick, folded_paths& out) {
  out.present = true;
  out.device = true;  // the drain folds every scope with its device outcome
  out.ns_per_tick = ns_per_tick;
  out.tree = d.tree;
  for (const path_tree& part : d.intervals.parts) out.tree.graft(part, path_tree::root);
  for (const thread_view& t : view.threads) {
    const auto it = d.threads.find(t.buffer);
    if (it == d.threads.end()) continue;
    out.orphans += it->second.fold.orphans();
    it->second.fold.for_each_pending([&](std::size_t, const path_tree& pending) {
      for (std::uint32_t i = 1; i <= pending.size(); ++i)
        if (pending.at(i).parent == path_tree::root) out.orphans += pending.at(i).stats.host_total.stats.count;
      out.tree.graft(pending, path_tree::root);
    });
  }
}

/// Keep one timeline record in `out` (as position out.records.size()).
inline void append_tick_record(tick_records& out, const record& rec, const device_outcome* device, const joined_work* work) {
  const std::uint64_t position = out.records.size();
  out.records.push_back({rec.begin_ticks, rec.end_ticks, rec.site, rec.depth});
  if (device != nullptr && device->status != device_status::not_timed)
    out.device.push_back({position, device->status, device->device, device->stream, device->begin_ns, device->end_ns});
  if (work != nullptr && work->has) out.work.push_back({position, work->bytes, work->flops});
}

/// The timeline's records of each thread of `view` into `raw.threads` (same order; descriptions filled
/// already). Under collect_mu. May throw.
inline void read_timeline(const drain_state& d, const registry_view& view, const tick_converter& conv, raw_snapshot& raw) {
  if (d.policy.mode == trace_mode::last) {
    std::unordered_map<const thread_buffer*, std::size_t> position;
    for (std::size_t t = 0; t < view.threads.size(); ++t) position.emplace(view.threads[t].buffer, t);
    d.ring.for_each([&](const record_ring::entry& e) {
      const auto it = position.find(e.thread);
      if (it == position.end()) return;
      raw_thread& th = raw.threads[it->second];
      const std::uint64_t size = th.ticks.records.size();
      if (th.runs.empty() || th.runs.back().first_index + (size - th.runs.back().position) != e.index)
        th.runs.push_back({e.index, size});
      append_tick_record(th.ticks, e.rec, &e.device, &e.work);
    });
  } else {
    for (std::size_t t = 0; t < view.threads.size(); ++t) {
      const auto it = d.threads.find(view.threads[t].buffer);
      if (it == d.threads.end()) continue;
      const record_store& kept = it->second.kept;
      raw_thread& th = raw.threads[t];
      th.ticks.records.reserve(static_cast<std::size_t>(kept.size()));
      kept.for_each([&](const record& rec, const device_outcome* device, const joined_work* work) {
        append_tick_record(th.ticks, rec, device, work);
      });
      th.runs = kept.runs();
    }
  }
  for (const raw_thread& th : raw.threads) raw.timeline.kept += th.size();
  raw.ticks = conv;
  raw.timeline.policy = d.policy.text;
  raw.timeline.left_out = d.left_out;
  raw.device_unresolved = d.device_unresolved;
}

/// reset(): forget every folded scope (what ended under scopes still open stays as structure, so their
/// self times stay right) and the timeline. Threads in `gone` are forgotten altogether. Under collect_mu.
inline void forget_drained(drain_state& d, const std::vector<thread_buffer*>& gone) noexcept {
  d.tree.clear();
  d.intervals.forget();
  for (auto& [buffer, td] : d.threads) {
    td.kept.clear();
    td.fold.clear_statistics();
  }
  for (const thread_buffer* b : gone) d.threads.erase(b);
  d.ring.reset(d.policy.last_n);
  d.kept = d.left_out = d.fold_failed = d.device_unresolved = 0;
  d.work_declared = d.work_lost = 0;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
