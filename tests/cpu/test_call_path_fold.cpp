// Folding a thread's records into per-call-path statistics as they come (detail/call_path_fold.hpp),
// checked against the call tree the test itself generated: every path's count, host total sum and host
// self sum, and its device span and device self sums, whatever was open while its descendants ended. Nothing in the umbrella includes the header
// yet, so the single-header suite has none of this.
#if __has_include(<scopeprof/detail/call_path_fold.hpp>)
#include <scopeprof/detail/call_path_fold.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::detail::fold_input;
using scopeprof::detail::path_tree;
using scopeprof::detail::thread_fold;

struct expected_path {
  std::uint64_t count = 0;
  std::int64_t total = 0;
  std::int64_t self = 0;
  std::uint64_t device_count = 0;
  std::int64_t device_total = 0;
  std::int64_t device_self = 0;
};
using path_key = std::vector<std::uint32_t>;  // sites from the root
using expectation = std::map<path_key, expected_path>;

/// Device time covered per stream by a subtree's nearest timed scopes.
using stream_cover = std::map<std::uintptr_t, std::int64_t>;

/// Generates a random call tree depth-first, emitting post-order records the way a thread writes them and
/// the expected per-path figures the way a report should show them. With `device_share` > 0, that share of
/// the scopes is device-timed on one of two streams, whose clocks advance as the scopes' events would be
/// recorded; the expected device self is the report's: span minus the nearest timed descendants on the
/// same stream.
struct generator {
  std::mt19937_64 rng{12345};
  std::int64_t now = 0;
  std::vector<fold_input> records;
  expectation expected;
  int device_share = 0;  // percent
  std::int64_t stream_clock[2] = {0, 0};

  std::int64_t scope(path_key& path, std::uint32_t site, std::uint32_t depth, int max_depth) {
    stream_cover ignored;
    return scope(path, site, depth, max_depth, ignored);
  }

  std::int64_t scope(path_key& path, std::uint32_t site, std::uint32_t depth, int max_depth, stream_cover& cover) {
    path.push_back(site);
    const std::int64_t begin = now;
    const bool timed = static_cast<int>(rng() % 100) < device_share;
    const std::uintptr_t stream = 1 + rng() % 2;
    std::int64_t device_begin = 0;
    if (timed) device_begin = stream_clock[stream - 1] += static_cast<std::int64_t>(rng() % 40);
    now += 1 + static_cast<std::int64_t>(rng() % 50);
    std::int64_t children = 0;
    stream_cover below;
    if (static_cast<int>(depth) < max_depth) {
      const int n = static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        children += scope(path, static_cast<std::uint32_t>(rng() % 3), depth + 1, max_depth, below);
        now += static_cast<std::int64_t>(rng() % 20);
      }
    }
    now += static_cast<std::int64_t>(rng() % 30);
    const std::int64_t total = now - begin;
    fold_input in{site, depth, begin, now};
    expected_path& e = expected[path];
    if (timed) {
      const std::int64_t device_end = stream_clock[stream - 1] += 1 + static_cast<std::int64_t>(rng() % 40);
      in.timed = true;
      in.device = 0;
      in.stream = stream;
      in.device_begin_ns = device_begin;
      in.device_end_ns = device_end;
      ++e.device_count;
      e.device_total += device_end - device_begin;
      e.device_self += device_end - device_begin - below[stream];
      below[stream] = device_end - device_begin;
    }
    for (const auto& [s, ns] : below) cover[s] += ns;
    records.push_back(in);
    ++e.count;
    e.total += total;
    e.self += total - children;
    path.pop_back();
    return total;
  }
};

path_key key_of(const path_tree& t, std::uint32_t id) {
  path_key k;
  for (; id != path_tree::root; id = t.at(id).parent) k.insert(k.begin(), t.at(id).site);
  return k;
}

/// Every node of the tree against the expectation, and no path missing.
void check_tree(const path_tree& t, const expectation& expected) {
  std::size_t seen = 0;
  for (std::uint32_t id = 1; id <= t.size(); ++id) {
    const path_key k = key_of(t, id);
    const auto it = expected.find(k);
    REQUIRE_MESSAGE(it != expected.end(), "a path the generator never made, depth " << k.size());
    const auto& s = t.at(id).stats;
    CHECK(s.host_total.stats.count == it->second.count);
    CHECK(s.host_total.stats.sum == it->second.total);
    CHECK(s.host_self.stats.sum == it->second.self);
    CHECK(s.host_total.histogram.count() == it->second.count);
    CHECK(s.device_total.stats.count == it->second.device_count);
    CHECK(s.device_total.stats.sum == it->second.device_total);
    CHECK(s.device_self.stats.count == it->second.device_count);
    CHECK(s.device_self.stats.sum == it->second.device_self);
    CHECK(t.at(id).depth + 1 == k.size());
    ++seen;
  }
  CHECK(seen == expected.size());
}

}  // namespace

TEST_CASE("call-path fold: a fixed tree gives each path its calls, total and self") {
  // root(0) { a(1) { b(2) } a(1) } : post-order b, a, a, root
  const std::vector<fold_input> recs = {{2, 2, 20, 30}, {1, 1, 10, 40}, {1, 1, 50, 60}, {0, 0, 0, 100}};
  path_tree tree;
  thread_fold fold;
  for (const auto& r : recs) fold.add(r, tree);
  REQUIRE(tree.size() == 3);
  const std::uint32_t root = tree.child(path_tree::root, 0);
  const std::uint32_t a = tree.child(root, 1);
  const std::uint32_t b = tree.child(a, 2);
  CHECK(tree.size() == 3);  // found, not created
  CHECK(tree.at(root).stats.host_total.stats.sum == 100);
  CHECK(tree.at(root).stats.host_self.stats.sum == 100 - 30 - 10);
  CHECK(tree.at(a).stats.host_total.stats.count == 2);
  CHECK(tree.at(a).stats.host_total.stats.sum == 30 + 10);
  CHECK(tree.at(a).stats.host_self.stats.sum == 20 + 10);
  CHECK(tree.at(a).stats.host_total.stats.max == 30);
  CHECK(tree.at(b).stats.host_self.stats.sum == 10);
  CHECK(fold.orphans() == 0);
}

TEST_CASE("call-path fold: random trees match the generator path by path") {
  for (int round = 0; round < 20; ++round) {
    generator g;
    g.rng.seed(1000 + static_cast<std::uint64_t>(round));
    path_key path;
    for (int top = 0; top < 30; ++top) g.scope(path, static_cast<std::uint32_t>(top % 2), 0, 5);
    path_tree tree;
    thread_fold fold;
    for (const auto& r : g.records) fold.add(r, tree);
    check_tree(tree, g.expected);
    CHECK(fold.orphans() == 0);
  }
}

TEST_CASE("call-path fold: device spans and device self per path, on two streams, with untimed scopes between") {
  for (int round = 0; round < 20; ++round) {
    generator g;
    g.rng.seed(5000 + static_cast<std::uint64_t>(round));
    g.device_share = round % 2 == 0 ? 60 : 95;
    path_key path;
    for (int top = 0; top < 30; ++top) g.scope(path, static_cast<std::uint32_t>(top % 2), 0, 5);
    path_tree tree;
    thread_fold fold;
    for (const auto& r : g.records) fold.add(r, tree);
    check_tree(tree, g.expected);
  }
}

TEST_CASE("call-path fold: device self of a fixed tree follows the nearest timed scope on the same stream") {
  // outer(0, stream 1) { mid(1, untimed) { k(2, stream 1) }  x(3, stream 2) { y(4, stream 1) } }
  auto timed = [](std::uint32_t site, std::uint32_t depth, std::int64_t b, std::int64_t e, std::uintptr_t stream,
                  std::int64_t db, std::int64_t de) {
    fold_input in{site, depth, b, e};
    in.timed = true;
    in.device = 0;
    in.stream = stream;
    in.device_begin_ns = db;
    in.device_end_ns = de;
    return in;
  };
  const std::vector<fold_input> recs = {timed(2, 2, 11, 12, 1, 110, 130), {1, 1, 10, 20},
                                        timed(4, 2, 31, 32, 1, 140, 150), timed(3, 1, 30, 40, 2, 100, 200),
                                        timed(0, 0, 0, 100, 1, 100, 300)};
  path_tree tree;
  thread_fold fold;
  for (const auto& r : recs) fold.add(r, tree);
  const std::uint32_t outer = tree.child(path_tree::root, 0);
  const std::uint32_t mid = tree.child(outer, 1), k = tree.child(mid, 2);
  const std::uint32_t x = tree.child(outer, 3), y = tree.child(x, 4);
  CHECK(tree.size() == 5);
  CHECK(tree.at(outer).stats.device_total.stats.sum == 200);
  CHECK(tree.at(outer).stats.device_self.stats.sum == 200 - 20 - 10);  // k and y; x is on stream 2
  CHECK(tree.at(mid).stats.device_total.stats.count == 0);
  CHECK(tree.at(k).stats.device_self.stats.sum == 20);
  CHECK(tree.at(x).stats.device_self.stats.sum == 100);  // y is on another stream
  CHECK(tree.at(y).stats.device_self.stats.sum == 10);
}

TEST_CASE("call-path fold: a forgotten timed child still counts against its open parent's device self") {
  // reset() between the children: the first is skipped (forgotten), the second and the parent fold.
  fold_input c1{1, 1, 10, 20}, c2{2, 1, 30, 40}, p{0, 0, 0, 50};
  for (fold_input* in : {&c1, &c2, &p}) {
    in->timed = true;
    in->device = 0;
    in->stream = 7;
  }
  c1.device_begin_ns = 100, c1.device_end_ns = 110;
  c2.device_begin_ns = 120, c2.device_end_ns = 125;
  p.device_begin_ns = 90, p.device_end_ns = 200;
  path_tree tree;
  thread_fold fold;
  fold.skip(c1);
  fold.clear_statistics();
  fold.add(c2, tree);
  fold.add(p, tree);
  const std::uint32_t parent = tree.child(path_tree::root, 0);
  CHECK(tree.at(parent).stats.device_self.stats.sum == 110 - 10 - 5);
  CHECK(tree.at(tree.child(parent, 2)).stats.device_total.stats.sum == 5);
  CHECK(tree.size() == 2);  // the forgotten child has no node
}

TEST_CASE("call-path fold: under a scope still open, descendants wait in partial trees of bounded size") {
  generator g;
  path_key path;
  // One outer scope around 2000 iterations of a step (site 7) with random bodies: fold everything but
  // the outer scope's own record, which comes last.
  path.push_back(9);
  const std::int64_t begin = g.now;
  std::int64_t children = 0;
  for (int i = 0; i < 2000; ++i) children += g.scope(path, 7, 1, 4);
  path.pop_back();
  path_tree tree;
  thread_fold fold;
  for (const auto& r : g.records) fold.add(r, tree);
  CHECK(tree.empty());  // nothing has a complete path yet
  std::size_t pending_nodes = 0;
  fold.for_each_pending([&](std::size_t depth, const path_tree& t) {
    CHECK(depth == 1);
    pending_nodes += t.size();
  });
  CHECK(pending_nodes > 0);
  CHECK(pending_nodes == g.expected.size());  // one node per distinct relative path, not per scope
  // The outer scope ends: everything gets its path.
  g.now += 5;
  fold.add({9, 0, begin, g.now}, tree);
  expected_path& outer = g.expected[{9}];
  outer.count = 1;
  outer.total = g.now - begin;
  outer.self = g.now - begin - children;
  check_tree(tree, g.expected);
}

TEST_CASE("call-path fold: children whose parent's record was lost become roots, counted as orphans") {
  // parent p(1) of c(2) is dropped; the next depth-0 scope q(3) began after c: c cannot be its child.
  const std::vector<fold_input> recs = {{2, 1, 10, 20}, {3, 0, 50, 60}};
  path_tree tree;
  thread_fold fold;
  for (const auto& r : recs) fold.add(r, tree);
  CHECK(fold.orphans() == 1);
  const std::uint32_t c = tree.child(path_tree::root, 2);
  const std::uint32_t q = tree.child(path_tree::root, 3);
  CHECK(tree.size() == 2);
  CHECK(tree.at(c).stats.host_total.stats.count == 1);
  CHECK(tree.at(q).stats.host_self.stats.sum == 10);  // the orphan is not subtracted from q
}

TEST_CASE("call-path fold: a partial tree refilled with the same paths reuses its nodes") {
  path_tree t;
  for (int round = 0; round < 3; ++round) {
    const std::uint32_t a = t.child(path_tree::root, 1);
    const std::uint32_t b = t.child(a, 2);
    t.at(b).stats.host_total.add(1000 + round);
    CHECK(a == 1);
    CHECK(b == 2);
    CHECK(t.size() == 2);
    CHECK(t.at(b).stats.host_total.stats.count == 1);  // cleared between rounds
    t.clear();
    CHECK(t.empty());
  }
}

#endif
