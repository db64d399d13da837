// scopeprof: folding a thread's finished scopes into per-call-path statistics as they come, in memory that
// grows with the number of call paths, not with the number of scopes.
//
// A thread's records arrive in post-order (a scope ends after everything inside it), each with its nesting
// depth. When a scope at depth d ends, the scopes at depth d+1 that ended since the previous one at depth
// <= d are exactly its children, and its host self time is its total minus theirs. Its own path is not
// known yet while its ancestors are still open, so what ended under an open scope is kept per depth as a
// partial tree whose root stands for the unknown parent (pending[d]): its nodes carry full statistics,
// so a loop of a million steps under one open scope holds one node per distinct relative path, not a
// million entries. When the parent ends, the children's partial tree is grafted under the parent's node
// (statistics merged node by node) and emptied. Depth-0 scopes have a complete path: they and everything
// grafted under them go straight into the process-wide tree.
//
// A child that began before the scope taken for its parent cannot be its child (its true parent's record
// was lost): such children are grafted at the root of the process-wide tree instead and counted as orphans.
//
// Device spans fold the same way, with the report's definition of device self (report/self_times.hpp): a
// timed scope's span minus the spans of its nearest timed descendants on the same device and stream. Those
// descendants never nest and ran one after the other on the host, so their events were recorded in that
// order on the stream and their spans are disjoint: the part of the span they cover is a plain sum, kept
// per (device, stream) at each open depth. Descendants under an untimed scope, or timed on another
// stream, are handed up to the next open scope, exactly as the report's ancestor chains do.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/distribution.hpp>
#include <scopeprof/declared_work.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The statistics of one call path: host quantities in the recorder's ticks, device spans in ns (scopes
/// with a resolved span only), and the work its scopes declared (host_ns in ticks there too).
struct path_stats {
  distribution host_total;
  distribution host_self;
  distribution device_total;
  distribution device_self;
  declared_work work;
  std::uint64_t device_captured = 0;  // scopes whose device time could not be measured: in a graph capture
  std::uint64_t device_invalid = 0;   // ... or after a CUDA error
  void merge(const path_stats& o) noexcept {
    work.merge(o.work);
    device_captured += o.device_captured;
    device_invalid += o.device_invalid;
    host_total.merge(o.host_total);
    host_self.merge(o.host_self);
    if (o.device_total.stats.count != 0) {
      device_total.merge(o.device_total);
      device_self.merge(o.device_self);
    }
  }
  /// Empty again. Cleared in every partial tree at every scope's end, so what is empty already is left
  /// alone (an unconditional reset of `work` was nearly half of this function's time in the drain).
  void clear() noexcept {
    host_total.clear();
    host_self.clear();
    device_total.clear();
    device_self.clear();
    if (work.any()) work = declared_work{};
    device_captured = device_invalid = 0;
  }
};

/// A tree of call paths: node 0 is the root (no site); every other node is (parent, site), created once.
/// Nodes are created parent first, so ascending ids visit parents before children. clear() keeps every
/// node's storage (and its histograms' windows) for reuse, so a tree refilled with the same paths, as the
/// partial trees of a loop are, allocates nothing.
class path_tree {
 public:
  static constexpr std::uint32_t root = 0;
  struct node {
    std::uint32_t parent = root;
    std::uint32_t site = (std::numeric_limits<std::uint32_t>::max)();
    std::uint32_t depth = 0;  // 0 for the root's children
    path_stats stats;
  };

  path_tree() { nodes_.emplace_back(); }

  /// The node for `site` under `parent`, created if needed. May throw (out of memory).
  std::uint32_t child(std::uint32_t parent, std::uint32_t site) {
    const std::uint64_t key = (std::uint64_t{parent} << 32) | site;
    if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.empty() ? 16 : slots_.size() * 2);
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = hash(key) & mask;
    for (; slots_[i].generation == generation_; i = (i + 1) & mask)
      if (slots_[i].key == key) return slots_[i].id;
    const std::uint32_t id = size_ + 1;
    if (id == nodes_.size()) nodes_.emplace_back();
    node& n = nodes_[id];
    n.parent = parent;
    n.site = site;
    n.depth = parent == root ? 0 : nodes_[parent].depth + 1;
    slots_[i] = {key, id, generation_};
    ++size_;
    return id;
  }

  node& at(std::uint32_t id) noexcept { return nodes_[id]; }
  const node& at(std::uint32_t id) const noexcept { return nodes_[id]; }
  /// Nodes other than the root.
  std::uint32_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  /// Merge all of `from` under node `at` of this tree (from's root stands for `at`).
  void graft(const path_tree& from, std::uint32_t at) {
    scratch_.resize(std::size_t{from.size_} + 1);
    scratch_[root] = at;
    for (std::uint32_t i = 1; i <= from.size_; ++i) {
      const node& f = from.nodes_[i];
      scratch_[i] = child(scratch_[f.parent], f.site);
      nodes_[scratch_[i]].stats.merge(f.stats);
    }
  }

  /// Forget every node but the root; their storage stays for the next ones.
  void clear() noexcept {
    for (std::uint32_t i = 1; i <= size_; ++i) nodes_[i].stats.clear();
    size_ = 0;
    if (++generation_ == 0) {  // wrapped: no slot may look current
      for (auto& s : slots_) s.generation = 0;
      generation_ = 1;
    }
  }

 private:
  struct slot {
    std::uint64_t key = 0;
    std::uint32_t id = 0;
    std::uint32_t generation = 0;  // the slot is in use when it equals generation_
  };
  static std::uint64_t hash(std::uint64_t k) noexcept {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    return k ^ (k >> 33);
  }
  void rehash(std::size_t n) {
    std::vector<slot> next(n);
    for (const slot& s : slots_) {
      if (s.generation != generation_) continue;
      std::size_t i = hash(s.key) & (n - 1);
      while (next[i].generation == 1) i = (i + 1) & (n - 1);
      next[i] = {s.key, s.id, 1};
    }
    slots_.swap(next);
    generation_ = 1;
  }

  std::vector<node> nodes_;          // [0] is the root; [1, size_] are in use; the rest wait for reuse
  std::uint32_t size_ = 0;
  std::vector<slot> slots_;          // open addressing over (parent, site)
  std::uint32_t generation_ = 1;
  std::vector<std::uint32_t> scratch_;  // graft(): node ids of `from` in this tree
};

/// One finished scope as the folder needs it; `timed`: it has a resolved device span on (device, stream).
struct fold_input {
  std::uint32_t site;
  std::uint32_t depth;
  std::int64_t begin_ns;
  std::int64_t end_ns;
  bool timed = false;
  std::int32_t device = -1;
  std::uintptr_t stream = 0;
  std::int64_t device_begin_ns = 0;
  std::int64_t device_end_ns = 0;
  bool has_work = false;  // it declared work (work_match.hpp)
  bool unmeasured = false;  // its device time exists but could not be measured (captured, CUDA error)
  bool captured = false;    // its device time is n/a: inside a graph capture
  bool invalid = false;     // ... or a CUDA error
  double work_bytes = 0;
  double work_flops = 0;
};

/// Device time covered by the nearest timed descendants of an open scope, per (device, stream). Usually one
/// entry; its storage is kept when emptied, so a steady loop allocates nothing.
class device_cover {
 public:
  struct entry {
    std::int32_t device;
    std::uintptr_t stream;
    std::int64_t covered;
  };
  /// Add `ns` on (device, stream). May throw (out of memory).
  void add(std::int32_t device, std::uintptr_t stream, std::int64_t ns) {
    for (entry& e : entries_)
      if (e.device == device && e.stream == stream) {
        e.covered += ns;
        return;
      }
    entries_.push_back({device, stream, ns});
  }
  /// What is covered on (device, stream), taken out; 0 if nothing is.
  std::int64_t take(std::int32_t device, std::uintptr_t stream) noexcept {
    for (entry& e : entries_)
      if (e.device == device && e.stream == stream) {
        const std::int64_t v = e.covered;
        e = entries_.back();
        entries_.pop_back();
        return v;
      }
    return 0;
  }
  /// Hand everything to `to` (the next open scope out) and empty this one. May throw (out of memory).
  void move_into(device_cover& to) {
    for (const entry& e : entries_) to.add(e.device, e.stream, e.covered);
    entries_.clear();
  }
  void clear() noexcept { entries_.clear(); }
  bool empty() const noexcept { return entries_.empty(); }

 private:
  std::vector<entry> entries_;
};

/// Folds one thread's records, in the order the thread wrote them, into a process-wide path_tree.
class thread_fold {
 public:
  /// Fold one finished scope. May throw (out of memory); the scope is then not counted.
  void add(const fold_input& r, path_tree& into) {
    const std::size_t d = r.depth;
    ensure_depth(d + 1);
    level& children = levels_[d + 1];
    const std::int64_t total = r.end_ns - r.begin_ns;
    const bool adopted = children.tree.empty() || children.first_begin >= r.begin_ns;
    const std::int64_t self = adopted ? total - children.child_total : total;
    path_tree& target = d == 0 ? into : levels_[d].tree;
    const std::uint32_t id = target.child(path_tree::root, r.site);
    path_stats& s = target.at(id).stats;
    s.host_total.add(total);
    s.host_self.add(self);
    s.device_captured += r.captured;
    s.device_invalid += r.invalid;
    if (r.timed) {
      const std::int64_t span = r.device_end_ns - r.device_begin_ns;
      const std::int64_t covered = adopted ? children.device.take(r.device, r.stream) : 0;
      s.device_total.add(span);
      s.device_self.add((std::max)(std::int64_t{0}, span - covered));
    }
    if (r.has_work)
      s.work.add(r.work_bytes, r.work_flops,
                 r.timed ? work_timing::device : r.unmeasured ? work_timing::unmeasured : work_timing::host, total,
                 r.device_end_ns - r.device_begin_ns, r.device);
    hand_up_device(r, adopted, d);
    if (!children.tree.empty()) {
      if (adopted) {
        target.graft(children.tree, id);
      } else {
        into.graft(children.tree, path_tree::root);
        orphans_ += children.count;
      }
    }
    children.reset();
    level& here = levels_[d];
    if (d != 0 && here.count == 0) here.first_begin = r.begin_ns;
    here.child_total += total;
    ++here.count;
  }

  /// reset(): a finished scope that is forgotten. Only what its open ancestors need is kept (the time of
  /// their children, for their self time), at a few ns a scope. May throw (out of memory).
  void skip(const fold_input& r) {
    const std::size_t d = r.depth;
    ensure_depth(d + 1);
    if (r.timed) levels_[d + 1].device.take(r.device, r.stream);
    hand_up_device(r, true, d);
    levels_[d + 1].reset();
    level& here = levels_[d];
    if (d != 0 && here.count == 0) here.first_begin = r.begin_ns;
    here.child_total += r.end_ns - r.begin_ns;
    ++here.count;
  }

  /// Scopes that ended under a scope whose record never came (it was dropped): counted at the root.
  std::uint64_t orphans() const noexcept { return orphans_; }

  /// reset(): forget what ended under scopes still open, but not how long it took, so those scopes' self
  /// times stay right when they end.
  void clear_statistics() noexcept {
    for (level& l : levels_) l.tree.clear();
    orphans_ = 0;
  }

  /// What ended under scopes still open, as partial trees by depth (depth d: children of the open scope at
  /// depth d-1), for a report made now. Depth 0 is never pending.
  template <class F>
  void for_each_pending(F&& f) const {
    for (std::size_t d = 1; d < levels_.size(); ++d)
      if (!levels_[d].tree.empty()) f(d, levels_[d].tree);
  }

 private:
  struct level {
    path_tree tree;                 // what ended at this depth since the parent began (relative paths)
    std::int64_t child_total = 0;   // sum of the host totals of those scopes
    std::int64_t first_begin = 0;   // begin of the first of them
    std::uint64_t count = 0;        // scopes that ended at this depth (not their descendants)
    device_cover device;            // device time of the parent's nearest timed descendants, by stream
    void reset() noexcept {
      tree.clear();
      child_total = 0;
      first_begin = 0;
      count = 0;
      device.clear();
    }
  };

  /// Scope `r` at depth d ended (its own stream's cover already taken when it is timed): what its subtree
  /// covers on each stream goes to the scope open around it, and its own span too. Children that were not
  /// its own (not adopted) are dropped with their parent's lost record. Depth 0 has nobody to hand up to.
  void hand_up_device(const fold_input& r, bool adopted, std::size_t d) {
    device_cover& children = levels_[d + 1].device;
    if (d == 0 || !adopted) {
      children.clear();
      return;
    }
    device_cover& here = levels_[d].device;
    children.move_into(here);
    if (r.timed) here.add(r.device, r.stream, r.device_end_ns - r.device_begin_ns);
  }

  void ensure_depth(std::size_t d) {
    while (levels_.size() <= d) levels_.emplace_back();
  }

  std::vector<level> levels_;
  std::uint64_t orphans_ = 0;
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
