// scopeprof: declaring work (PROF_SCOPE_WORK, add_work): one mark appended to the calling thread's work log,
// joined to its scope later by the drain (detail/work_match.hpp); and what a report says became of it. Compiled once (SCOPEPROF_IMPLEMENTATION)
// or inline (header-only).
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/chunk_pool.hpp>
#include <scopeprof/detail/drain.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/snapshot.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/work_mark.hpp>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>

SCOPEPROF_DETAIL_COLD_BEGIN
SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// What became of the declared work since reset() (work_match.hpp), with a warning for what was not added.
inline void work_snapshot(const registry& r, const drain_state& d, const registry_view& view, raw_snapshot& raw) {
  work_counts& w = raw.work;
  w.declared = d.work_declared;
  w.lost = d.work_lost + r.work_no_memory.load(std::memory_order_relaxed) - r.work_no_memory_floor;
  w.no_scope = r.work_no_scope.load(std::memory_order_relaxed) - r.work_no_scope_floor;
  w.rejected = r.work_rejected.load(std::memory_order_relaxed) - r.work_rejected_floor;
  for (const thread_view& t : view.threads) {
    const auto it = d.threads.find(t.buffer);
    const std::uint64_t cursor = it == d.threads.end() ? t.work_floor : (std::max)(it->second.work.cursor(), t.work_floor);
    w.pending += t.work_count - (std::min)(cursor, t.work_count);
    if (it != d.threads.end()) w.pending += it->second.work.pending_marks();
  }
  if (w.no_scope || w.lost || w.rejected)
    raw.warnings += "  warning: declared work not added: " + std::to_string(w.no_scope) +
                    " add_work() calls with no scope open, " + std::to_string(w.lost) +
                    " whose scope was not recorded, " + std::to_string(w.rejected) +
                    " with negative, NaN or infinite values\n";
}

SCOPEPROF_API void push_work(thread_buffer& b, double bytes, double flops) noexcept {
  registry& r = the_registry();
  if (!(std::isfinite(bytes) && std::isfinite(flops) && bytes >= 0 && flops >= 0)) {
    r.work_rejected.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::uint32_t depth = b.depth.load(std::memory_order_relaxed);
  if (depth == 0) {
    r.work_no_scope.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (!b.work.has_room()) {
    work_chunk* c = take_work_chunk(r);
    if (c == nullptr) {
      r.work_no_memory.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    b.work.adopt(c);
  }
  const std::uint32_t level = depth - 1 < 0xFFFFu ? depth - 1 : 0xFFFFu;  // as the record's depth saturates
  b.work.push({b.records.published.load(std::memory_order_relaxed), read_ticks(), bytes, flops, level, 0});
}

}  // namespace detail

SCOPEPROF_API void add_work(double bytes, double flops) noexcept {
#if SCOPEPROF_ENABLED
  if (detail::g_state.load(std::memory_order_acquire) != detail::state_on) return;
  detail::thread_buffer* b = detail::t_buffer;
  if (b == nullptr) {
    detail::the_registry().work_no_scope.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  detail::push_work(*b, bytes, flops);
#else
  static_cast<void>(bytes);
  static_cast<void>(flops);
#endif
}

SCOPEPROF_NAMESPACE_END
SCOPEPROF_DETAIL_COLD_END
