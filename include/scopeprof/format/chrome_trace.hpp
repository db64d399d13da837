// scopeprof: Chrome trace event format (JSON) in the PyTorch profiler's (Kineto's) conventions, for
// Perfetto, chrome://tracing, speedscope and HolisticTraceAnalysis (docs/formats.md has every field).
//
// - host: pid = getpid(), tid = the OS thread id; each scope a "user_annotation" slice; the API calls
//   that launched CUPTI's work "cuda_runtime" / "cuda_driver" slices on the same track;
// - device d: pid = d; each device span (CUDA events) a "gpu_user_annotation" slice on a track per
//   (stream, host thread); each kernel, copy and memset ("kernel", "gpu_memcpy", "gpu_memset") on
//   tid = its CUPTI stream id, with args.stream, args.correlation, args.device and args["External id"];
// - flows in the flow-v2 form (bind_id with flow_out / flow_in on the slices themselves), so each arrow
//   binds to exactly the slices it joins whatever else starts at the same instant;
// - ts and dur in 1/1024 microsecond (detail/trace_meta.hpp): exact doubles, so nesting survives any
//   consumer's floating-point arithmetic;
// - slices that are scopes carry no args (speedscope names a frame by name + args): the per-instance
//   figures are in the top-level "scopeprofScopes" table, row k for the k-th user_annotation slice.
//
// Events are written straight into the sink's memory: integers with std::to_chars, times by integer
// arithmetic, each name escaped once per serialization (tables built at the start), no string per event.
#pragma once

#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/detail/trace_launches.hpp>
#include <scopeprof/detail/trace_meta.hpp>
#include <scopeprof/detail/trace_steps.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/version.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Tracks of the device spans, by (device, stream handle, host thread, lane): tids from trace_span_tid_base
/// up, apart from CUPTI's stream ids (the kernel tracks). Spans that overlap without nesting (a child's span
/// running past its parent's) go to the next lane, so every track nests.
using trace_span_key = std::tuple<std::int32_t, std::uint64_t, std::uint32_t, std::uint32_t>;
using trace_span_tracks = std::map<trace_span_key, std::uint32_t>;
constexpr std::uint32_t trace_span_tid_base = 1u << 30;
/// Host tid of a thread without a usable OS id (unknown, or reused by an earlier thread of the report).
constexpr std::uint32_t trace_synthetic_tid_base = 1u << 31;
/// pid of device d (a device id CUPTI or CUDA could not give, below 0, shows as 2^31 - 1): viewers read
/// pids and tids as 32-bit unsigned numbers.
inline std::int64_t trace_device_pid(std::int64_t device) noexcept { return device >= 0 ? device : 0x7FFFFFFF; }
/// Track of launch calls on a thread the report holds no scope of: CUPTI's thread id, kept below 2^30.
inline std::uint64_t trace_foreign_tid(std::uint64_t os_tid) noexcept {
  return os_tid < (std::uint64_t{1} << 30) ? os_tid : (std::uint64_t{3} << 30) + (os_tid & ((std::uint64_t{1} << 30) - 1));
}
/// Flow ids (bind_id): scope i -> trace_scope_flow + i, launch call k -> trace_launch_flow + k.
constexpr std::uint64_t trace_scope_flow = std::uint64_t{1} << 32;
constexpr std::uint64_t trace_launch_flow = std::uint64_t{2} << 32;

/// What the event writers look up, built once per trace.
struct trace_tables {
  std::int64_t origin_ns = 0;
  bool cupti_valid = false;
  std::string empty_name = "\"\"";
  std::string none;
  std::vector<std::string> scope_names;   // by site id, as JSON literals
  std::vector<std::string> thread_track;  // by position in threads(): ",\"pid\":P,\"tid\":T"
  std::vector<std::string> thread_label;
  std::vector<std::uint64_t> thread_tid;
  std::int64_t pid = 0;
  std::vector<std::string> kernel_names;   // by activity name index (copies and memsets named as Kineto does)
  std::vector<std::string> mangled_names;  // the symbol where it differs from the demangled name, else empty
  trace_span_tracks span_tracks;
  std::vector<std::uint32_t> span_tid;  // by instance (device-timed ones)
  /// Tracks of CUPTI's work by (device, stream id, lane): lane 0 is tid = the stream id, as Kineto has it;
  /// work overlapping without nesting on one stream (a graph's parallel branches) goes to lanes 1, 2...
  std::map<std::tuple<std::int32_t, std::uint32_t, std::uint32_t>, std::uint32_t> work_tracks;
  std::vector<std::uint32_t> work_tid;  // by activity
  trace_launch_plan plan;
};

/// Room one event takes besides its names (about 400 bytes at most).
constexpr std::size_t trace_event_room = 1024;

inline std::string trace_json_literal(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

/// The name a copy or memset slice gets, as Kineto names them (HTA finds memory work by "Memcpy" and
/// "Memset"): "[CUDA memcpy HtoD]" -> "Memcpy HtoD", "[CUDA memset]" -> "Memset"; others unchanged.
inline std::string trace_activity_name(std::string_view name) {
  for (std::string_view kind : {std::string_view("memcpy"), std::string_view("memset")}) {
    const std::string head = "[CUDA " + std::string(kind);
    if (name.size() > head.size() && name.substr(0, head.size()) == head && name.back() == ']' &&
        (name[head.size()] == ']' || name[head.size()] == ' ')) {
      std::string out = kind == "memcpy" ? "Memcpy" : "Memset";
      out += name.substr(head.size(), name.size() - head.size() - 1);
      return out;
    }
  }
  return std::string(name);
}

/// The track of every device span: by (device, stream, thread), then the first lane where it nests.
/// Spans are taken by device begin (longest first); report order already is that within a key unless
/// device times run against host order, and only then are they sorted.
inline void assign_span_tracks(const report& rep, trace_tables& t) {
  const auto& in = rep.instances();
  using key_type = std::tuple<std::int32_t, std::uint64_t, std::uint32_t>;
  const auto key = [&](std::uint32_t i) { return key_type(in[i].device_id, in[i].stream, in[i].thread); };
  std::vector<std::uint32_t> timed;
  std::map<key_type, std::pair<std::int64_t, std::int64_t>> last;  // per key: the last (begin, -end)
  bool ordered = true;
  for (std::uint32_t i = 0; i < in.size(); ++i) {
    if (in[i].device != device_status::ok) continue;
    timed.push_back(i);
    const auto here = std::make_pair(in[i].device_begin_ns, -in[i].device_end_ns);
    auto [it, fresh] = last.emplace(key(i), here);
    if (!fresh) {
      ordered = ordered && !(here < it->second);
      it->second = here;
    }
  }
  if (!ordered)
    std::stable_sort(timed.begin(), timed.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::make_tuple(key(a), in[a].device_begin_ns, -in[a].device_end_ns) <
             std::make_tuple(key(b), in[b].device_begin_ns, -in[b].device_end_ns);
    });
  std::map<key_type, std::vector<std::vector<std::int64_t>>> lanes;  // per key, per lane: ends of open spans
  std::vector<std::uint32_t> lane_of(in.size(), 0);
  std::vector<std::vector<std::int64_t>>* open_lanes = nullptr;
  for (std::size_t k = 0; k < timed.size(); ++k) {
    const std::uint32_t i = timed[k];
    if (k == 0 || key(timed[k - 1]) != key(i)) open_lanes = &lanes[key(i)];
    std::uint32_t lane = 0;
    for (;; ++lane) {
      if (lane == open_lanes->size()) open_lanes->emplace_back();
      auto& open = (*open_lanes)[lane];
      while (!open.empty() && open.back() <= in[i].device_begin_ns) open.pop_back();
      if (open.empty() || in[i].device_end_ns <= open.back()) break;
    }
    (*open_lanes)[lane].push_back(in[i].device_end_ns);
    lane_of[i] = lane;
  }
  for (const auto& [k, per_lane] : lanes)
    for (std::uint32_t lane = 0; lane < per_lane.size(); ++lane) t.span_tracks.emplace(std::tuple_cat(k, std::make_tuple(lane)), 0);
  std::uint32_t next = trace_span_tid_base;
  for (auto& [k, tid] : t.span_tracks) tid = next++;
  t.span_tid.assign(in.size(), 0);
  trace_span_key previous{};
  std::uint32_t previous_tid = 0;
  for (const std::uint32_t i : timed) {
    const trace_span_key k = std::tuple_cat(key(i), std::make_tuple(lane_of[i]));
    if (previous_tid == 0 || k != previous) previous_tid = t.span_tracks.at(k);
    previous = k;
    t.span_tid[i] = previous_tid;
  }
}

/// The track of every kernel, copy and memset (activities come by begin time).
inline void assign_work_tracks(const report& rep, trace_tables& t) {
  std::map<std::pair<std::int32_t, std::uint32_t>, std::vector<std::vector<std::int64_t>>> lanes;
  std::vector<std::uint32_t> lane_of(rep.activities().size(), 0);
  for (std::size_t i = 0; i < rep.activities().size(); ++i) {
    const device_activity& a = rep.activities()[i];
    auto& per_lane = lanes[{a.device, a.stream}];
    std::uint32_t lane = 0;
    for (;; ++lane) {
      if (lane == per_lane.size()) per_lane.emplace_back();
      auto& open = per_lane[lane];
      while (!open.empty() && open.back() <= a.begin_ns) open.pop_back();
      if (open.empty() || a.end_ns <= open.back()) break;
    }
    per_lane[lane].push_back(a.end_ns);
    lane_of[i] = lane;
    t.work_tracks.emplace(std::make_tuple(a.device, a.stream, lane), 0);
  }
  std::uint32_t next = trace_span_tid_base + (1u << 29);
  for (auto& [key, tid] : t.work_tracks) tid = std::get<2>(key) == 0 ? std::get<1>(key) : next++;
  t.work_tid.resize(rep.activities().size());
  for (std::size_t i = 0; i < rep.activities().size(); ++i) {
    const device_activity& a = rep.activities()[i];
    t.work_tid[i] = lane_of[i] == 0 ? a.stream : t.work_tracks.at(std::make_tuple(a.device, a.stream, lane_of[i]));
  }
}

/// Scope names, host tracks (real pid and OS tids), span tracks and the launch plan.
inline trace_tables trace_tables_of(const report& rep) {
  trace_tables t;
  t.origin_ns = rep.origin_ns();
  t.cupti_valid = rep.sources().cupti_valid;
  t.pid = rep.process().pid;
  t.scope_names.reserve(rep.sites().size());
  for (const auto& site : rep.sites()) t.scope_names.push_back(trace_json_literal(site.name));
  std::set<std::uint64_t> used;
  for (const auto& th : rep.threads()) {
    const bool own = th.os_id != 0 && th.os_id < trace_span_tid_base && used.insert(th.os_id).second;
    const std::uint64_t tid = own ? th.os_id : trace_synthetic_tid_base + t.thread_tid.size();
    t.thread_tid.push_back(tid);
    t.thread_track.push_back(",\"pid\":" + std::to_string(t.pid) + ",\"tid\":" + std::to_string(tid));
    t.thread_label.push_back(th.name.empty() ? "thread " + std::to_string(th.index) : th.name);
  }
  assign_span_tracks(rep, t);
  assign_work_tracks(rep, t);
  t.plan = plan_trace_flows(rep);
  return t;
}

/// Kernel names, demangled and (where that differs) as the symbol.
inline void add_trace_kernel_names(trace_tables& t, const report& rep) {
  const auto& names = rep.activity_names();
  const auto& demangled = rep.activity_demangled_names();
  t.kernel_names.reserve(names.size());
  t.mangled_names.reserve(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    t.kernel_names.push_back(trace_json_literal(trace_activity_name(demangled[i])));
    t.mangled_names.push_back(demangled[i] != names[i] ? trace_json_literal(names[i]) : std::string());
  }
}

/// Everything before the events, in Kineto's order (HTA reads the rank with the regex "rank":\s+(\d+)
/// from the first line that has it, so distributedInfo comes first, written with a space after colons).
inline void append_trace_top(std::string& out, const report& rep, const std::set<std::int32_t>& devices) {
  const process_desc& proc = rep.process();
  out += "{\"schemaVersion\":1,\"distributedInfo\": {\"rank\": " + std::to_string(proc.rank) +
         ", \"world_size\": " + std::to_string(proc.world_size) + "},\"deviceProperties\":[";
  for (auto it = devices.begin(); it != devices.end(); ++it)
    out += (it == devices.begin() ? "{\"id\":" : ",{\"id\":") + std::to_string(*it) + "}";
  out += "]";
  if (proc.base_unix_ns != 0) out += ",\"baseTimeNanoseconds\":" + std::to_string(proc.base_unix_ns);
  out += ",\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"scopeprof " SCOPEPROF_VERSION_STRING "\"";
  out += ",\"entered\":" + std::to_string(rep.counts().entered) + ",\"recorded\":" + std::to_string(rep.counts().recorded) +
         ",\"dropped\":" + std::to_string(rep.counts().dropped) + ",\"in_flight\":" + std::to_string(rep.counts().in_flight) +
         ",\"rank_source\":";
  append_json_string(out, proc.rank_source);
  out += ",\"local_rank\":" + std::to_string(proc.local_rank) + ",\"host\":";
  append_json_string(out, proc.host);
  out += ",\"program\":";
  append_json_string(out, proc.program);
  out += ",\"pid\":" + std::to_string(proc.pid);
  out += ",\"time_unit\":\"us, multiples of 1/1024 (ns = floor(value * 1000))\",\"host_source\":";
  append_json_string(out, rep.sources().host);
  out += ",\"device_source\":";
  append_json_string(out, rep.sources().device);
  out += ",\"cupti_source\":";
  append_json_string(out, rep.sources().cupti);
  out += "},\"traceEvents\":[\n";
}

inline void append_trace_meta(std::string& out, const char* what, std::int64_t pid, std::int64_t tid, const char* key,
                              std::string_view value, bool is_string) {
  out += out.back() == '\n' ? "{\"ph\":\"M\",\"name\":\"" : ",\n{\"ph\":\"M\",\"name\":\"";
  out += what;
  out += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"" + key + "\":";
  if (is_string) append_json_string(out, value);
  else out += value;
  out += "}}";
}

/// The opening and every process and thread name: host, each device (span and stream tracks), and the
/// threads of launch calls the report holds no scope of.
inline void append_trace_head(std::string& out, const report& rep, const trace_tables& t) {
  std::set<std::int32_t> devices;
  for (const auto& [key, tid] : t.span_tracks) devices.insert(std::get<0>(key));
  for (const auto& a : rep.activities()) devices.insert(a.device);
  append_trace_top(out, rep, devices);
  append_trace_meta(out, "process_name", t.pid, 0, "name", "host", true);
  append_trace_meta(out, "process_sort_index", t.pid, 0, "sort_index", "-1", false);
  for (std::size_t i = 0; i < rep.threads().size(); ++i) {
    const auto tid = static_cast<std::int64_t>(t.thread_tid[i]);
    append_trace_meta(out, "thread_name", t.pid, tid, "name", t.thread_label[i], true);
    append_trace_meta(out, "thread_sort_index", t.pid, tid, "sort_index", std::to_string(i), false);
  }
  std::set<std::uint64_t> foreign;  // launch threads the report holds no scope of
  for (const auto& l : t.plan.launches)
    if (l.thread < 0 && foreign.insert(l.os_tid).second)
      append_trace_meta(out, "thread_name", t.pid, static_cast<std::int64_t>(trace_foreign_tid(l.os_tid)), "name",
                        "CUDA API thread " + std::to_string(l.os_tid), true);
  for (const std::int32_t d : devices) {
    append_trace_meta(out, "process_name", trace_device_pid(d), 0, "name", "GPU " + std::to_string(d), true);
    append_trace_meta(out, "process_sort_index", trace_device_pid(d), 0, "sort_index", std::to_string(d), false);
  }
  for (const auto& [key, tid] : t.span_tracks) {
    char stream_hex[32];
    std::snprintf(stream_hex, sizeof stream_hex, "0x%llx", static_cast<unsigned long long>(std::get<1>(key)));
    const std::uint32_t th = std::get<2>(key), lane = std::get<3>(key);
    append_trace_meta(out, "thread_name", trace_device_pid(std::get<0>(key)), tid, "name",
                      std::string("stream ") + (std::get<1>(key) ? stream_hex : "default") + " (CUDA events, " +
                          (th < t.thread_label.size() ? t.thread_label[th] : "thread " + std::to_string(th)) + ")" +
                          (lane ? " lane " + std::to_string(lane) : std::string()),
                      true);
  }
  for (const auto& [key, tid] : t.work_tracks)
    append_trace_meta(out, "thread_name", trace_device_pid(std::get<0>(key)), tid, "name",
                      "stream " + std::to_string(std::get<1>(key)) +
                          (std::get<2>(key) ? " lane " + std::to_string(std::get<2>(key)) : std::string()),
                      true);
}

/// `,"pid":P,"tid":T` of a device track.
inline char* write_device_track(char* p, std::int64_t device, std::uint64_t tid) noexcept {
  p = trace_put(p, ",\"pid\":");
  p = trace_put_int(p, trace_device_pid(device));
  p = trace_put(p, ",\"tid\":");
  return trace_put_uint(p, tid);
}

inline char* write_trace_flow(char* p, std::uint64_t id, bool out) noexcept {
  p = trace_put(p, ",\"bind_id\":");
  p = trace_put_uint(p, id);
  return trace_put(p, out ? ",\"flow_out\":true" : ",\"flow_in\":true");
}

/// One scope instance: its host slice and, with a device span, the span's slice (no args on either).
inline void append_trace_scope(output_sink& sink, const trace_tables& t, const scope_instance& s, std::size_t index) {
  const std::string& name = s.site < t.scope_names.size() ? t.scope_names[s.site] : t.empty_name;
  const std::string& track = s.thread < t.thread_track.size() ? t.thread_track[s.thread] : t.none;
  char* p = sink.reserve(trace_event_room + 2 * name.size() + track.size());
  p = write_trace_slice(p, "user_annotation", name, track, s.host_begin_ns - t.origin_ns, s.host_end_ns - t.origin_ns);
  if (t.plan.scope_flow_out[index]) p = write_trace_flow(p, trace_scope_flow + index, true);
  p = trace_put(p, "}");
  if (s.device == device_status::ok) {
    p = trace_put(p, ",\n{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":");
    p = trace_put(p, name);
    p = write_device_track(p, s.device_id, t.span_tid[index]);
    p = trace_put(p, ",\"ts\":");
    p = write_trace_time(p, s.device_begin_ns - t.origin_ns);
    p = trace_put(p, ",\"dur\":");
    p = write_trace_dur(p, s.device_begin_ns - t.origin_ns, s.device_end_ns - t.origin_ns);
    if (s.device_begin_ns >= s.host_begin_ns) p = write_trace_flow(p, trace_scope_flow + index, false);
    p = trace_put(p, "}");
  }
  sink.commit(p);
}

/// `,"args":{"External id":E,` (E: 1-based number of the launching scope's slice), or `,"args":{`.
inline char* write_external_id(char* p, std::int64_t instance) noexcept {
  p = trace_put(p, ",\"args\":{");
  if (instance < 0) return p;
  p = trace_put(p, "\"External id\":");
  p = trace_put_uint(p, static_cast<std::uint64_t>(instance) + 1u);
  return trace_put(p, ",");
}

/// One launch call: a cuda_runtime (or cuda_driver) slice on its thread's host track.
inline void append_trace_launch(output_sink& sink, const report& rep, const trace_tables& t, std::size_t k) {
  const trace_launch& l = t.plan.launches[k];
  const device_activity& a = rep.activities()[l.activity];
  const std::string& name = a.launch_name < t.kernel_names.size() ? t.kernel_names[a.launch_name] : t.empty_name;
  std::string foreign;
  if (l.thread < 0) foreign = ",\"pid\":" + std::to_string(t.pid) + ",\"tid\":" + std::to_string(trace_foreign_tid(l.os_tid));
  const std::string& track = l.thread >= 0 ? t.thread_track[static_cast<std::size_t>(l.thread)] : foreign;
  char* p = sink.reserve(trace_event_room + name.size() + track.size());
  p = write_trace_slice(p, a.launch_driver ? "cuda_driver" : "cuda_runtime", name, track, l.begin_ns - t.origin_ns,
                        l.end_ns - t.origin_ns);
  if (l.flow_out) p = write_trace_flow(p, trace_launch_flow + k, true);
  p = write_external_id(p, l.instance);
  p = trace_put(p, "\"correlation\":");
  p = trace_put_uint(p, a.correlation);
  p = trace_put(p, "}}");
  sink.commit(p);
}

/// One kernel, copy or memset on its device's CUPTI stream track, with the args HTA reads.
inline void append_trace_activity(output_sink& sink, const trace_tables& t, const device_activity& a, std::size_t i) {
  // (tid: the stream id, or a lane track of that stream where work overlaps; args.stream is the stream)
  const bool named = a.name < t.kernel_names.size();
  const std::string& name = named ? t.kernel_names[a.name] : t.empty_name;
  const std::string& mangled = named ? t.mangled_names[a.name] : t.none;
  char* p = sink.reserve(trace_event_room + name.size() + mangled.size());
  p = trace_put(p, ",\n{\"ph\":\"X\",\"cat\":\"");
  p = trace_put(p, a.kind == activity_kind::kernel ? "kernel" : a.kind == activity_kind::memcpy ? "gpu_memcpy" : "gpu_memset");
  p = trace_put(p, "\",\"name\":");
  p = trace_put(p, name);
  p = write_device_track(p, a.device, t.work_tid[i]);
  p = trace_put(p, ",\"ts\":");
  p = write_trace_time(p, a.begin_ns - t.origin_ns);
  p = trace_put(p, ",\"dur\":");
  p = write_trace_dur(p, a.begin_ns - t.origin_ns, a.end_ns - t.origin_ns);
  const trace_flow_in in = t.plan.flow_in[i];
  if (in == trace_flow_in::from_launch)
    p = write_trace_flow(p, trace_launch_flow + static_cast<std::uint64_t>(t.plan.launch_of[i]), false);
  else if (in == trace_flow_in::from_scope)
    p = write_trace_flow(p, trace_scope_flow + static_cast<std::uint64_t>(a.instance), false);
  p = write_external_id(p, a.instance);
  p = trace_put(p, "\"device\":");
  p = trace_put_int(p, a.device);
  p = trace_put(p, ",\"stream\":");
  p = trace_put_uint(p, a.stream);
  p = trace_put(p, ",\"correlation\":");
  p = trace_put_uint(p, a.correlation);
  if (a.graph) {
    p = trace_put(p, ",\"graph id\":");
    p = trace_put_uint(p, a.graph);
  }
  if (!mangled.empty()) {
    p = trace_put(p, ",\"mangled\":");
    p = trace_put(p, mangled);
  }
  p = trace_put(p, "}}");
  sink.commit(p);
}

/// The declared-work cells of a scopeprofScopes row: bytes, FLOPs, and the GB/s and TFLOP/s they give over
/// the instance's device span (null where the instance declared none, or has no span).
inline char* trace_put_work_cells(char* p, const scope_instance& s) noexcept {
  if (!s.has_work) return trace_put(p, ",null,null,null,null");
  p = trace_put(p, ",");
  p = write_exact_double(p, s.work_bytes);
  p = trace_put(p, ",");
  p = write_exact_double(p, s.work_flops);
  const bool span = s.device == device_status::ok && s.device_span_ns() > 0;
  const double ns = span ? static_cast<double>(s.device_span_ns()) : 0.0;
  p = trace_put(p, ",");
  p = write_exact_double(p, span && s.work_bytes > 0 ? s.work_bytes / ns : std::nan(""));  // bytes/ns = GB/s
  p = trace_put(p, ",");
  return write_exact_double(p, span && s.work_flops > 0 ? s.work_flops / ns / 1e3 : std::nan(""));
}

/// One row of the scopeprofScopes table (the figures of the k-th user_annotation slice).
inline void append_trace_scope_row(output_sink& sink, const trace_tables& t, const scope_instance& s, bool first) {
  char* p = sink.reserve(trace_event_room);
  p = trace_put(p, first ? "\n[" : ",\n[");
  p = write_ns_as_us(p, s.host_self_ns);
  if (s.device == device_status::ok) {
    p = trace_put(p, ",");
    p = write_ns_as_us(p, s.device_span_ns());
    p = trace_put(p, ",");
    p = write_ns_as_us(p, s.device_self_ns);
  } else {
    p = trace_put(p, ",null,null");
  }
  if (t.cupti_valid) {
    p = trace_put(p, ",");
    p = write_ns_as_us(p, s.device_busy_ns);
    p = trace_put(p, ",");
    p = trace_put_uint(p, s.kernels);
  } else {
    p = trace_put(p, ",null,null");
  }
  p = trace_put(p, s.device == device_status::ok         ? ",\"ok\""
                   : s.device == device_status::captured ? ",\"n/a (captured)\""
                   : s.device == device_status::invalid  ? ",\"n/a (CUDA error)\""
                                                         : ",\"n/a\"");
  p = trace_put(p, s.orphan ? ",true" : ",false");
  p = trace_put_work_cells(p, s);
  p = trace_put(p, "]");
  sink.commit(p);
}

/// The chrome trace of `rep`, streamed into `sink`.
inline void serialize_chrome_trace(const report& rep, output_sink& sink) {
  trace_tables t = trace_tables_of(rep);
  if (!rep.activities().empty()) add_trace_kernel_names(t, rep);
  std::string text;
  append_trace_head(text, rep, t);
  sink.append(text);
  for (std::size_t i = 0; i < rep.instances().size(); ++i) {
    sink.row_done();
    append_trace_scope(sink, t, rep.instances()[i], i);
  }
  for (std::size_t k = 0; k < t.plan.launches.size(); ++k) {
    sink.row_done();
    append_trace_launch(sink, rep, t, k);
  }
  for (std::size_t i = 0; i < rep.activities().size(); ++i) {
    sink.row_done();
    append_trace_activity(sink, t, rep.activities()[i], i);
  }
  append_trace_steps(sink, rep, t.pid, t.origin_ns);  // after the scopes: see detail/trace_steps.hpp
  sink.append(
      "\n],\"scopeprofScopes\":{\"fields\":[\"host_self_us\",\"device_span_us\",\"device_self_us\",\"device_busy_us\","
      "\"kernels\",\"device\",\"orphan\",\"declared_bytes\",\"declared_flops\",\"achieved_gb_per_s\","
      "\"achieved_tflop_per_s\"],\"rows\":[");
  for (std::size_t i = 0; i < rep.instances().size(); ++i) {
    sink.row_done();
    append_trace_scope_row(sink, t, rep.instances()[i], i == 0);
  }
  sink.append("\n]}}\n");
  sink.flush();
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
