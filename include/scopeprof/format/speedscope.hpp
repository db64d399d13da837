// scopeprof: speedscope's own file format (https://www.speedscope.app/file-format-schema.json), for
// speedscope.app. One "evented" profile per host thread, one per (device, stream) with the device spans
// (CUDA events) and, with valid CUPTI evidence, one per (device, CUPTI stream) with the kernels, copies
// and memsets. Frames are shared: one per scope name (with its file and line) and one per kernel name.
// Times are integer nanoseconds from the library's start; a child closes before its parent and a span
// closes before its next sibling opens, also when they share a nanosecond.
//
// A profile must nest exactly, so spans that overlap without nesting (two threads' device spans on one
// stream) go to a further profile of the same track, named "<track> lane 2" and so on: no span is moved,
// cut or lost. A span that ends before it begins (never in a well-formed report) is left out.
#pragma once

#include <scopeprof/detail/process_text.hpp>
#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/version.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// What a track's items index: instances() (host scopes, device spans) or activities() (CUPTI work).
enum class speedscope_source : std::uint8_t { host, device, cupti };

/// The items of one profile before it is split into lanes, in the order they open.
struct speedscope_track {
  std::string name;
  speedscope_source source = speedscope_source::host;
  std::vector<std::uint32_t> items;
};

/// One span as the lanes see it, in nanoseconds from the report's origin.
struct speedscope_span {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t key = -1;     // the instance's index (host, device); -1 for CUPTI work
  std::int64_t parent = -1;  // the instance's parent, a hint that keeps a zero-length last child inside
  std::uint32_t frame = 0;
};

/// The shared frames: their JSON, and the frame of every site and kernel name.
struct speedscope_frames {
  std::string json;                     // the elements of "frames", comma separated
  std::vector<std::uint32_t> by_site;   // indexed by site
  std::vector<std::uint32_t> by_name;   // indexed by activity name
  std::uint32_t unnamed = 0;            // for an index out of range (never in a well-formed report)
  std::uint32_t count = 0;
};

inline std::uint32_t speedscope_add_frame(speedscope_frames& f, std::string_view name, std::string_view file,
                                          std::uint32_t line) {
  if (f.count != 0) f.json += ",\n";
  f.json += "{\"name\":";
  append_json_string(f.json, name);
  if (!file.empty()) {
    f.json += ",\"file\":";
    append_json_string(f.json, file);
  }
  if (line != 0) f.json += ",\"line\":" + std::to_string(line);
  f.json += '}';
  return f.count++;
}

/// Frames for the sites and kernel names the report uses, one per distinct (name, file, line).
inline speedscope_frames speedscope_frames_of(const report& rep) {
  constexpr std::uint32_t none = (std::numeric_limits<std::uint32_t>::max)();
  speedscope_frames f;
  f.unnamed = none;
  f.by_site.assign(rep.sites().size(), none);
  f.by_name.assign(rep.activity_demangled_names().size(), none);
  std::map<std::tuple<std::string_view, std::string_view, std::uint32_t>, std::uint32_t> seen;
  const auto unnamed = [&f]() {
    if (f.unnamed == none) f.unnamed = speedscope_add_frame(f, "", "", 0);
    return f.unnamed;
  };
  for (const auto& s : rep.instances()) {
    if (s.site >= rep.sites().size()) {
      unnamed();
      continue;
    }
    if (f.by_site[s.site] != none) continue;
    const site_desc& site = rep.sites()[s.site];
    const auto key = std::make_tuple(std::string_view(site.name), std::string_view(site.file), site.line);
    const auto it = seen.find(key);
    if (it != seen.end()) f.by_site[s.site] = it->second;
    else f.by_site[s.site] = seen[key] = speedscope_add_frame(f, site.name, site.file, site.line);
  }
  if (!rep.sources().cupti_valid) return f;
  std::map<std::string_view, std::uint32_t> kernels;
  const auto& demangled = rep.activity_demangled_names();
  for (const auto& a : rep.activities()) {
    if (a.name >= demangled.size()) {
      unnamed();
      continue;
    }
    if (f.by_name[a.name] != none) continue;
    const std::string& name = demangled[a.name];
    const auto it = kernels.find(name);
    if (it != kernels.end()) f.by_name[a.name] = it->second;
    else f.by_name[a.name] = kernels[name] = speedscope_add_frame(f, name, "", 0);
  }
  return f;
}

inline speedscope_span speedscope_span_of(const report& rep, const speedscope_frames& f, speedscope_source source,
                                          std::uint32_t i) noexcept {
  speedscope_span x;
  if (source == speedscope_source::cupti) {
    const device_activity& a = rep.activities()[i];
    x.begin = a.begin_ns - rep.origin_ns();
    x.end = a.end_ns - rep.origin_ns();
    x.frame = a.name < f.by_name.size() ? f.by_name[a.name] : f.unnamed;
    return x;
  }
  const scope_instance& s = rep.instances()[i];
  const bool host = source == speedscope_source::host;
  x.begin = (host ? s.host_begin_ns : s.device_begin_ns) - rep.origin_ns();
  x.end = (host ? s.host_end_ns : s.device_end_ns) - rep.origin_ns();
  x.key = static_cast<std::int64_t>(i);
  x.parent = s.parent;
  x.frame = s.site < f.by_site.size() ? f.by_site[s.site] : f.unnamed;
  return x;
}

/// "thread N" or the thread's name, with its OS id (as the Chrome trace names its tracks).
inline std::string speedscope_thread_label(const thread_desc& t) {
  std::string label = t.name.empty() ? "thread " + std::to_string(t.index) : t.name;
  if (t.os_id) label += " (tid " + std::to_string(t.os_id) + ")";
  return label;
}

/// The tracks in profile order: every host thread (also one with no finished scope), then the device
/// streams by (device, stream), then the CUPTI streams by (device, stream id). Items are sorted by begin
/// (device and CUPTI: the longer first at equal begins). `range` gets the first begin and the last end.
inline std::vector<speedscope_track> speedscope_tracks_of(const report& rep, const speedscope_frames& f,
                                                          std::pair<std::int64_t, std::int64_t>& range) {
  std::vector<speedscope_track> tracks(rep.threads().size());
  for (std::size_t t = 0; t < tracks.size(); ++t) tracks[t].name = speedscope_thread_label(rep.threads()[t]);
  std::map<std::pair<std::int32_t, std::uint64_t>, speedscope_track> device;
  std::map<std::pair<std::int32_t, std::uint32_t>, speedscope_track> cupti;
  range = {(std::numeric_limits<std::int64_t>::max)(), (std::numeric_limits<std::int64_t>::min)()};
  const auto keep = [&](speedscope_source source, std::uint32_t i) {
    const speedscope_span x = speedscope_span_of(rep, f, source, i);
    if (x.end < x.begin) return false;
    range = {(std::min)(range.first, x.begin), (std::max)(range.second, x.end)};
    return true;
  };
  for (std::uint32_t i = 0; i < rep.instances().size(); ++i) {
    const scope_instance& s = rep.instances()[i];
    if (s.thread < tracks.size() && keep(speedscope_source::host, i)) tracks[s.thread].items.push_back(i);
    if (s.device == device_status::ok && keep(speedscope_source::device, i))
      device[std::make_pair(s.device_id, s.stream)].items.push_back(i);
  }
  if (rep.sources().cupti_valid)
    for (std::uint32_t i = 0; i < rep.activities().size(); ++i)
      if (keep(speedscope_source::cupti, i))
        cupti[std::make_pair(rep.activities()[i].device, rep.activities()[i].stream)].items.push_back(i);
  for (auto& [key, track] : device) {
    char stream_hex[32];
    std::snprintf(stream_hex, sizeof stream_hex, "0x%llx", static_cast<unsigned long long>(key.second));
    track.name = "GPU " + std::to_string(key.first) + " stream " + (key.second ? stream_hex : "default") + " (CUDA events)";
    track.source = speedscope_source::device;
    tracks.push_back(std::move(track));
  }
  for (auto& [key, track] : cupti) {
    track.name = "GPU " + std::to_string(key.first) + " stream " + std::to_string(key.second) + " (CUPTI)";
    track.source = speedscope_source::cupti;
    tracks.push_back(std::move(track));
  }
  for (auto& track : tracks) {
    const auto span = [&](std::uint32_t i) { return speedscope_span_of(rep, f, track.source, i); };
    std::stable_sort(track.items.begin(), track.items.end(), [&](std::uint32_t a, std::uint32_t b) {
      const speedscope_span x = span(a), y = span(b);
      if (x.begin != y.begin) return x.begin < y.begin;
      return track.source != speedscope_source::host && x.end > y.end;  // host: pre-order keeps parents first
    });
  }
  if (range.first > range.second) range = {0, 0};
  return tracks;
}

/// One profile's spans: those still open, outermost first, and the time of its last event.
struct speedscope_lane {
  std::vector<speedscope_span> open;
  std::int64_t last_at = (std::numeric_limits<std::int64_t>::min)();
  std::vector<std::uint32_t> items;
};

/// How many open spans stay open when `x` opens (those above close first: they ended by x's begin and
/// are not x's parent).
inline std::size_t speedscope_kept(const std::vector<speedscope_span>& open, const speedscope_span& x) noexcept {
  std::size_t kept = open.size();
  while (kept > 0 && !(x.parent >= 0 && open[kept - 1].key == x.parent) && open[kept - 1].end <= x.begin) --kept;
  return kept;
}

/// Where a span may open in a lane: inside its parent only (a host scope with a parent), as a root only
/// (a host root, CUPTI work: kernels never nest), or inside any span that holds it (device spans).
enum class speedscope_place : std::uint8_t { in_parent, as_root, anywhere };

inline bool speedscope_fits(const speedscope_lane& lane, const speedscope_span& x, speedscope_place place) noexcept {
  if (x.begin < lane.last_at) return false;
  const std::size_t kept = speedscope_kept(lane.open, x);
  if (kept == 0) return place != speedscope_place::in_parent;
  const speedscope_span& top = lane.open[kept - 1];
  if (place == speedscope_place::as_root || (place == speedscope_place::in_parent && top.key != x.parent)) return false;
  return top.begin <= x.begin && x.end <= top.end;
}

/// The track's items split into lanes: each goes to the first lane it nests in exactly (a host scope to
/// its parent's lane when it fits there).
inline std::vector<std::vector<std::uint32_t>> speedscope_lanes_of(const report& rep, const speedscope_frames& f,
                                                                   const speedscope_track& track) {
  std::vector<speedscope_lane> lanes(1);
  const auto first_fit = [&lanes](const speedscope_span& x, speedscope_place place) {
    std::size_t l = 0;
    while (l < lanes.size() && !speedscope_fits(lanes[l], x, place)) ++l;
    return l;
  };
  for (const std::uint32_t i : track.items) {
    const speedscope_span x = speedscope_span_of(rep, f, track.source, i);
    std::size_t l = lanes.size();
    if (track.source == speedscope_source::device) l = first_fit(x, speedscope_place::anywhere);
    else if (track.source == speedscope_source::host && x.parent >= 0) l = first_fit(x, speedscope_place::in_parent);
    if (l == lanes.size()) l = first_fit(x, speedscope_place::as_root);
    if (l == lanes.size()) lanes.emplace_back();
    speedscope_lane& lane = lanes[l];
    lane.open.resize(speedscope_kept(lane.open, x));
    lane.open.push_back(x);
    lane.last_at = x.begin;
    lane.items.push_back(i);
  }
  std::vector<std::vector<std::uint32_t>> out;
  out.reserve(lanes.size());
  for (auto& lane : lanes) out.push_back(std::move(lane.items));
  return out;
}

template <std::size_t N>
inline char* speedscope_put(char* p, const char (&literal)[N]) noexcept {
  std::memcpy(p, literal, N - 1);
  return p + (N - 1);
}
inline char* speedscope_put_int(char* p, std::int64_t v) noexcept { return std::to_chars(p, p + 21, v).ptr; }

/// One open ('O') or close ('C') event.
inline void append_speedscope_event(output_sink& sink, bool& first, char type, std::uint32_t frame, std::int64_t at) {
  char* p = sink.reserve(96);
  if (!first) *p++ = ',';
  first = false;
  p = speedscope_put(p, "{\"type\":\"");
  *p++ = type;
  p = speedscope_put(p, "\",\"frame\":");
  p = speedscope_put_int(p, frame);
  p = speedscope_put(p, ",\"at\":");
  p = speedscope_put_int(p, at);
  *p++ = '}';
  sink.commit(p);
}

/// One lane as an evented profile: its items open in order, each after the spans that ended first close.
inline void append_speedscope_profile(output_sink& sink, const report& rep, const speedscope_frames& f,
                                      const speedscope_track& track, const std::vector<std::uint32_t>& items,
                                      const std::string& name, std::pair<std::int64_t, std::int64_t> range) {
  std::string head = "{\"type\":\"evented\",\"name\":";
  append_json_string(head, name);
  head += ",\"unit\":\"nanoseconds\",\"startValue\":" + std::to_string(range.first) +
          ",\"endValue\":" + std::to_string(range.second) + ",\"events\":[";
  sink.append(head);
  std::vector<speedscope_span> open;
  bool first = true;
  for (const std::uint32_t i : items) {
    const speedscope_span x = speedscope_span_of(rep, f, track.source, i);
    for (std::size_t kept = speedscope_kept(open, x); open.size() > kept; open.pop_back())
      append_speedscope_event(sink, first, 'C', open.back().frame, open.back().end);
    append_speedscope_event(sink, first, 'O', x.frame, x.begin);
    open.push_back(x);
    sink.row_done();
  }
  for (; !open.empty(); open.pop_back()) append_speedscope_event(sink, first, 'C', open.back().frame, open.back().end);
  sink.append("]}");
}

/// The opening: schema, exporter, the counts and evidence (a "scopeprof" member speedscope ignores), the
/// name (which says when scopes were dropped or still open) and the shared frames.
inline std::string speedscope_head(const report& rep, const speedscope_frames& f) {
  const scope_counts& c = rep.counts();
  std::string out = "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
                    "\"exporter\":\"scopeprof@" SCOPEPROF_VERSION_STRING "\"";
  std::string name = "scopeprof";
  const process_desc& proc = rep.process();
  if (!proc.rank_source.empty() || proc.world_size > 1)
    name += " rank " + std::to_string(proc.rank) + " of " + std::to_string(proc.world_size);
  if (c.dropped != 0 || c.in_flight != 0)
    name += " (" + std::to_string(c.dropped) + " scopes dropped, " + std::to_string(c.in_flight) + " still open)";
  out += ",\"name\":";
  append_json_string(out, name);
  out += ",\"activeProfileIndex\":0,\"scopeprof\":{\"entered\":" + std::to_string(c.entered) +
         ",\"recorded\":" + std::to_string(c.recorded) + ",\"dropped\":" + std::to_string(c.dropped) +
         ",\"in_flight\":" + std::to_string(c.in_flight) + ",\"process\":";
  append_json_process(out, proc);
  out += ",\"host_source\":";
  append_json_string(out, rep.sources().host);
  out += ",\"device_source\":";
  append_json_string(out, rep.sources().device);
  out += ",\"cupti_source\":";
  append_json_string(out, rep.sources().cupti);
  out += "},\n\"shared\":{\"frames\":[\n";
  out += f.json;
  out += "\n]},\n\"profiles\":[";
  return out;
}

/// The speedscope file of `rep`, streamed into `sink`.
inline void serialize_speedscope(const report& rep, output_sink& sink) {
  const speedscope_frames f = speedscope_frames_of(rep);
  std::pair<std::int64_t, std::int64_t> range;
  const std::vector<speedscope_track> tracks = speedscope_tracks_of(rep, f, range);
  sink.append(speedscope_head(rep, f));
  bool first = true;
  for (const auto& track : tracks) {
    const auto lanes = speedscope_lanes_of(rep, f, track);
    for (std::size_t l = 0; l < lanes.size(); ++l) {
      if (l != 0 && lanes[l].empty()) continue;
      sink.append(first ? "\n" : ",\n");
      first = false;
      const std::string name = l == 0 ? track.name : track.name + " lane " + std::to_string(l + 1);
      append_speedscope_profile(sink, rep, f, track, lanes[l], name, range);
    }
  }
  sink.append("\n]}\n");
  sink.flush();
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
