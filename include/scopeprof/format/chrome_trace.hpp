// scopeprof: Chrome trace event format (JSON), for Perfetto (ui.perfetto.dev) and chrome://tracing.
// Process 1 holds one track per host thread with complete ("X") events that nest exactly; process 2
// holds one track per (device, stream) with the device spans, and flow arrows join each host scope to
// its device span. Timestamps are microseconds from the library's start with three decimals, i.e. exact
// nanoseconds, so nesting survives the conversion.
#pragma once

#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/version.hpp>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <utility>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Track ids of process 2 (CUDA events), by (device, stream handle).
using trace_device_tracks = std::map<std::pair<std::int32_t, std::uint64_t>, std::size_t>;
/// Track ids of process 3 (CUPTI), by (device, CUPTI stream id).
using trace_cupti_tracks = std::map<std::pair<std::int32_t, std::uint32_t>, std::size_t>;

/// The track of a scope's thread: tracks are named by thread_desc::index, so events use it too (not the
/// position in threads()).
inline std::string trace_thread_tid(const report& rep, const scope_instance& s) {
  return std::to_string((s.thread < rep.threads().size() ? rep.threads()[s.thread].index : s.thread) + 1);
}

/// The opening: generator, counts and evidence, then process 1 (host) and its thread tracks.
inline void append_trace_head(std::string& out, const report& rep) {
  out += "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"scopeprof " SCOPEPROF_VERSION_STRING "\"";
  out += ",\"entered\":" + std::to_string(rep.counts().entered) + ",\"recorded\":" + std::to_string(rep.counts().recorded) +
         ",\"dropped\":" + std::to_string(rep.counts().dropped) + ",\"in_flight\":" + std::to_string(rep.counts().in_flight) +
         ",\"host_source\":";
  append_json_string(out, rep.sources().host);
  out += ",\"device_source\":";
  append_json_string(out, rep.sources().device);
  out += ",\"cupti_source\":";
  append_json_string(out, rep.sources().cupti);
  out += "},\"traceEvents\":[\n";
  out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"host\"}}";
  for (const auto& t : rep.threads()) {
    std::string label = t.name.empty() ? "thread " + std::to_string(t.index) : t.name;
    if (t.os_id) label += " (tid " + std::to_string(t.os_id) + ")";
    out += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" + std::to_string(t.index + 1) + ",\"args\":{\"name\":";
    append_json_string(out, label);
    out += "}}";
    out += ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":" + std::to_string(t.index + 1) +
           ",\"args\":{\"sort_index\":" + std::to_string(t.index) + "}}";
  }
}

/// Process 2: one track per (device, stream) with a device span, numbered in key order; their names.
inline trace_device_tracks append_trace_device_tracks(std::string& out, const report& rep) {
  trace_device_tracks tracks;
  for (const auto& s : rep.instances())
    if (s.device == device_status::ok) tracks.emplace(std::make_pair(s.device_id, s.stream), 0);
  if (tracks.empty()) return tracks;
  out += ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"tid\":0,\"args\":{\"name\":\"device (CUDA events)\"}}";
  std::size_t k = 0;
  for (auto& [key, tid] : tracks) {
    tid = ++k;
    char stream_hex[32];
    std::snprintf(stream_hex, sizeof stream_hex, "0x%llx", static_cast<unsigned long long>(key.second));
    std::string label = "GPU " + std::to_string(key.first) + " stream " + (key.second ? stream_hex : "default");
    out += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":";
    append_json_string(out, label);
    out += "}}";
  }
  return tracks;
}

/// One scope instance: its host event and, with a device span, the device event and a flow arrow from
/// the host begin to the device begin.
inline void append_trace_scope(std::string& out, const report& rep, const scope_instance& s,
                               const trace_device_tracks& device_tracks, std::uint64_t& flow_id) {
  const std::string& name = s.site < rep.sites().size() ? rep.sites()[s.site].name : std::string();
  const std::string tid = trace_thread_tid(rep, s);
  out += ",\n{\"ph\":\"X\",\"cat\":\"scope\",\"name\":";
  append_json_string(out, name);
  out += ",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + format_ns_as_us(s.host_begin_ns - rep.origin_ns()) +
         ",\"dur\":" + format_ns_as_us(s.host_total_ns()) + ",\"args\":{\"host_self_us\":" + format_ns_as_us(s.host_self_ns);
  if (s.device == device_status::ok) out += ",\"device_span_us\":" + format_ns_as_us(s.device_span_ns());
  if (rep.sources().cupti_valid)
    out += ",\"device_busy_us\":" + format_ns_as_us(s.device_busy_ns) + ",\"kernels\":" + std::to_string(s.kernels);
  else if (s.device == device_status::captured) out += ",\"device_span\":\"n/a (captured)\"";
  else if (s.device == device_status::invalid) out += ",\"device_span\":\"n/a (CUDA error)\"";
  if (s.orphan) out += ",\"orphan\":true";
  out += "}}";
  if (s.device != device_status::ok) return;
  const std::size_t dtid = device_tracks.at(std::make_pair(s.device_id, s.stream));
  const std::string id = std::to_string(++flow_id);
  out += ",\n{\"ph\":\"X\",\"cat\":\"device\",\"name\":";
  append_json_string(out, name);
  out += ",\"pid\":2,\"tid\":" + std::to_string(dtid) + ",\"ts\":" + format_ns_as_us(s.device_begin_ns - rep.origin_ns()) +
         ",\"dur\":" + format_ns_as_us(s.device_span_ns()) + ",\"args\":{\"device_self_us\":" +
         format_ns_as_us(s.device_self_ns) + "}}";
  out += ",\n{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":" + id + ",\"pid\":1,\"tid\":" + tid +
         ",\"ts\":" + format_ns_as_us(s.host_begin_ns - rep.origin_ns()) + "}";
  out += ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":" + id +
         ",\"pid\":2,\"tid\":" + std::to_string(dtid) + ",\"ts\":" + format_ns_as_us(s.device_begin_ns - rep.origin_ns()) + "}";
}

/// Process 3 (CUPTI): one track per (device, CUPTI stream id), numbered in key order; their names.
inline trace_cupti_tracks append_trace_cupti_tracks(std::string& out, const report& rep) {
  trace_cupti_tracks tracks;
  for (const auto& a : rep.activities()) tracks.emplace(std::make_pair(a.device, a.stream), 0);
  if (tracks.empty()) return tracks;
  out += ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":3,\"tid\":0,\"args\":{\"name\":\"device (CUPTI)\"}}";
  std::size_t k = 0;
  for (auto& [key, tid] : tracks) {
    tid = ++k;
    out += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":3,\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":";
    append_json_string(out, "GPU " + std::to_string(key.first) + " stream " + std::to_string(key.second));
    out += "}}";
  }
  return tracks;
}

/// One kernel, copy or memset, and a flow arrow from its launching scope (at the scope's host begin).
inline void append_trace_activity(std::string& out, const report& rep, const device_activity& a,
                                  const trace_cupti_tracks& cupti_tracks, std::uint64_t& flow_id) {
  const std::string dtid = std::to_string(cupti_tracks.at(std::make_pair(a.device, a.stream)));
  out += ",\n{\"ph\":\"X\",\"cat\":\"";
  out += a.kind == activity_kind::kernel ? "kernel" : a.kind == activity_kind::memcpy ? "memcpy" : "memset";
  out += "\",\"name\":";
  const bool named = a.name < rep.activity_names().size();
  append_json_string(out, named ? rep.activity_demangled_names()[a.name] : std::string());
  out += ",\"pid\":3,\"tid\":" + dtid + ",\"ts\":" + format_ns_as_us(a.begin_ns - rep.origin_ns()) +
         ",\"dur\":" + format_ns_as_us(a.duration_ns());
  const bool mangled = named && rep.activity_demangled_names()[a.name] != rep.activity_names()[a.name];
  if (a.graph || mangled) {
    out += ",\"args\":{";
    if (mangled) {
      out += "\"mangled\":";
      append_json_string(out, rep.activity_names()[a.name]);
    }
    if (a.graph) out += std::string(mangled ? "," : "") + "\"graph\":" + std::to_string(a.graph);
    out += "}";
  }
  out += "}";
  if (a.instance < 0 || static_cast<std::size_t>(a.instance) >= rep.instances().size()) return;
  const scope_instance& s = rep.instances()[static_cast<std::size_t>(a.instance)];
  const std::string tid = trace_thread_tid(rep, s);
  const std::string id = std::to_string(++flow_id);
  out += ",\n{\"ph\":\"s\",\"cat\":\"cupti\",\"name\":\"launch\",\"id\":" + id + ",\"pid\":1,\"tid\":" + tid +
         ",\"ts\":" + format_ns_as_us(s.host_begin_ns - rep.origin_ns()) + "}";
  out += ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"cupti\",\"name\":\"launch\",\"id\":" + id +
         ",\"pid\":3,\"tid\":" + dtid + ",\"ts\":" + format_ns_as_us(a.begin_ns - rep.origin_ns()) + "}";
}

/// The chrome trace of `rep`, streamed into `sink`.
inline void serialize_chrome_trace(const report& rep, output_sink& sink) {
  std::string& out = sink.text();
  append_trace_head(out, rep);
  const trace_device_tracks device_tracks = append_trace_device_tracks(out, rep);
  std::uint64_t flow_id = 0;
  for (const auto& s : rep.instances()) {
    sink.row_done();
    append_trace_scope(out, rep, s, device_tracks, flow_id);
  }
  const trace_cupti_tracks cupti_tracks = append_trace_cupti_tracks(out, rep);
  for (const auto& a : rep.activities()) {
    sink.row_done();
    append_trace_activity(out, rep, a, cupti_tracks, flow_id);
  }
  out += "\n]}\n";
  sink.flush();
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
