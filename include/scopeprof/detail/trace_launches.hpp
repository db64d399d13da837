// scopeprof: where the Chrome trace puts the API calls that launched CUPTI's kernels, copies and memsets
// (cuda_runtime / cuda_driver slices on the launching thread's track), and which slices flows join.
//
// A launch call is drawn inside its innermost launching scope, in that scope's own time (between its
// children): CUPTI's timestamps reach the host timeline through a clock offset, so a call made just
// before a child scope began can map a little into it. A call that does not fit where CUPTI put it is
// moved to the next gap of the same scope (cut to that gap), so slices on a track always nest.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/report.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// One launch call slice.
struct trace_launch {
  std::size_t activity = 0;  // the first activity it launched (name, correlation, driver or runtime)
  std::int64_t thread = -1;  // position in report::threads(); -1: a thread the report does not hold
  std::uint64_t os_tid = 0;  // CUPTI's thread id (the track when thread == -1)
  std::int64_t instance = -1;  // innermost launching scope, -1 for none
  std::int64_t begin_ns = 0;   // as placed
  std::int64_t end_ns = 0;
  bool flow_out = false;  // at least one of its activities binds its flow
};

/// Which slice each flow leaves from: for an activity, its launch call, its launching scope, or none.
enum class trace_flow_in : std::uint8_t { none = 0, from_launch = 1, from_scope = 2 };

struct trace_launch_plan {
  std::vector<trace_launch> launches;
  std::vector<std::int64_t> launch_of;     // per activity: index into launches, -1 for none
  std::vector<trace_flow_in> flow_in;      // per activity
  std::vector<std::uint8_t> scope_flow_out;  // per instance: its slice starts a flow (to its span or work)
};

/// Children of every instance and the roots of every thread, each list by begin time (CSR layout):
/// the list of instance i is [start[i], start[i+1]), the roots of thread t that of n + t.
struct trace_children {
  std::vector<std::uint32_t> start;
  std::vector<std::uint32_t> items;

  explicit trace_children(const report& rep) {
    const auto& in = rep.instances();
    const std::size_t n = in.size(), lists = n + rep.threads().size();
    std::vector<std::uint32_t> count(lists + 1, 0);
    const auto list_of = [&](const scope_instance& s) -> std::size_t {
      return s.parent >= 0 ? static_cast<std::size_t>(s.parent) : n + (s.thread < rep.threads().size() ? s.thread : 0);
    };
    if (rep.threads().empty()) return;
    for (const auto& s : in) ++count[list_of(s) + 1];
    start.assign(lists + 1, 0);
    for (std::size_t i = 0; i < lists; ++i) start[i + 1] = start[i] + count[i + 1];
    items.resize(n);
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) items[fill[list_of(in[i])]++] = static_cast<std::uint32_t>(i);
    for (std::size_t l = 0; l < lists; ++l)  // pre-order keeps siblings by begin; orphans may interleave
      std::stable_sort(items.begin() + start[l], items.begin() + start[l + 1],
                       [&](std::uint32_t a, std::uint32_t b) { return in[a].host_begin_ns < in[b].host_begin_ns; });
  }
};

/// Move [b, b + d) to the first gap at or after b between the children `kids` (by begin, disjoint) inside
/// [lo, hi]; returns the end, cut to the gap (a child is never entered).
inline std::int64_t fit_in_gap(const report& rep, const std::uint32_t* kids, const std::uint32_t* kids_end, std::int64_t lo,
                               std::int64_t hi, std::int64_t& b, std::int64_t d) {
  const auto& in = rep.instances();
  b = (std::max)(b, lo);
  const std::uint32_t* it =
      std::partition_point(kids, kids_end, [&](std::uint32_t k) { return in[k].host_end_ns <= b; });
  while (it != kids_end && in[*it].host_begin_ns <= b) b = (std::max)(b, in[*it++].host_end_ns);
  const std::int64_t gap_end = it != kids_end ? in[*it].host_begin_ns : hi;
  b = (std::min)(b, hi);
  const std::int64_t e = d > gap_end - b ? gap_end : b + d;
  return (std::max)(e, b);
}

/// The thread each launch call ran on: its launching scope's, else the report thread with CUPTI's OS id.
inline std::int64_t launch_thread_of(const report& rep, const device_activity& a,
                                     const std::map<std::uint64_t, std::uint32_t>& thread_of_os_id) {
  if (a.instance >= 0 && static_cast<std::size_t>(a.instance) < rep.instances().size())
    return rep.instances()[static_cast<std::size_t>(a.instance)].thread;
  const auto it = thread_of_os_id.find(a.launch_thread);
  return it != thread_of_os_id.end() ? static_cast<std::int64_t>(it->second) : -1;
}

/// One slice per launch call (activities of one graph launch share it), placed so that tracks nest.
inline void place_trace_launches(const report& rep, trace_launch_plan& plan) {
  const auto& acts = rep.activities();
  const auto& in = rep.instances();
  std::map<std::uint64_t, std::uint32_t> thread_of_os_id;
  for (std::uint32_t t = 0; t < rep.threads().size(); ++t)
    if (rep.threads()[t].os_id) thread_of_os_id.emplace(rep.threads()[t].os_id, t);
  std::map<std::tuple<std::uint32_t, std::uint64_t, std::int64_t, std::int64_t>, std::size_t> slot;  // one per call
  for (std::size_t i = 0; i < acts.size(); ++i) {
    const device_activity& a = acts[i];
    if (!a.has_launch()) continue;
    const auto key = std::make_tuple(a.correlation, a.launch_thread, a.launch_begin_ns, a.launch_end_ns);
    auto [it, fresh] = slot.emplace(key, plan.launches.size());
    if (fresh) {
      trace_launch l;
      l.activity = i;
      l.thread = launch_thread_of(rep, a, thread_of_os_id);
      l.os_tid = a.launch_thread;
      l.instance = l.thread >= 0 && a.instance >= 0 ? a.instance : -1;
      l.begin_ns = a.launch_begin_ns;
      l.end_ns = a.launch_end_ns;
      plan.launches.push_back(l);
    }
    plan.launch_of[i] = static_cast<std::int64_t>(it->second);
  }
  if (plan.launches.empty()) return;
  std::vector<std::size_t> order(plan.launches.size());
  for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
  const auto group = [&](const trace_launch& l) {
    return std::make_tuple(l.thread, l.thread < 0 ? l.os_tid : 0, l.instance);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    const auto& a = plan.launches[x];
    const auto& b = plan.launches[y];
    return std::make_tuple(group(a), a.begin_ns, x) < std::make_tuple(group(b), b.begin_ns, y);
  });
  const trace_children kids(rep);
  constexpr std::int64_t lowest = (std::numeric_limits<std::int64_t>::min)(), highest = (std::numeric_limits<std::int64_t>::max)();
  std::int64_t cursor = lowest;
  for (std::size_t k = 0; k < order.size(); ++k) {
    trace_launch& l = plan.launches[order[k]];
    if (k == 0 || group(plan.launches[order[k - 1]]) != group(l)) cursor = lowest;
    const std::int64_t d = l.end_ns - l.begin_ns;
    std::int64_t b = (std::max)(l.begin_ns, cursor);
    if (l.thread < 0 || kids.start.empty()) {
      l.begin_ns = b;
      l.end_ns = b + d;
    } else {
      const std::size_t list = l.instance >= 0 ? static_cast<std::size_t>(l.instance) : in.size() + static_cast<std::size_t>(l.thread);
      const std::int64_t lo = l.instance >= 0 ? in[static_cast<std::size_t>(l.instance)].host_begin_ns : lowest;
      const std::int64_t hi = l.instance >= 0 ? in[static_cast<std::size_t>(l.instance)].host_end_ns : highest;
      const std::uint32_t* first = kids.items.data() + kids.start[list];
      l.end_ns = fit_in_gap(rep, first, kids.items.data() + kids.start[list + 1], lo, hi, b, d);
      l.begin_ns = b;
    }
    cursor = l.end_ns;
  }
}

/// The launch slices and the flows: launch call -> its work where CUPTI recorded the call, else
/// launching scope -> its work; scope -> its device span. A flow is drawn only forward in time.
inline trace_launch_plan plan_trace_flows(const report& rep) {
  trace_launch_plan plan;
  const auto& acts = rep.activities();
  const auto& in = rep.instances();
  plan.launch_of.assign(acts.size(), -1);
  plan.flow_in.assign(acts.size(), trace_flow_in::none);
  plan.scope_flow_out.assign(in.size(), 0);
  for (std::size_t i = 0; i < in.size(); ++i)
    plan.scope_flow_out[i] = in[i].device == device_status::ok && in[i].device_begin_ns >= in[i].host_begin_ns;
  place_trace_launches(rep, plan);
  for (std::size_t i = 0; i < acts.size(); ++i) {
    const device_activity& a = acts[i];
    if (plan.launch_of[i] >= 0) {
      trace_launch& l = plan.launches[static_cast<std::size_t>(plan.launch_of[i])];
      if (a.begin_ns >= l.begin_ns) {
        plan.flow_in[i] = trace_flow_in::from_launch;
        l.flow_out = true;
      }
    } else if (a.instance >= 0 && static_cast<std::size_t>(a.instance) < in.size() &&
               a.begin_ns >= in[static_cast<std::size_t>(a.instance)].host_begin_ns) {
      plan.flow_in[i] = trace_flow_in::from_scope;
      plan.scope_flow_out[static_cast<std::size_t>(a.instance)] = 1;
    }
  }
  return plan;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
