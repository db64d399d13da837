// scopeprof: the step markers in the Chrome trace: one "ProfilerStep#N" slice per complete step, as torch's
// profiler writes them (HTA assigns host events to iterations by these names and times). They sit on a
// track of their own in the host process ("steps", tid trace_step_tid), so they never cut the scopes of
// the thread that marked them, however the markers fall. They come after every other event, so the k-th
// user_annotation slice of the trace is still scope instance k.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/trace_meta.hpp>
#include <scopeprof/report.hpp>

#include <cstdint>
#include <string>
#include <string_view>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The tid of the steps track: apart from OS thread ids (below 2^22 on Linux), the device-span tracks
/// (2^30 + k) and unknown threads (2^31 + k).
constexpr std::int64_t trace_step_tid = std::int64_t{1} << 29;

/// The "steps" track's name and its ProfilerStep#N slices; nothing when the report has no steps.
inline void append_trace_steps(output_sink& sink, const report& rep, std::int64_t pid, std::int64_t origin_ns) {
  if (rep.steps().empty()) return;
  const std::string track = ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(trace_step_tid);
  sink.append(",\n{\"ph\":\"M\",\"name\":\"thread_name\"" + track + ",\"args\":{\"name\":\"steps (PROF_STEP)\"}}");
  sink.append(",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\"" + track + ",\"args\":{\"sort_index\":-1}}");
  for (const step_span& s : rep.steps()) {
    char name[40];  // "ProfilerStep#N" as a JSON literal
    char* n = trace_put(name, "\"ProfilerStep#");
    n = trace_put_uint(n, s.index);
    n = trace_put(n, "\"");
    sink.row_done();
    char* p = sink.reserve(192 + track.size());
    p = write_trace_slice(p, "user_annotation", std::string_view(name, static_cast<std::size_t>(n - name)), track,
                          s.begin_ns - origin_ns, s.end_ns - origin_ns);
    p = trace_put(p, "}");
    sink.commit(p);
  }
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
