// scopeprof: the drain's side of device timing. A device-timed scope leaves a device record (its CUDA event
// pair) beside its host record. The drain resolves those records as the GPU finishes them, querying and
// never waiting, and folds each scope only once its device outcome is known, so the fold and the timeline
// get the span with the scope and the record's memory and events go back at once. Memory for device timing
// is then bounded by the work the GPU has not finished, not by the run's length.
//
// Order facts the gate relies on. A scope stores its device record right after its host record, before
// the thread can record anything else, so once host record i+1 is published, the device record of host
// record i (if it has one) is too. Device records are in the order of their host records. A pass that runs
// in the background therefore stops a thread's fold at the first host record whose device work is still
// running, and holds back the newest host record while its device record may still be on its way. A pass
// for collect(), reset() or a dump folds everything: the backend first waits, boundedly, for each stream,
// and what is still running then is folded without a span (counted in the report's device line).
//
// A scope inside a CUDA graph capture has events that every replay of the graph records again. A
// background pass waits for the graph's first replay before it folds such a scope (then it gets that
// replay's span), but for at most captured_wait_ns per capture: a graph that is not replayed by then
// leaves its scopes "n/a (captured)", and the thread's later scopes are not held back any longer.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/call_path_fold.hpp>
#include <scopeprof/detail/chunked_log.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/snapshot.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// A folded scope's device outcome, as the timeline keeps it (status not_timed: no device record, or its
/// work was still running when the scope was folded).
struct device_outcome {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::uintptr_t stream = 0;
  std::int32_t device = -1;
  device_status status = device_status::not_timed;
  bool placed = true;  // ok: begin_ns and end_ns are on the host timeline (else end_ns - begin_ns is the span)
};

/// What the CUDA-event backend does for the drain; installed when device timing starts (null before, and
/// in builds without CUDA). Both run under collect_mu.
struct device_drain_hooks {
  /// Resolve the pending (and captured) records among `records` by querying their events, never
  /// waiting; with `wait`, first wait a bounded time for the newest pending event of each stream.
  /// `records` holds each thread's records in the order its scopes ended, thread after thread;
  /// `thread_ends[i]` is where the i-th thread's run ends (records past the last end have no known order).
  /// Without `place`, no timeline can keep these scopes: their spans are enough (dev_span_only), which
  /// saves the backend a query per scope.
  void (*resolve)(std::vector<device_record*>& records, const std::vector<std::size_t>& thread_ends, bool wait,
                  bool place) noexcept;
  /// Records whose scopes were folded while their work still ran (or whose host record was dropped): their
  /// events are set aside until the GPU is done with them.
  void (*retire)(const std::vector<device_record*>& records) noexcept;
};
inline std::atomic<const device_drain_hooks*> g_device_drain{nullptr};

/// The device outcome of a resolved, captured or invalid record (pending: not_timed).
inline device_outcome outcome_of(const device_record& x) noexcept {
  device_outcome out;
  out.stream = reinterpret_cast<std::uintptr_t>(x.stream);
  out.device = x.device;
  switch (x.state) {
    case dev_resolved:
    case dev_span_only:
      out.status = device_status::ok;
      out.begin_ns = x.begin_ns;
      out.end_ns = x.end_ns;
      out.placed = x.state == dev_resolved;
      break;
    case dev_captured: out.status = device_status::captured; break;
    case dev_invalid: out.status = device_status::invalid; break;
    default: break;
  }
  return out;
}

/// `in` with the span of `out`, when it has one, or why it has none.
inline void add_span(fold_input& in, const device_outcome& out) noexcept {
  in.captured = out.status == device_status::captured;
  in.invalid = out.status == device_status::invalid;
  if (out.status != device_status::ok) return;
  in.timed = true;
  in.device = out.device;
  in.stream = out.stream;
  in.device_begin_ns = out.begin_ns;
  in.device_end_ns = out.end_ns;
}

/// How long a background pass waits for a captured graph's first replay (per capture).
constexpr std::int64_t captured_wait_ns = 1'000'000'000;

/// The capture a thread's fold waits on (drain-owned, per thread).
struct capture_wait {
  std::uint64_t capture_id = 0;
  std::int64_t since_ns = 0;
};

/// One thread's device records not folded yet, [from, to) of its device log, walked beside its host
/// records in one pass. Scratch storage comes from the caller (kept between passes).
class device_walk {
 public:
  device_walk(const thread_view& t, std::uint64_t cursor, std::vector<device_record*>& scratch,
              std::vector<device_record*>& retire)
      : records_(scratch), retire_(retire), from_((std::max)(cursor, t.device_floor)) {
    records_.clear();
    chunked_log<device_record>::for_each(t.device_chunks, from_, t.device_count,
                                         [&](std::uint64_t, device_record& x) { records_.push_back(&x); });
  }

  /// Where a background pass stops this thread's fold (host records [from, to) published): at the first
  /// scope whose device work is still running or whose graph has not been replayed yet (for at most
  /// captured_wait_ns per capture, timed in `wait`), and before the newest record while its device record
  /// may still come (`settled`: the thread has exited, or nothing is device-timed in this process).
  std::uint64_t gate(std::uint64_t to, bool settled, capture_wait& wait, std::int64_t now_ns) const noexcept {
    std::uint64_t newest_with_device = no_record;
    for (const device_record* x : records_) {
      if (x->host_index == no_record) continue;
      if (x->host_index >= to) break;
      if (x->state == dev_pending) return x->host_index;
      if (x->state == dev_captured && x->capture_id != 0) {
        if (wait.capture_id != x->capture_id) {
          wait.capture_id = x->capture_id;
          wait.since_ns = now_ns;
          return x->host_index;
        }
        if (now_ns - wait.since_ns < captured_wait_ns) return x->host_index;
      }
      newest_with_device = x->host_index;
    }
    if (settled || to == 0 || newest_with_device == to - 1) return to;
    return to - 1;
  }

  /// The outcome of host record `index` (the walk moves forward only); records passed over whose host
  /// record is gone, and a pending one taken here, go to the retire list.
  device_outcome take(std::uint64_t index) {
    while (next_ < records_.size() && (records_[next_]->host_index < index || records_[next_]->host_index == no_record))
      pass_over(*records_[next_++]);
    if (next_ == records_.size() || records_[next_]->host_index != index) return {};
    device_record& x = *records_[next_++];
    if (x.state == dev_pending) {
      retire_.push_back(&x);
      ++unresolved_;
    }
    return outcome_of(x);
  }

  /// Scopes taken here while their device work still ran.
  std::uint64_t unresolved() const noexcept { return unresolved_; }

  /// After the host records below `folded` were folded: pass over the device records that belong to them
  /// (or to none); returns the new cursor (a device log index).
  std::uint64_t finish(std::uint64_t folded) {
    while (next_ < records_.size() && (records_[next_]->host_index < folded || records_[next_]->host_index == no_record))
      pass_over(*records_[next_++]);
    return from_ + next_;
  }

 private:
  void pass_over(device_record& x) {
    if (x.state == dev_pending) retire_.push_back(&x);
  }

  std::vector<device_record*>& records_;
  std::vector<device_record*>& retire_;
  std::uint64_t from_;
  std::size_t next_ = 0;
  std::uint64_t unresolved_ = 0;
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
