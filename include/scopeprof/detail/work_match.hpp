// scopeprof: the drain's side of declared work: each work mark (work_mark.hpp) is joined to the record of the
// scope it was declared in, as the drain folds that thread's records in order.
//
// Why the join is exact. A mark names the scope open at nesting depth d when it was declared, and the
// thread's published record count then. Everything that ends while that scope is open is deeper, so the
// first record at depth <= d published after the mark is either that scope's own, or proof that its record
// never came (it was dropped at a full buffer, or ended on another thread): the mark then counts as lost,
// never as another scope's work. A record at depth d is the declared scope only if it spans the mark's
// time; a later sibling began after it. Two marks pending at the same depth belong to the same scope
// (nothing at that depth ended between them), so a loop of add_work() calls in one scope holds one entry.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/chunked_log.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/detail/work_mark.hpp>

#include <cstdint>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The work joined to one record: nothing (has == false) for the scopes that declared none.
struct joined_work {
  bool has = false;
  double bytes = 0;
  double flops = 0;
};

/// One thread's marks on their way to their records (drain-owned, per thread).
class work_match {
 public:
  /// Take into the pending list the marks [cursor(), count) of `chunks` declared before record `index` was
  /// published (records_at <= index). May throw (out of memory); the marks stay in the log then.
  template <class Chunks>
  void feed(const Chunks& chunks, std::uint64_t count, std::uint64_t index) {
    for (auto* c : chunks) {
      if (cursor_ >= count) return;
      if (c->end() <= cursor_) continue;
      const std::uint64_t hi = count < c->end() ? count : c->end();
      for (; cursor_ < hi; ++cursor_) {
        const work_mark& m = c->items()[cursor_ - c->first];
        if (m.records_at > index) return;
        add_pending(m);
      }
    }
  }

  /// The work of the record just fed for (nesting `depth`, host ticks [begin, end]); the marks it settles
  /// count into declared_ or lost_.
  joined_work take(std::uint32_t depth, std::uint64_t begin, std::uint64_t end) noexcept {
    joined_work out;
    while (!pending_.empty() && pending_.back().depth >= depth) {
      const pending& p = pending_.back();
      if (p.depth == depth && begin <= p.first_ticks && p.last_ticks <= end) {
        out.has = true;
        out.bytes += p.bytes;
        out.flops += p.flops;
        declared_ += p.marks;
      } else {
        lost_ += p.marks;
      }
      pending_.pop_back();
    }
    return out;
  }

  bool has_pending() const noexcept { return !pending_.empty(); }
  /// The log index of the next mark not taken in yet (the drain frees the chunks below it).
  std::uint64_t cursor() const noexcept { return cursor_; }
  void set_cursor(std::uint64_t c) noexcept {
    if (c > cursor_) cursor_ = c;
  }
  /// Marks joined to a record, marks whose scope was never recorded, and marks waiting for their scope.
  std::uint64_t declared() const noexcept { return declared_; }
  std::uint64_t lost() const noexcept { return lost_; }
  std::uint64_t pending_marks() const noexcept {
    std::uint64_t n = 0;
    for (const pending& p : pending_) n += p.marks;
    return n;
  }
  /// reset(): the counts start again; marks of scopes still open stay pending (their scopes end later).
  void clear_counts() noexcept { declared_ = lost_ = 0; }

 private:
  struct pending {
    std::uint32_t depth;
    std::uint64_t marks;
    std::uint64_t first_ticks, last_ticks;
    double bytes, flops;
  };

  void add_pending(const work_mark& m) {
    // Pending entries are kept deepest last: a mark shallower than the newest entry settles nothing yet
    // (its scope encloses that entry's), so it goes below the deeper ones.
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
      if (it->depth == m.depth) {
        ++it->marks;
        it->bytes += m.bytes;
        it->flops += m.flops;
        it->first_ticks = m.ticks < it->first_ticks ? m.ticks : it->first_ticks;
        it->last_ticks = m.ticks > it->last_ticks ? m.ticks : it->last_ticks;
        return;
      }
      if (it->depth < m.depth) {
        pending_.insert(it.base(), {m.depth, 1, m.ticks, m.ticks, m.bytes, m.flops});
        return;
      }
    }
    pending_.insert(pending_.begin(), {m.depth, 1, m.ticks, m.ticks, m.bytes, m.flops});
  }

  std::vector<pending> pending_;  // by depth, ascending
  std::uint64_t cursor_ = 0;
  std::uint64_t declared_ = 0, lost_ = 0;
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
