// Folding a thread's records into per-call-path statistics as they come (detail/call_path_fold.hpp),
// checked against the call tree the test itself generated: every path's count, host total sum and host
// self sum, whatever was open while its descendants ended. Nothing in the umbrella includes the header
// yet, so the single-header suite has none of this.
#if __has_include(<scopeprof/detail/call_path_fold.hpp>)
#include <scopeprof/detail/call_path_fold.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using scopeprof::detail::fold_input;
using scopeprof::detail::path_tree;
using scopeprof::detail::thread_fold;

struct expected_path {
  std::uint64_t count = 0;
  std::int64_t total = 0;
  std::int64_t self = 0;
};
using path_key = std::vector<std::uint32_t>;  // sites from the root
using expectation = std::map<path_key, expected_path>;

/// Generates a random call tree depth-first, emitting post-order records the way a thread writes them and
/// the expected per-path figures the way a report should show them.
struct generator {
  std::mt19937_64 rng{12345};
  std::int64_t now = 0;
  std::vector<fold_input> records;
  expectation expected;

  std::int64_t scope(path_key& path, std::uint32_t site, std::uint32_t depth, int max_depth) {
    path.push_back(site);
    const std::int64_t begin = now;
    now += 1 + static_cast<std::int64_t>(rng() % 50);
    std::int64_t children = 0;
    if (static_cast<int>(depth) < max_depth) {
      const int n = static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        children += scope(path, static_cast<std::uint32_t>(rng() % 3), depth + 1, max_depth);
        now += static_cast<std::int64_t>(rng() % 20);
      }
    }
    now += static_cast<std::int64_t>(rng() % 30);
    const std::int64_t total = now - begin;
    records.push_back({site, depth, begin, now});
    expected_path& e = expected[path];
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
