// scopeprof: Chrome trace event format (JSON), for Perfetto (ui.perfetto.dev) and chrome://tracing.
// Process 1 holds one track per host thread with complete ("X") events that nest exactly; process 2
// holds one track per (device, stream) with the device spans, and flow arrows join each host scope to
// its device span. Timestamps are microseconds from the library's start with three decimals, i.e. exact
// nanoseconds, so nesting survives the conversion.
#pragma once

#include <scopeprof/detail/file.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/version.hpp>

#include <map>
#include <string>
#include <utility>

SCOPEPROF_NAMESPACE_BEGIN

inline std::string report::chrome_trace() const {
  using namespace detail;
  std::string out = "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"scopeprof " SCOPEPROF_VERSION_STRING "\"";
  out += ",\"entered\":" + std::to_string(counts_.entered) + ",\"recorded\":" + std::to_string(counts_.recorded) +
         ",\"dropped\":" + std::to_string(counts_.dropped) + ",\"in_flight\":" + std::to_string(counts_.in_flight) +
         ",\"host_source\":";
  append_json_string(out, sources_.host);
  out += ",\"device_source\":";
  append_json_string(out, sources_.device);
  out += ",\"cupti_source\":";
  append_json_string(out, sources_.cupti);
  out += "},\"traceEvents\":[\n";
  out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{\"name\":\"host\"}}";
  for (const auto& t : threads_) {
    std::string label = t.name.empty() ? "thread " + std::to_string(t.index) : t.name;
    if (t.os_id) label += " (tid " + std::to_string(t.os_id) + ")";
    out += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" + std::to_string(t.index + 1) + ",\"args\":{\"name\":";
    append_json_string(out, label);
    out += "}}";
    out += ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":1,\"tid\":" + std::to_string(t.index + 1) +
           ",\"args\":{\"sort_index\":" + std::to_string(t.index) + "}}";
  }
  // Device tracks: one tid per (device, stream), numbered in order of first appearance.
  std::map<std::pair<std::int32_t, std::uint64_t>, std::size_t> device_tracks;
  for (const auto& s : instances_)
    if (s.device == device_status::ok) device_tracks.emplace(std::make_pair(s.device_id, s.stream), 0);
  if (!device_tracks.empty()) {
    out += ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":2,\"tid\":0,\"args\":{\"name\":\"device (CUDA events)\"}}";
    std::size_t k = 0;
    for (auto& [key, tid] : device_tracks) {
      tid = ++k;
      char stream_hex[32];
      std::snprintf(stream_hex, sizeof stream_hex, "0x%llx", static_cast<unsigned long long>(key.second));
      std::string label = "GPU " + std::to_string(key.first) + " stream " + (key.second ? stream_hex : "default");
      out += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":2,\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":";
      append_json_string(out, label);
      out += "}}";
    }
  }
  std::uint64_t flow_id = 0;
  for (const auto& s : instances_) {
    const std::string& name = s.site < sites_.size() ? sites_[s.site].name : std::string();
    // Tracks are named by thread_desc::index, so events use it too (not the position in threads()).
    const std::string tid = std::to_string((s.thread < threads_.size() ? threads_[s.thread].index : s.thread) + 1);
    out += ",\n{\"ph\":\"X\",\"cat\":\"scope\",\"name\":";
    append_json_string(out, name);
    out += ",\"pid\":1,\"tid\":" + tid + ",\"ts\":" + format_ns_as_us(s.host_begin_ns - origin_ns_) +
           ",\"dur\":" + format_ns_as_us(s.host_total_ns()) + ",\"args\":{\"host_self_us\":" + format_ns_as_us(s.host_self_ns);
    if (s.device == device_status::ok) out += ",\"device_span_us\":" + format_ns_as_us(s.device_span_ns());
    if (sources_.cupti_valid)
      out += ",\"device_busy_us\":" + format_ns_as_us(s.device_busy_ns) + ",\"kernels\":" + std::to_string(s.kernels);
    else if (s.device == device_status::captured) out += ",\"device_span\":\"n/a (captured)\"";
    else if (s.device == device_status::invalid) out += ",\"device_span\":\"n/a (CUDA error)\"";
    if (s.orphan) out += ",\"orphan\":true";
    out += "}}";
    if (s.device != device_status::ok) continue;
    const std::size_t dtid = device_tracks[std::make_pair(s.device_id, s.stream)];
    const std::string id = std::to_string(++flow_id);
    out += ",\n{\"ph\":\"X\",\"cat\":\"device\",\"name\":";
    append_json_string(out, name);
    out += ",\"pid\":2,\"tid\":" + std::to_string(dtid) + ",\"ts\":" + format_ns_as_us(s.device_begin_ns - origin_ns_) +
           ",\"dur\":" + format_ns_as_us(s.device_span_ns()) + ",\"args\":{\"device_self_us\":" +
           format_ns_as_us(s.device_self_ns) + "}}";
    out += ",\n{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":" + id + ",\"pid\":1,\"tid\":" + tid +
           ",\"ts\":" + format_ns_as_us(s.host_begin_ns - origin_ns_) + "}";
    out += ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":" + id +
           ",\"pid\":2,\"tid\":" + std::to_string(dtid) + ",\"ts\":" + format_ns_as_us(s.device_begin_ns - origin_ns_) + "}";
  }
  // CUPTI: process 3, one track per (device, CUPTI stream id) with every kernel, copy and memset, and a
  // flow arrow from the launching scope (at its host begin) to each of them.
  std::map<std::pair<std::int32_t, std::uint32_t>, std::size_t> cupti_tracks;
  for (const auto& a : activities_) cupti_tracks.emplace(std::make_pair(a.device, a.stream), 0);
  if (!cupti_tracks.empty()) {
    out += ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":3,\"tid\":0,\"args\":{\"name\":\"device (CUPTI)\"}}";
    std::size_t k = 0;
    for (auto& [key, tid] : cupti_tracks) {
      tid = ++k;
      out += ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":3,\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":";
      append_json_string(out, "GPU " + std::to_string(key.first) + " stream " + std::to_string(key.second));
      out += "}}";
    }
  }
  for (const auto& a : activities_) {
    const std::string dtid = std::to_string(cupti_tracks[std::make_pair(a.device, a.stream)]);
    out += ",\n{\"ph\":\"X\",\"cat\":\"";
    out += a.kind == activity_kind::kernel ? "kernel" : a.kind == activity_kind::memcpy ? "memcpy" : "memset";
    out += "\",\"name\":";
    const bool named = a.name < activity_names_.size();
    append_json_string(out, named ? activity_demangled_[a.name] : std::string());
    out += ",\"pid\":3,\"tid\":" + dtid + ",\"ts\":" + format_ns_as_us(a.begin_ns - origin_ns_) +
           ",\"dur\":" + format_ns_as_us(a.duration_ns());
    const bool mangled = named && activity_demangled_[a.name] != activity_names_[a.name];
    if (a.graph || mangled) {
      out += ",\"args\":{";
      if (mangled) {
        out += "\"mangled\":";
        append_json_string(out, activity_names_[a.name]);
      }
      if (a.graph) out += std::string(mangled ? "," : "") + "\"graph\":" + std::to_string(a.graph);
      out += "}";
    }
    out += "}";
    if (a.instance < 0 || static_cast<std::size_t>(a.instance) >= instances_.size()) continue;
    const scope_instance& s = instances_[static_cast<std::size_t>(a.instance)];
    const std::string tid = std::to_string((s.thread < threads_.size() ? threads_[s.thread].index : s.thread) + 1);
    const std::string id = std::to_string(++flow_id);
    out += ",\n{\"ph\":\"s\",\"cat\":\"cupti\",\"name\":\"launch\",\"id\":" + id + ",\"pid\":1,\"tid\":" + tid +
           ",\"ts\":" + format_ns_as_us(s.host_begin_ns - origin_ns_) + "}";
    out += ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"cupti\",\"name\":\"launch\",\"id\":" + id +
           ",\"pid\":3,\"tid\":" + dtid + ",\"ts\":" + format_ns_as_us(a.begin_ns - origin_ns_) + "}";
  }
  out += "\n]}\n";
  return out;
}

inline write_result report::write_chrome_trace(const std::string& path) const {
  return detail::write_rendered(path, "Chrome trace", [this] { return chrome_trace(); });
}

SCOPEPROF_NAMESPACE_END
