// The Chrome trace checker: every rule the PyTorch-profiler (Kineto) conventions and the viewers impose,
// checked on any trace text (check_trace_format), and the trace's agreement with the report it came from
// (check_chrome_trace). Each returns an empty string when the trace is valid, else the first problem.
#pragma once

#include "output_check.hpp"  // the shared checks (UTF-8, counts, parse_us3) and the JSON parser

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sptest {

/// One slice ("X" event) as a consumer reads it: ts and dur as doubles.
struct trace_slice {
  std::size_t event = 0;  // position in traceEvents
  std::string cat, name;
  std::int64_t pid = 0, tid = 0;
  double ts = 0, dur = 0;
  const json* ev = nullptr;
};

/// What check_trace_format() gathers for the report-aware checks.
struct trace_doc {
  json doc;
  std::vector<trace_slice> slices;  // in file order
  std::int64_t host_pid = -1;
  std::int64_t rank = -1;
};

/// The text as HTA reads the rank: the first line with "rank":\s+(\d+), its number; -1 if none.
inline std::int64_t hta_rank(const std::string& text) {
  static const std::regex rank_re("\"rank\":\\s+(\\d+)");
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string line = text.substr(start, end - start);
    std::smatch m;
    if (std::regex_search(line, m, rank_re)) return std::stoll(m[1].str());
    start = end + 1;
  }
  return -1;
}

/// A ts or dur: a number that is an exact multiple of 2^-10 (so every sum of them is exact in doubles).
inline bool trace_number(const json* v, double& out) {
  if (!v || !v->is(json::type::number)) return false;
  out = v->number();
  const double units = out * 1024.0;
  return std::isfinite(out) && units == std::floor(units) && std::fabs(units) < 9007199254740992.0;
}

/// Nesting per track as consumers compute it: with ts + dur in doubles, and again after speedscope's
/// rebase (ts - smallest ts of the track); children end no later than their parent, siblings never overlap.
inline std::string check_track_nesting(std::vector<const trace_slice*> xs, const std::string& what) {
  double min_ts = xs.empty() ? 0 : xs.front()->ts;
  for (const auto* x : xs) min_ts = std::min(min_ts, x->ts);
  for (int rebased = 0; rebased < 2; ++rebased) {
    const double shift = rebased ? min_ts : 0.0;
    const auto begin = [&](const trace_slice* x) { return x->ts - shift; };
    const auto end = [&](const trace_slice* x) { return (x->ts - shift) + x->dur; };
    std::stable_sort(xs.begin(), xs.end(), [&](const trace_slice* a, const trace_slice* b) {
      return begin(a) != begin(b) ? begin(a) < begin(b) : a->dur > b->dur;
    });
    std::vector<const trace_slice*> open;
    for (const auto* x : xs) {
      while (!open.empty() && end(open.back()) <= begin(x)) open.pop_back();
      if (!open.empty() && end(x) > end(open.back()))
        return what + ": slices at events " + std::to_string(open.back()->event) + " and " + std::to_string(x->event) +
               " overlap without nesting" + (rebased ? " after speedscope's rebase" : "") + " ('" + open.back()->name +
               "' and '" + x->name + "')";
      open.push_back(x);
    }
  }
  return {};
}

/// The top-level keys: distributedInfo first (HTA's rank regex finds its rank), before traceEvents.
inline std::string check_trace_top(const std::string& text, trace_doc& d) {
  const json* dist = d.doc.find("distributedInfo");
  std::int64_t world = 0;
  if (!dist || !dist->find("rank") || !dist->find("rank")->integer(d.rank) || !dist->find("world_size") ||
      !dist->find("world_size")->integer(world))
    return "no distributedInfo with integer rank and world_size";
  if (d.rank < 0 || world <= d.rank) return "distributedInfo: rank not below world_size";
  const std::size_t dist_at = text.find("\"distributedInfo\"");
  if (dist_at == std::string::npos || dist_at > text.find("\"traceEvents\"")) return "distributedInfo is not before traceEvents";
  if (hta_rank(text) != d.rank) return "HTA's regex \"rank\":\\s+(\\d+) does not find distributedInfo's rank first";
  const json* props = d.doc.find("deviceProperties");
  if (!props || !props->is(json::type::array)) return "no deviceProperties array";
  std::int64_t base = 0;
  const json* base_v = d.doc.find("baseTimeNanoseconds");
  if (base_v && !base_v->integer(base)) return "baseTimeNanoseconds is not an integer";
  if (const json* s = d.doc.find("scopeprofScopes"); !s || !s->find("rows") || !s->find("rows")->is(json::type::array))
    return "no scopeprofScopes.rows";
  return {};
}

/// Fields each kind of slice must (and must not) carry.
inline std::string check_slice_fields(const trace_slice& s, std::int64_t host_pid) {
  const json* args = s.ev->find("args");
  std::int64_t v = 0;
  const auto arg_int = [&](const char* key) { return args && args->find(key) && args->find(key)->integer(v); };
  if (s.cat == "user_annotation" || s.cat == "gpu_user_annotation") {
    // speedscope names a frame by name + JSON of args: a scope's slices carry none.
    if (args) return "a scope slice carries args (speedscope would name one frame per call)";
    if (s.cat == "user_annotation" && s.pid != host_pid) return "user_annotation not on the host pid";
    if (s.cat == "gpu_user_annotation" && s.pid == host_pid) return "gpu_user_annotation on the host pid";
  } else if (s.cat == "kernel" || s.cat == "gpu_memcpy" || s.cat == "gpu_memset") {
    // tid: the stream, or (work overlapping on one stream) a lane track named "stream <id> lane <n>"
    if (!arg_int("stream") || (v != s.tid && s.tid < (std::int64_t{3} << 29))) return "device work without args.stream";
    if (!arg_int("device") || (v >= 0 ? v : 0x7FFFFFFF) != s.pid) return "device work without args.device equal to its pid";
    if (!arg_int("correlation")) return "device work without args.correlation";
    if (args->find("External id") && (!arg_int("External id") || v < 1)) return "External id is not a positive integer";
  } else if (s.cat == "cuda_runtime" || s.cat == "cuda_driver") {
    if (s.pid != host_pid) return "launch call not on the host pid";
    if (!arg_int("correlation")) return "launch call without args.correlation";
  } else {
    return "unexpected cat '" + s.cat + "'";
  }
  return {};
}

/// Flows (v2: bind_id on the slices): one flow_out slice per id, at least one flow_in, never backwards.
inline std::string check_trace_flows(const trace_doc& d) {
  std::map<std::uint64_t, std::vector<const trace_slice*>> outs, ins;
  for (const auto& s : d.slices) {
    const json* id = s.ev->find("bind_id");
    const json* out = s.ev->find("flow_out");
    const json* in = s.ev->find("flow_in");
    if (!id) {
      if (out || in) return "flow_out/flow_in without bind_id at event " + std::to_string(s.event);
      continue;
    }
    std::int64_t v = 0;
    if (!id->integer(v) || v < 0) return "bind_id is not a non-negative integer";
    if (!!out == !!in) return "a slice with bind_id needs exactly one of flow_out and flow_in";
    (out ? outs : ins)[static_cast<std::uint64_t>(v)].push_back(&s);
  }
  for (const auto& [id, list] : outs) {
    if (list.size() != 1) return "flow " + std::to_string(id) + " leaves " + std::to_string(list.size()) + " slices";
    if (!ins.count(id)) return "flow " + std::to_string(id) + " ends nowhere";
  }
  for (const auto& [id, list] : ins) {
    if (!outs.count(id)) return "flow " + std::to_string(id) + " starts nowhere";
    for (const auto* s : list)
      if (s->ts < outs.at(id).front()->ts) return "flow " + std::to_string(id) + " goes back in time";
  }
  return {};
}

/// Everything a trace must satisfy on its own; fills `d` for check_chrome_trace().
inline std::string check_trace_format(const std::string& text, trace_doc& d) {
  std::string err;
  if (!parse_json(text, d.doc, err)) return "trace does not parse: " + err;
  if (auto e = check_trace_top(text, d); !e.empty()) return e;
  const json* events = d.doc.find("traceEvents");
  if (!events || !events->is(json::type::array)) return "trace has no traceEvents array";
  std::map<std::pair<std::int64_t, std::int64_t>, int> thread_names;
  std::set<std::int64_t> process_names;
  for (std::size_t k = 0; k < events->items.size(); ++k) {
    const json& ev = events->items[k];
    const std::string where = "trace event " + std::to_string(k) + ": ";
    const json* ph = ev.find("ph");
    const json* name = ev.find("name");
    trace_slice s;
    if (!ph || !ph->is(json::type::string) || !name || !name->is(json::type::string)) return where + "no ph or name";
    if (!ev.find("pid") || !ev.find("pid")->integer(s.pid) || !ev.find("tid") || !ev.find("tid")->integer(s.tid))
      return where + "pid/tid not integers";
    if (s.pid < 0 || s.pid > 0xFFFFFFFFll || s.tid < 0 || s.tid > 0xFFFFFFFFll) return where + "pid/tid beyond 32 bits";
    if (ph->text == "M") {
      const json* args = ev.find("args");
      if (name->text == "process_name" && args && args->find("name")) {
        process_names.insert(s.pid);
        if (args->find("name")->text == "host") d.host_pid = s.pid;
      }
      if (name->text == "thread_name" && args && args->find("name")) ++thread_names[{s.pid, s.tid}];
      continue;
    }
    if (ph->text != "X") return where + "unexpected ph '" + ph->text + "' (flows are bind_id on slices)";
    if (!trace_number(ev.find("ts"), s.ts) || !trace_number(ev.find("dur"), s.dur))
      return where + "ts or dur is not a multiple of 1/1024 us";
    if (s.dur < 0) return where + "negative dur";
    s.event = k;
    s.name = name->text;
    s.cat = ev.find("cat") ? ev.find("cat")->text : std::string();
    s.ev = &ev;
    d.slices.push_back(std::move(s));
  }
  if (d.host_pid < 0) return "no process named host";
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<const trace_slice*>> tracks;
  std::set<std::uint64_t> kernel_correlations;
  for (const auto& s : d.slices) {
    if (auto e = check_slice_fields(s, d.host_pid); !e.empty()) return "trace event " + std::to_string(s.event) + ": " + e;
    tracks[{s.pid, s.tid}].push_back(&s);
    std::int64_t c = 0;
    if (s.cat == "kernel" || s.cat == "gpu_memcpy" || s.cat == "gpu_memset")
      if (s.ev->find("args")->find("correlation")->integer(c)) kernel_correlations.insert(static_cast<std::uint64_t>(c));
  }
  for (const auto& s : d.slices) {
    std::int64_t c = 0;
    if ((s.cat == "cuda_runtime" || s.cat == "cuda_driver") && s.ev->find("args")->find("correlation")->integer(c) &&
        !kernel_correlations.count(static_cast<std::uint64_t>(c)))
      return "launch call at event " + std::to_string(s.event) + " has no device work with its correlation";
  }
  for (const auto& [n, count] : thread_names)
    if (count != 1) return "thread_name appears " + std::to_string(count) + " times for one track";
  for (const auto& [track, xs] : tracks) {
    const std::string what = "track pid " + std::to_string(track.first) + " tid " + std::to_string(track.second);
    if (!thread_names.count(track)) return what + " has no thread_name";
    if (!process_names.count(track.first)) return what + ": its process has no process_name";
    if (auto e = check_track_nesting(xs, what); !e.empty()) return e;
  }
  return check_trace_flows(d);
}

inline std::string check_trace_format(const std::string& text) {
  trace_doc d;
  return check_trace_format(text, d);
}

/// The nanosecond a ts names: floor(ts * 1000), computed exactly from the multiple of 2^-10 us it is.
inline std::int64_t trace_ns(double v) {
  return scopeprof::detail::trace_units_to_ns(static_cast<std::int64_t>(v * 1024.0));
}

/// The trace agrees with its report: the counts, one user_annotation slice per instance in order with
/// its name and exact nanoseconds, a scopeprofScopes row each, one device slice per CUPTI activity.
inline std::string check_chrome_trace(const scopeprof::report& r, const std::string& text) {
  if (!valid_utf8(text)) return "trace is not valid UTF-8";
  trace_doc d;
  if (auto e = check_trace_format(text, d); !e.empty()) return e;
  if (auto e = check_counts_object(d.doc.find("otherData"), r.counts(), "trace otherData"); !e.empty()) return e;
  std::size_t host = 0, device = 0, spans = 0, steps = 0;
  const std::int64_t origin = r.origin_ns();
  for (const auto& s : d.slices) {
    const std::string where = "trace event " + std::to_string(s.event) + ": ";
    const std::int64_t b = trace_ns(s.ts), e = trace_ns(s.ts + s.dur);
    if (s.cat == "user_annotation" && host == r.instances().size()) {  // after every scope: the steps
      if (steps >= r.steps().size()) return where + "more scope slices than instances";
      const auto& st = r.steps()[steps++];
      if (s.name != "ProfilerStep#" + std::to_string(st.index)) return where + "step slice misnamed";
      if (b != st.begin_ns - origin || e != st.end_ns - origin) return where + "step times differ";
    } else if (s.cat == "user_annotation") {
      const auto& in = r.instances()[host++];
      if (s.name != scopeprof::detail::to_valid_utf8(site_name(r, in))) return where + "name differs from the instance";
      if (b != in.host_begin_ns - origin || e != in.host_end_ns - origin) return where + "times differ from the instance";
    } else if (s.cat == "gpu_user_annotation") {
      ++spans;
    } else if (s.cat == "kernel" || s.cat == "gpu_memcpy" || s.cat == "gpu_memset") {
      if (device >= r.activities().size()) return where + "more device slices than activities";
      const auto& a = r.activities()[device++];
      const bool named = a.name < r.activity_names().size();
      const std::string an = named ? scopeprof::detail::trace_activity_name(r.activity_demangled_names()[a.name]) : "";
      if (s.name != scopeprof::detail::to_valid_utf8(an)) return where + "kernel name differs";
      if (b != a.begin_ns - origin || e != a.end_ns - origin) return where + "kernel times differ";
      const json* mangled = s.ev->find("args")->find("mangled");
      if (named && r.activity_demangled_names()[a.name] != r.activity_names()[a.name] &&
          (!mangled || mangled->text != scopeprof::detail::to_valid_utf8(r.activity_names()[a.name])))
        return where + "mangled kernel name missing from args";
    }
  }
  if (host != r.instances().size()) return "trace has fewer scope slices than instances";
  if (steps != r.steps().size()) return "trace has not one ProfilerStep slice per complete step";
  if (device != r.activities().size()) return "trace has fewer device slices than activities";
  std::size_t timed = 0;
  for (const auto& in : r.instances()) timed += in.device == scopeprof::device_status::ok;
  if (spans != timed) return "not one gpu_user_annotation slice per device span";
  const json* rows = d.doc.find("scopeprofScopes")->find("rows");
  if (rows->items.size() != r.instances().size()) return "scopeprofScopes has not one row per instance";
  for (std::size_t i = 0; i < rows->items.size(); ++i) {
    std::int64_t self = 0;
    const auto& row = rows->items[i];
    if (row.items.size() != 11 || !parse_us3(row.items[0].text, self) || self != r.instances()[i].host_self_ns)
      return "scopeprofScopes row " + std::to_string(i) + " does not hold the instance's host self time";
    const auto& in = r.instances()[i];
    const bool bytes_ok = in.has_work ? row.items[7].is(json::type::number) && row.items[7].number() == in.work_bytes
                                      : row.items[7].is(json::type::null);
    if (!bytes_ok) return "scopeprofScopes row " + std::to_string(i) + " does not hold the instance's declared bytes";
  }
  std::size_t threads = 0;
  for (const auto& s : d.doc.find("traceEvents")->items)
    if (s.find("name")->text == "thread_name" && s.find("pid")->text == std::to_string(d.host_pid)) ++threads;
  if (threads < r.threads().size()) return "not one host thread_name per thread";
  return {};
}

}  // namespace sptest
