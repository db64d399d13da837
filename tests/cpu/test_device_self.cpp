// Device self time across scopes that are not device-timed on the same stream: a scope subtracts its nearest
// device-timed descendants on its own device and stream, whatever host-only, sampled-out or other-stream
// scopes lie between, so the self column of a stream adds up to the spans of its outermost scopes. Checked
// on the case that showed the defect and on random trees.
#include "output_check.hpp"
#include "sanitizers.hpp"

#include "internals.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::device_status;
using scopeprof::detail::raw_instance;

struct node {
  std::uint32_t site = 0;
  device_status status = device_status::not_timed;
  std::int32_t device = 0;
  std::uint64_t stream = 0;
  std::vector<node> children;
};

// Post-order records of a tree: host times from a counter (children strictly inside their parent,
// siblings apart), device spans a monotonic map of the host interval, so the spans of one stream nest as
// the scopes do.
void emit(const node& n, std::uint32_t depth, std::int64_t& clock, std::vector<raw_instance>& out) {
  const std::int64_t begin = clock++;
  for (const auto& c : n.children) emit(c, depth + 1, clock, out);
  const std::int64_t end = clock++;
  raw_instance x;
  x.site = n.site;
  x.depth = depth;
  x.host_begin_ns = begin * 100;
  x.host_end_ns = end * 100;
  x.device = n.status;
  x.device_id = n.device;
  x.stream = n.stream;
  if (n.status == device_status::ok) {
    x.device_begin_ns = 1'000'000 + begin * 70 + 5;
    x.device_end_ns = 1'000'000 + end * 70 - 5;
  }
  out.push_back(x);
}

scopeprof::report build(const std::vector<std::string>& names, const std::vector<node>& roots) {
  scopeprof::detail::raw_snapshot s;
  for (const auto& n : names) s.sites.push_back({n, "self.cpp", "f", 1});
  scopeprof::detail::raw_thread t;
  std::int64_t clock = 1;
  for (const auto& r : roots) emit(r, 0, clock, t.records);
  t.desc.counts.recorded = t.desc.counts.entered = t.records.size();
  s.counts = t.desc.counts;
  s.threads.push_back(std::move(t));
  return scopeprof::detail::build_report(std::move(s));
}

node timed(std::uint32_t site, std::uint64_t stream, std::vector<node> children = {}, std::int32_t device = 0) {
  node n;
  n.site = site;
  n.status = device_status::ok;
  n.stream = stream;
  n.device = device;
  n.children = std::move(children);
  return n;
}
node untimed(std::uint32_t site, std::vector<node> children, device_status status = device_status::not_timed) {
  node n;
  n.site = site;
  n.status = status;
  n.children = std::move(children);
  return n;
}

node random_tree(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, 9);
  node n;
  n.site = static_cast<std::uint32_t>(pick(rng) % 4);
  const int kind = pick(rng);
  if (kind < 6) {
    n.status = device_status::ok;
    n.device = pick(rng) < 7 ? 0 : 1;
    n.stream = pick(rng) < 6 ? 1 : 2;
  } else if (kind == 6) {
    n.status = device_status::captured;
  } else if (kind == 7) {
    n.status = device_status::invalid;
  }
  const int children = depth >= 6 ? 0 : pick(rng) % 4;
  for (int i = 0; i < children; ++i) n.children.push_back(random_tree(rng, depth + 1));
  return n;
}

}  // namespace

TEST_CASE("device self subtracts the nearest timed descendants on the same stream through untimed scopes") {
  const std::vector<std::string> names = {"outer", "host_only", "inner", "other_stream"};
  SUBCASE("device-timed > PROF_SCOPE_HOST > device-timed") {
    const auto r = build(names, {timed(0, 1, {untimed(1, {timed(2, 1)})})});
    const auto& in = r.instances();
    REQUIRE(in.size() == 3);
    const auto& outer = in[0];
    const auto& inner = in[2];
    CHECK(outer.device_self_ns == outer.device_span_ns() - inner.device_span_ns());
    CHECK(outer.device_self_ns + inner.device_self_ns == outer.device_span_ns());
  }
  SUBCASE("a scope timed on another stream lies between") {
    const auto r = build(names, {timed(0, 1, {timed(3, 2, {timed(2, 1)})})});
    const auto& in = r.instances();
    REQUIRE(in.size() == 3);
    CHECK(in[0].device_self_ns == in[0].device_span_ns() - in[2].device_span_ns());
    CHECK(in[1].device_self_ns == in[1].device_span_ns());  // nothing of its own stream inside
  }
  SUBCASE("only the nearest: a grandchild on the stream is charged to its parent, not again to the outer") {
    const auto r = build(names, {timed(0, 1, {untimed(1, {timed(2, 1, {timed(3, 1)})})})});
    const auto& in = r.instances();
    REQUIRE(in.size() == 4);
    CHECK(in[0].device_self_ns == in[0].device_span_ns() - in[2].device_span_ns());
    CHECK(in[2].device_self_ns == in[2].device_span_ns() - in[3].device_span_ns());
    CHECK(in[0].device_self_ns + in[2].device_self_ns + in[3].device_self_ns == in[0].device_span_ns());
  }
  SUBCASE("sampled out and captured scopes between") {
    const auto r = build(names, {timed(0, 1, {untimed(1, {untimed(1, {timed(2, 1)}, device_status::captured)})})});
    const auto& in = r.instances();
    REQUIRE(in.size() == 4);
    CHECK(in[0].device_self_ns == in[0].device_span_ns() - in[3].device_span_ns());
  }
}

TEST_CASE("device self adds up per stream to the spans of its outermost scopes, over random trees") {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  std::mt19937 rng(20261203);
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<node> roots;
    const int n_roots = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n_roots; ++i) roots.push_back(random_tree(rng, 0));
    const auto r = build(names, roots);
    const auto& in = r.instances();
    using key = std::pair<std::int32_t, std::uint64_t>;
    std::map<key, std::int64_t> self_sum, top_sum;
    std::int64_t all_self = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const auto& s = in[i];
      if (s.device != device_status::ok) continue;
      CHECK(s.device_self_ns >= 0);
      CHECK(s.device_self_ns <= s.device_span_ns());
      const key k{s.device_id, s.stream};
      self_sum[k] += s.device_self_ns;
      all_self += s.device_self_ns;
      bool top = true;  // no timed ancestor on the same device and stream
      for (std::int64_t a = s.parent; a >= 0 && top; a = in[static_cast<std::size_t>(a)].parent) {
        const auto& p = in[static_cast<std::size_t>(a)];
        top = !(p.device == device_status::ok && p.device_id == s.device_id && p.stream == s.stream);
      }
      if (top) top_sum[k] += s.device_span_ns();
    }
    INFO("trial " << trial);
    CHECK(self_sum == top_sum);
    std::int64_t flat_self = 0;
    for (const auto& f : r.flat()) flat_self += f.device_self_ns;
    CHECK(flat_self == all_self);
    std::int64_t tree_self = 0;
    for (const auto& t : r.tree()) tree_self += t.device_self_ns;
    CHECK(tree_self == all_self);
  }
}

TEST_CASE("device self stays linear in the depth of nesting") {
  // 20000 nested scopes on alternating streams (5000 under a sanitizer, where 20000 took 39 s under TSan):
  // each subtracts the one two levels down. Records are written directly (post-order: the deepest ends
  // first), with no recursive structure to build them.
  constexpr std::size_t depth = SPTEST_SANITIZED ? 5000 : 20000;
  std::vector<raw_instance> post;
  post.reserve(depth);
  for (std::size_t i = depth; i-- > 0;) {
    const auto begin = static_cast<std::int64_t>(i + 1);
    const auto end = static_cast<std::int64_t>(2 * depth - i);
    raw_instance x;
    x.site = static_cast<std::uint32_t>(i % 2);
    x.depth = static_cast<std::uint32_t>(i);
    x.host_begin_ns = begin * 100;
    x.host_end_ns = end * 100;
    x.device = device_status::ok;
    x.stream = 1 + i % 2;
    x.device_begin_ns = begin * 70;
    x.device_end_ns = end * 70;
    post.push_back(x);
  }
  scopeprof::detail::raw_snapshot s;
  s.sites = {{"even", "self.cpp", "f", 1}, {"odd", "self.cpp", "f", 1}};
  scopeprof::detail::raw_thread t;
  t.records = std::move(post);
  t.desc.counts.recorded = t.desc.counts.entered = t.records.size();
  s.counts = t.desc.counts;
  s.threads.push_back(std::move(t));
  const auto r = scopeprof::detail::build_report(std::move(s));
  REQUIRE(r.instances().size() == depth);
  const auto& in = r.instances();
  CHECK(in[0].device_self_ns == in[0].device_span_ns() - in[2].device_span_ns());
  CHECK(in[depth - 1].device_self_ns == in[depth - 1].device_span_ns());
}
