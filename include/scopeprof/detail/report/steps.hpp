// scopeprof: report builder pass: the steps. next_step() marks, from any thread, in the order of their
// process-wide sequence numbers; step N runs from mark N to mark N + 1. A gap in the numbers (a mark lost
// for memory, or discarded by reset()) leaves the step across it out.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/distribution.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report/stats.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The complete steps of `marks` (sorted here by sequence) and their summary.
inline std::vector<step_span> build_steps(std::vector<raw_step>& marks, std::uint64_t lost, step_summary& summary) {
  std::sort(marks.begin(), marks.end(), [](const raw_step& a, const raw_step& b) { return a.sequence < b.sequence; });
  std::vector<step_span> steps;
  distribution host;
  summary = step_summary{};
  summary.marks = marks.size();
  summary.lost = lost;
  for (std::size_t i = 0; i + 1 < marks.size(); ++i) {
    const raw_step& a = marks[i];
    const raw_step& b = marks[i + 1];
    if (b.sequence != a.sequence + 1) continue;
    step_span s;
    s.index = a.sequence;
    s.thread = a.thread;
    s.begin_ns = a.ns;
    s.end_ns = (std::max)(a.ns, b.ns);  // two threads' marks may read the clock out of sequence order
    s.cuts_scopes = a.open_scopes != 0 || b.open_scopes != 0;
    if (s.cuts_scopes) ++summary.cut;
    host.add(s.duration_ns());
    steps.push_back(s);
  }
  summary.complete = steps.size();
  summary.host = stats_of(host);
  summary.host_histogram = histogram_of(host);
  return steps;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
