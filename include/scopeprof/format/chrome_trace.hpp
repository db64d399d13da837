// scopeprof: Chrome trace event format (JSON), for Perfetto (ui.perfetto.dev) and chrome://tracing.
// Process 1 holds one track per host thread with complete ("X") events that nest exactly; process 2
// holds one track per (device, stream) with the device spans, and flow arrows join each host scope to
// its device span. Timestamps are microseconds from the library's start with three decimals, i.e. exact
// nanoseconds, so nesting survives the conversion.
//
// Events are written straight into the sink's memory: integers with std::to_chars, times by integer
// arithmetic, each name escaped once per serialization (tables built at the start), no string per event.
#pragma once

#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/version.hpp>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Track ids of process 2 (CUDA events), by (device, stream handle).
using trace_device_tracks = std::map<std::pair<std::int32_t, std::uint64_t>, std::size_t>;
/// Track ids of process 3 (CUPTI), by (device, CUPTI stream id).
using trace_cupti_tracks = std::map<std::pair<std::int32_t, std::uint32_t>, std::size_t>;

/// What the event writers look up, built once per trace: every name as its JSON literal, the track of
/// every thread (tracks are named by thread_desc::index, not by the position in threads()).
struct trace_tables {
  std::int64_t origin_ns = 0;
  bool cupti_valid = false;
  std::string empty_name = "\"\"";
  std::string none;
  std::vector<std::string> scope_names;    // by site id
  std::vector<std::uint32_t> thread_tids;  // by position in threads()
  std::vector<std::string> kernel_names;   // demangled, by activity name index
  std::vector<std::string> mangled_names;  // the symbol where it differs from the demangled name, else empty
};

/// Room one scope instance's events take besides its name twice (about 730 bytes at most), and one
/// activity's besides its two names (about 430).
constexpr std::size_t trace_event_room = 1024;

/// The literal's bytes at p (no terminating zero); returns the end.
template <std::size_t N>
inline char* trace_put(char* p, const char (&literal)[N]) noexcept {
  std::memcpy(p, literal, N - 1);
  return p + (N - 1);
}
inline char* trace_put(char* p, std::string_view s) noexcept {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}
inline char* trace_put_uint(char* p, std::uint64_t v) noexcept { return std::to_chars(p, p + 20, v).ptr; }

/// The track of an event on a device: consecutive events mostly share one, so the last one is kept.
template <class Map>
class trace_track_lookup {
 public:
  explicit trace_track_lookup(const Map& tracks) : tracks_(tracks) {}
  std::size_t operator()(const typename Map::key_type& key) {
    if (!found_ || key != last_) {
      tid_ = tracks_.at(key);
      last_ = key;
      found_ = true;
    }
    return tid_;
  }

 private:
  const Map& tracks_;
  typename Map::key_type last_{};
  std::size_t tid_ = 0;
  bool found_ = false;
};

inline std::string trace_json_literal(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

/// Scope names and thread tracks.
inline trace_tables trace_tables_of(const report& rep) {
  trace_tables t;
  t.origin_ns = rep.origin_ns();
  t.cupti_valid = rep.sources().cupti_valid;
  t.scope_names.reserve(rep.sites().size());
  for (const auto& site : rep.sites()) t.scope_names.push_back(trace_json_literal(site.name));
  t.thread_tids.reserve(rep.threads().size());
  for (const auto& th : rep.threads()) t.thread_tids.push_back(th.index + 1u);
  return t;
}

/// Kernel names, demangled and (where that differs) as the symbol.
inline void add_trace_kernel_names(trace_tables& t, const report& rep) {
  const auto& names = rep.activity_names();
  const auto& demangled = rep.activity_demangled_names();
  t.kernel_names.reserve(names.size());
  t.mangled_names.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    t.kernel_names.push_back(trace_json_literal(demangled[i]));
    t.mangled_names.push_back(demangled[i] != names[i] ? trace_json_literal(names[i]) : std::string());
  }
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

/// A scope's device span and the flow arrow from its host begin to its device begin.
inline char* write_trace_device_span(char* p, const trace_tables& t, const scope_instance& s, std::string_view name,
                                     std::uint32_t tid, std::size_t dtid, std::uint64_t id) noexcept {
  const std::int64_t device_ts = s.device_begin_ns - t.origin_ns;
  p = trace_put(p, ",\n{\"ph\":\"X\",\"cat\":\"device\",\"name\":");
  p = trace_put(p, name);
  p = trace_put(p, ",\"pid\":2,\"tid\":");
  p = trace_put_uint(p, dtid);
  p = trace_put(p, ",\"ts\":");
  p = write_ns_as_us(p, device_ts);
  p = trace_put(p, ",\"dur\":");
  p = write_ns_as_us(p, s.device_span_ns());
  p = trace_put(p, ",\"args\":{\"device_self_us\":");
  p = write_ns_as_us(p, s.device_self_ns);
  p = trace_put(p, "}},\n{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":");
  p = trace_put_uint(p, id);
  p = trace_put(p, ",\"pid\":1,\"tid\":");
  p = trace_put_uint(p, tid);
  p = trace_put(p, ",\"ts\":");
  p = write_ns_as_us(p, s.host_begin_ns - t.origin_ns);
  p = trace_put(p, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":");
  p = trace_put_uint(p, id);
  p = trace_put(p, ",\"pid\":2,\"tid\":");
  p = trace_put_uint(p, dtid);
  p = trace_put(p, ",\"ts\":");
  p = write_ns_as_us(p, device_ts);
  return trace_put(p, "}");
}

/// One scope instance: its host event and, with a device span, the device event and a flow arrow from
/// the host begin to the device begin.
inline void append_trace_scope(output_sink& sink, const trace_tables& t, const scope_instance& s,
                               trace_track_lookup<trace_device_tracks>& device_track, std::uint64_t& flow_id) {
  const std::string& name = s.site < t.scope_names.size() ? t.scope_names[s.site] : t.empty_name;
  const std::uint32_t tid = s.thread < t.thread_tids.size() ? t.thread_tids[s.thread] : s.thread + 1u;
  char* p = sink.reserve(trace_event_room + 2 * name.size());
  p = trace_put(p, ",\n{\"ph\":\"X\",\"cat\":\"scope\",\"name\":");
  p = trace_put(p, name);
  p = trace_put(p, ",\"pid\":1,\"tid\":");
  p = trace_put_uint(p, tid);
  p = trace_put(p, ",\"ts\":");
  p = write_ns_as_us(p, s.host_begin_ns - t.origin_ns);
  p = trace_put(p, ",\"dur\":");
  p = write_ns_as_us(p, s.host_total_ns());
  p = trace_put(p, ",\"args\":{\"host_self_us\":");
  p = write_ns_as_us(p, s.host_self_ns);
  if (s.device == device_status::ok) {
    p = trace_put(p, ",\"device_span_us\":");
    p = write_ns_as_us(p, s.device_span_ns());
  }
  if (t.cupti_valid) {
    p = trace_put(p, ",\"device_busy_us\":");
    p = write_ns_as_us(p, s.device_busy_ns);
    p = trace_put(p, ",\"kernels\":");
    p = trace_put_uint(p, s.kernels);
  } else if (s.device == device_status::captured) {
    p = trace_put(p, ",\"device_span\":\"n/a (captured)\"");
  } else if (s.device == device_status::invalid) {
    p = trace_put(p, ",\"device_span\":\"n/a (CUDA error)\"");
  }
  if (s.orphan) p = trace_put(p, ",\"orphan\":true");
  p = trace_put(p, "}}");
  if (s.device == device_status::ok)
    p = write_trace_device_span(p, t, s, name, tid, device_track(std::make_pair(s.device_id, s.stream)), ++flow_id);
  sink.commit(p);
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

/// The flow arrow from a launching scope (at its host begin) to its kernel, copy or memset.
inline char* write_trace_launch(char* p, const trace_tables& t, const scope_instance& s, const device_activity& a,
                                std::size_t dtid, std::uint64_t id) noexcept {
  p = trace_put(p, ",\n{\"ph\":\"s\",\"cat\":\"cupti\",\"name\":\"launch\",\"id\":");
  p = trace_put_uint(p, id);
  p = trace_put(p, ",\"pid\":1,\"tid\":");
  p = trace_put_uint(p, s.thread < t.thread_tids.size() ? t.thread_tids[s.thread] : s.thread + 1u);
  p = trace_put(p, ",\"ts\":");
  p = write_ns_as_us(p, s.host_begin_ns - t.origin_ns);
  p = trace_put(p, "},\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"cupti\",\"name\":\"launch\",\"id\":");
  p = trace_put_uint(p, id);
  p = trace_put(p, ",\"pid\":3,\"tid\":");
  p = trace_put_uint(p, dtid);
  p = trace_put(p, ",\"ts\":");
  p = write_ns_as_us(p, a.begin_ns - t.origin_ns);
  return trace_put(p, "}");
}

/// One kernel, copy or memset, and a flow arrow from its launching scope (at the scope's host begin).
inline void append_trace_activity(output_sink& sink, const report& rep, const trace_tables& t, const device_activity& a,
                                  trace_track_lookup<trace_cupti_tracks>& cupti_track, std::uint64_t& flow_id) {
  const bool named = a.name < t.kernel_names.size();
  const std::string& name = named ? t.kernel_names[a.name] : t.empty_name;
  const std::string& mangled = named ? t.mangled_names[a.name] : t.none;
  const std::size_t dtid = cupti_track(std::make_pair(a.device, a.stream));
  char* p = sink.reserve(trace_event_room + name.size() + mangled.size());
  p = trace_put(p, ",\n{\"ph\":\"X\",\"cat\":\"");
  p = trace_put(p, a.kind == activity_kind::kernel ? "kernel" : a.kind == activity_kind::memcpy ? "memcpy" : "memset");
  p = trace_put(p, "\",\"name\":");
  p = trace_put(p, name);
  p = trace_put(p, ",\"pid\":3,\"tid\":");
  p = trace_put_uint(p, dtid);
  p = trace_put(p, ",\"ts\":");
  p = write_ns_as_us(p, a.begin_ns - t.origin_ns);
  p = trace_put(p, ",\"dur\":");
  p = write_ns_as_us(p, a.duration_ns());
  if (a.graph || !mangled.empty()) {
    p = trace_put(p, ",\"args\":{");
    if (!mangled.empty()) {
      p = trace_put(p, "\"mangled\":");
      p = trace_put(p, mangled);
    }
    if (a.graph) {
      p = trace_put(p, mangled.empty() ? "\"graph\":" : ",\"graph\":");
      p = trace_put_uint(p, a.graph);
    }
    p = trace_put(p, "}");
  }
  p = trace_put(p, "}");
  if (a.instance >= 0 && static_cast<std::size_t>(a.instance) < rep.instances().size())
    p = write_trace_launch(p, t, rep.instances()[static_cast<std::size_t>(a.instance)], a, dtid, ++flow_id);
  sink.commit(p);
}

/// The chrome trace of `rep`, streamed into `sink`.
inline void serialize_chrome_trace(const report& rep, output_sink& sink) {
  trace_tables t = trace_tables_of(rep);
  std::string text;
  append_trace_head(text, rep);
  const trace_device_tracks device_tracks = append_trace_device_tracks(text, rep);
  sink.append(text);
  trace_track_lookup<trace_device_tracks> device_track(device_tracks);
  std::uint64_t flow_id = 0;
  for (const auto& s : rep.instances()) {
    sink.row_done();
    append_trace_scope(sink, t, s, device_track, flow_id);
  }
  text.clear();
  const trace_cupti_tracks cupti_tracks = append_trace_cupti_tracks(text, rep);
  sink.append(text);
  if (!rep.activities().empty()) add_trace_kernel_names(t, rep);
  trace_track_lookup<trace_cupti_tracks> cupti_track(cupti_tracks);
  for (const auto& a : rep.activities()) {
    sink.row_done();
    append_trace_activity(sink, rep, t, a, cupti_track, flow_id);
  }
  sink.append("\n]}\n");
  sink.flush();
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
