// scopeprof: the CUPTI collector at collect() and reset(): its records attributed to the scopes of a
// snapshot, the evidence line, and the discarding of what reset() forgets. Without the collector these
// are no-ops.
#pragma once

#include <scopeprof/backends/backend_hooks.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI
#include <scopeprof/backends/cupti/session.hpp>
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

#if SCOPEPROF_ENABLED && SCOPEPROF_WITH_CUPTI
// ---- collect() and reset() ----

inline std::string cupti_evidence_locked(const cupti_collector& c, bool& valid, std::uint64_t kernels,
                                         std::uint64_t copies, std::uint64_t unattributed) {
  valid = false;
  switch (c.state) {
    case cupti_state::never:
      return "off (scopeprof::set_cupti(true) or SCOPEPROF_CUPTI=1 collects kernels per scope)";
    case cupti_state::withheld: return "withheld: " + c.reason;
    case cupti_state::unavailable: return "unavailable: " + c.reason;
    case cupti_state::invalid: return "invalid: " + c.reason + "; no CUPTI figures are reported for this run";
    default: break;
  }
  const std::uint64_t dropped = c.dropped.load(std::memory_order_relaxed) - c.dropped_floor;
  if (dropped != 0)
    return "invalid: CUPTI dropped " + std::to_string(dropped) +
           " activity records (its buffers were full); no CUPTI figures are reported for this run";
  valid = true;
  std::string s = std::to_string(kernels) + " kernels and " + std::to_string(copies) + " copies/memsets from " +
                  c.library_path + ", attributed by external correlation (CUSTOM2)";
  if (unattributed) s += "; " + std::to_string(unattributed) + " launched outside any recorded scope";
  if (c.incomplete != c.incomplete_floor)
    s += "; " + std::to_string(c.incomplete - c.incomplete_floor) +
         " still running at collect() left out (CUPTI gave them no times; collect() again after the GPU is done)";
  if (c.api_records) s += "; launch calls from runtime/driver API records";
  if (c.state == cupti_state::released) s += "; collection stopped, CUPTI released";
  return s;
}

/// collect(): flush, check, attribute to the host records of the threads in the snapshot.
inline void cupti_collect(raw_snapshot& raw, const collect_context& ctx) {
  std::vector<thread_buffer*> threads;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // {floor, recorded} of raw.threads[t]
  for (const thread_view& tv : ctx.view.threads) {
    threads.push_back(tv.buffer);
    ranges.emplace_back(tv.recorded_floor, tv.counters.recorded);
  }
  cupti_collector& c = the_cupti();
  bool active;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    active = c.state == cupti_state::active;
  }
  if (active) {
    cupti_sync_clock(c);
    std::string why;
    const probe_result p = cupti_probe(c, why);  // flushes
    if (p == probe_result::not_run) c.api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (p == probe_result::no_records || p == probe_result::no_correlation) {
      g_cupti_on.store(0, std::memory_order_release);
      cupti_release(c);
      std::lock_guard<std::mutex> lock(c.mu);
      cupti_set_state_locked(c, cupti_state::invalid, why);
    }
  }
  std::lock_guard<std::mutex> lock(c.mu);
  bool valid = false;
  if (c.state == cupti_state::active || c.state == cupti_state::released) {
    // host index of each (slot, seq), for the threads in this snapshot
    std::vector<std::int64_t> position_of_slot(c.threads.size(), -1);
    std::vector<std::unordered_map<std::uint64_t, std::uint64_t>> index_of(c.threads.size());
    for (std::size_t t = 0; t < threads.size(); ++t)
      for (std::size_t s = 0; s < c.threads.size(); ++s)
        if (c.threads[s]->owner == threads[t]) position_of_slot[s] = static_cast<std::int64_t>(t);
    for (std::size_t s = 0; s < c.threads.size(); ++s) {
      cupti_thread& ct = *c.threads[s];
      const std::uint64_t n = ct.pairs.published.load(std::memory_order_acquire);
      ct.pairs.for_each(ct.pairs.floor, n, [&](std::uint64_t, const cupti_pair& p) { index_of[s].emplace(p.seq, p.host_index); });
    }
    const attribution at = c.log.attribute(
        [&](std::uint64_t external, std::int64_t& thread, std::int64_t& record) {
          const std::uint64_t slot = external >> cupti_seq_bits;
          if (slot == cupti_probe_slot) return attribute_result::ignore;
          if (slot == 0 || slot > c.threads.size()) return attribute_result::outside;
          const std::int64_t pos = position_of_slot[slot - 1];
          const auto it = index_of[slot - 1].find(external & cupti_seq_mask);
          // No pair yet: the scope is still open; its work waits for the report that has the scope.
          if (it == index_of[slot - 1].end()) return attribute_result::ignore;
          if (pos < 0) return attribute_result::outside;
          const auto& range = ranges[static_cast<std::size_t>(pos)];
          if (it->second == no_record || it->second < range.first || it->second >= range.second) return attribute_result::outside;
          const std::int64_t kept = raw.threads[static_cast<std::size_t>(pos)].position_of(it->second);
          if (kept < 0) return attribute_result::ignore;  // its scope is in the tables, not in the timeline
          thread = pos;
          record = kept;
          return attribute_result::attributed;
        },
        raw.activities);
    raw.activity_names = c.log.names();
    raw.sources.cupti = cupti_evidence_locked(c, valid, at.kernels, at.copies, at.outside);
  } else {
    raw.sources.cupti = cupti_evidence_locked(c, valid, 0, 0, 0);
  }
  raw.sources.cupti_valid = valid;
  if (!valid) {
    raw.activities.clear();
    raw.activity_names.clear();
  }
}

/// reset(): forget the records of finished scopes (kernels of scopes still open are kept).
inline void cupti_reset(const std::vector<reset_thread>&) noexcept {
  cupti_collector& c = the_cupti();
  try {
    std::lock_guard<std::mutex> lock(c.mu);
    std::vector<std::unordered_map<std::uint64_t, std::uint64_t>> finished(c.threads.size());
    for (std::size_t s = 0; s < c.threads.size(); ++s) {
      cupti_thread& ct = *c.threads[s];
      const std::uint64_t n = ct.pairs.published.load(std::memory_order_acquire);
      ct.pairs.for_each(ct.pairs.floor, n, [&](std::uint64_t, const cupti_pair& p) { finished[s].emplace(p.seq, 0); });
      ct.pairs.discard_below(n, false, &cupti_pair_chunk::destroy);
    }
    c.log.discard_if([&](std::uint64_t external) {
      const std::uint64_t slot = external >> cupti_seq_bits;
      if (slot == 0 || slot > finished.size()) return true;
      return finished[slot - 1].count(external & cupti_seq_mask) != 0;
    });
    c.dropped_floor = c.dropped.load(std::memory_order_relaxed);
    c.incomplete_floor = c.incomplete;
    if (c.state == cupti_state::invalid) {  // a fresh start may be tried again with set_cupti(true)
      c.state = cupti_state::released;
      c.warned = false;
    }
  } catch (...) {
  }
}

inline bool cupti_is_on() noexcept { return g_cupti_on.load(std::memory_order_acquire) != 0; }

/// reset() releases the buffers of threads that exited (`gone`, sorted by address): their pairs go, and
/// their slots can no longer be matched to a buffer (a new thread's buffer may get the same address).
inline void cupti_forget_threads(const std::vector<thread_buffer*>& gone) noexcept {
  cupti_collector& c = the_cupti();
  std::lock_guard<std::mutex> lock(c.mu);
  for (auto& t : c.threads) {
    if (t->owner == nullptr ||
        !std::binary_search(gone.begin(), gone.end(), t->owner, std::less<const thread_buffer*>()))
      continue;
    t->owner = nullptr;
    t->pairs.discard_below(t->pairs.published.load(std::memory_order_acquire), true, &cupti_pair_chunk::destroy);
  }
}

#else  // !SCOPEPROF_WITH_CUPTI

inline void cupti_start() noexcept {}
inline void cupti_stop() noexcept {}
inline bool cupti_is_on() noexcept { return false; }
inline void cupti_forget_threads(const std::vector<thread_buffer*>&) noexcept {}
inline void cupti_reset(const std::vector<reset_thread>&) noexcept {}
inline void cupti_collect(raw_snapshot&, const collect_context&) {}

#endif

inline constexpr backend_hooks cupti_backend{"CUPTI", &cupti_collect, &cupti_reset, &cupti_forget_threads};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
