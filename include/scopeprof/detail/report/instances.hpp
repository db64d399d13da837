// scopeprof: report builder pass 1: one thread's post-order records become scope instances in pre-order,
// with parents, depths, orphans and host self times (device self times come later, in self_times.hpp).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The call tree of one thread's records, by record index. The children of record i are
/// kids[first[i] .. first[i] + count[i]) (one flat array: no vector per record).
struct record_tree {
  std::vector<std::uint32_t> kids;
  std::vector<std::uint32_t> first;
  std::vector<std::uint32_t> count;
  std::vector<std::uint32_t> roots;  // top-level records and orphans, by begin time
  std::vector<char> orphan;          // 1: its recorded parent is missing or does not contain it
};

inline bool record_contains(const raw_instance& outer, const raw_instance& inner) noexcept {
  return outer.host_begin_ns <= inner.host_begin_ns && inner.host_end_ns <= outer.host_end_ns;
}

/// Siblings by begin time; at equal begin times, the shallower recorded depth first. Siblings that
/// ended in order on one thread are mostly in that order already: checked first, sorted only if not.
template <class It>
inline void sort_records_by_begin(const std::vector<raw_instance>& recs, It first, It last) {
  const auto before = [&](std::uint32_t a, std::uint32_t b) {
    return recs[a].host_begin_ns != recs[b].host_begin_ns ? recs[a].host_begin_ns < recs[b].host_begin_ns
                                                          : recs[a].depth < recs[b].depth;
  };
  if (!std::is_sorted(first, last, before)) std::stable_sort(first, last, before);
}

// Records arrive in post-order with their nesting level: a scope's children are the records one level
// deeper that ended since the previous record at its own level. A child that does not lie inside the
// adopting scope (its true parent was dropped) becomes an orphan root instead of being misattributed.
inline record_tree link_records(const std::vector<raw_instance>& recs) {
  const std::size_t n = recs.size();
  record_tree t;
  t.kids.reserve(n);
  t.roots.reserve(n);  // pages are touched only as they fill
  t.first.assign(n, 0);
  t.count.assign(n, 0);
  t.orphan.assign(n, 0);
  std::vector<std::vector<std::uint32_t>> pending;  // by recorded depth
  for (std::uint32_t i = 0; i < n; ++i) {
    const std::uint32_t d = recs[i].depth;
    if (pending.size() < d + 2) pending.resize(d + 2);
    for (std::size_t k = pending.size() - 1; k > d + 1; --k) {  // deeper than a child: parent lost
      for (auto c : pending[k]) t.orphan[c] = 1, t.roots.push_back(c);
      pending[k].clear();
    }
    t.first[i] = static_cast<std::uint32_t>(t.kids.size());
    for (auto c : pending[d + 1]) {
      if (record_contains(recs[i], recs[c])) t.kids.push_back(c);
      else t.orphan[c] = 1, t.roots.push_back(c);
    }
    t.count[i] = static_cast<std::uint32_t>(t.kids.size() - t.first[i]);
    pending[d + 1].clear();
    if (d == 0) t.roots.push_back(i);  // nothing adopts a top-level record
    else pending[d].push_back(i);
  }
  for (std::size_t k = 0; k < pending.size(); ++k)
    for (auto c : pending[k]) {
      if (k > 0) t.orphan[c] = 1;
      t.roots.push_back(c);
    }
  sort_records_by_begin(recs, t.roots.begin(), t.roots.end());
  return t;
}

inline scope_instance instance_of_record(const raw_instance& x, std::uint32_t thread) {
  scope_instance s;
  s.site = x.site;
  s.thread = thread;
  s.host_begin_ns = x.host_begin_ns;
  s.host_end_ns = x.host_end_ns;
  s.device = x.device;
  s.device_id = x.device_id;
  s.stream = x.stream;
  s.device_begin_ns = x.device_begin_ns;
  s.device_end_ns = x.device_end_ns;
  s.has_work = x.has_work;
  s.work_bytes = x.work_bytes;
  s.work_flops = x.work_flops;
  return s;
}

/// Append one thread's records to `out` in pre-order (siblings by begin time), each with its host self
/// time (host total minus its children's); `instance_of[i]`, when asked for, becomes the index in `out`
/// of record i. Returns the number of orphans.
inline std::uint64_t append_thread_instances(const std::vector<raw_instance>& recs, std::uint32_t thread,
                                             std::vector<scope_instance>& out,
                                             std::vector<std::int64_t>* instance_of = nullptr) {
  if (instance_of != nullptr) instance_of->assign(recs.size(), -1);
  record_tree t = link_records(recs);
  std::uint64_t orphans = 0;
  // One root's subtree at a time, depth-first with an explicit stack: nesting may be deep.
  struct frame {
    std::uint32_t rec;
    std::int64_t parent;
    std::uint32_t depth;
  };
  std::vector<frame> stack;
  for (const std::uint32_t root : t.roots) {
    stack.push_back({root, -1, 0});
    while (!stack.empty()) {
      const frame f = stack.back();
      stack.pop_back();
      const auto index = static_cast<std::int64_t>(out.size());
      out.push_back(instance_of_record(recs[f.rec], thread));
      scope_instance& s = out.back();
      s.parent = f.parent;
      s.depth = f.depth;
      s.orphan = t.orphan[f.rec] != 0;
      s.host_self_ns = s.host_total_ns();
      if (f.parent >= 0) out[static_cast<std::size_t>(f.parent)].host_self_ns -= s.host_total_ns();
      orphans += s.orphan;
      if (instance_of != nullptr) (*instance_of)[f.rec] = index;
      const auto kids_begin = t.kids.begin() + t.first[f.rec];
      const auto kids_end = kids_begin + t.count[f.rec];
      sort_records_by_begin(recs, kids_begin, kids_end);
      for (auto it = kids_end; it != kids_begin;) stack.push_back({*--it, index, f.depth + 1});
    }
  }
  return orphans;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
