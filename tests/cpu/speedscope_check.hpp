// The check of speedscope files (format/speedscope.hpp), shared by the writer tests and the fuzz target:
// the file follows speedscope's schema, every profile's events are balanced with non-decreasing integer
// times inside [startValue, endValue], every frame is used, and the profiles hold exactly the report's
// spans: per host thread its scopes (at their depth when the thread needs one profile), per device stream
// its device spans, per CUPTI stream its kernels, copies and memsets, in that order.
#pragma once

#include "json_check.hpp"

#include "internals.hpp"

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace sptest {

/// A span read back from a profile: frame name, open and close times, depth in its profile.
using speedscope_span_key = std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t>;

struct speedscope_profile_read {
  std::string name;
  std::vector<speedscope_span_key> spans;
};

inline bool speedscope_int(const json* v, std::int64_t& out) { return v != nullptr && v->integer(out); }

/// One profile: evented, nanoseconds, balanced events in time order within its range.
inline std::string read_speedscope_profile(const json& p, const std::vector<std::string>& frame_names,
                                           std::vector<bool>& used, speedscope_profile_read& out) {
  const json* type = p.find("type");
  const json* name = p.find("name");
  const json* unit = p.find("unit");
  const json* events = p.find("events");
  std::int64_t start = 0, end = 0;
  if (!type || type->text != "evented") return "a profile that is not evented";
  if (!name || !name->is(json::type::string)) return "a profile without a name";
  out.name = name->text;
  const std::string where = "profile '" + out.name + "': ";
  if (!unit || unit->text != "nanoseconds") return where + "unit is not nanoseconds";
  if (!speedscope_int(p.find("startValue"), start) || !speedscope_int(p.find("endValue"), end) || start > end)
    return where + "startValue/endValue not integers in order";
  if (!events || !events->is(json::type::array)) return where + "no events array";
  std::vector<std::pair<std::int64_t, std::int64_t>> open;  // (frame, at)
  std::int64_t last = start;
  for (std::size_t k = 0; k < events->items.size(); ++k) {
    const json& ev = events->items[k];
    const json* kind = ev.find("type");
    std::int64_t frame = 0, at = 0;
    const std::string here = where + "event " + std::to_string(k) + ": ";
    if (!kind || (kind->text != "O" && kind->text != "C")) return here + "type is not O or C";
    if (!speedscope_int(ev.find("frame"), frame) || frame < 0 || static_cast<std::size_t>(frame) >= frame_names.size())
      return here + "frame is not a frame index";
    if (!speedscope_int(ev.find("at"), at)) return here + "at is not an integer";
    if (at < last || at > end) return here + "at goes back in time or past endValue";
    last = at;
    used[static_cast<std::size_t>(frame)] = true;
    if (kind->text == "O") {
      open.emplace_back(frame, at);
      continue;
    }
    if (open.empty() || open.back().first != frame) return here + "closes a frame that is not the innermost open one";
    out.spans.emplace_back(frame_names[static_cast<std::size_t>(frame)], open.back().second, at,
                           static_cast<std::int64_t>(open.size()) - 1);
    open.pop_back();
  }
  if (!open.empty()) return where + "frames still open at the end";
  return {};
}

/// The spans a track must hold, and the name of its profiles.
struct speedscope_expected_track {
  std::string name;
  bool check_depth = false;  // host scopes: depth in the profile = depth in the report (one lane only)
  std::vector<speedscope_span_key> spans;
};

inline std::vector<speedscope_expected_track> speedscope_expected_tracks(const scopeprof::report& r) {
  using scopeprof::detail::to_valid_utf8;
  std::vector<speedscope_expected_track> tracks(r.threads().size());
  std::map<std::pair<std::int32_t, std::uint64_t>, speedscope_expected_track> device;
  std::map<std::pair<std::int32_t, std::uint32_t>, speedscope_expected_track> cupti;
  const std::int64_t o = r.origin_ns();
  for (std::size_t t = 0; t < tracks.size(); ++t) {
    const auto& th = r.threads()[t];
    tracks[t].name = (th.name.empty() ? "thread " + std::to_string(th.index) : th.name) +
                     (th.os_id ? " (tid " + std::to_string(th.os_id) + ")" : "");
    tracks[t].check_depth = true;
  }
  for (const auto& s : r.instances()) {
    if (s.thread >= tracks.size()) continue;
    const std::string name = to_valid_utf8(s.site < r.sites().size() ? r.sites()[s.site].name : std::string());
    tracks[s.thread].spans.emplace_back(name, s.host_begin_ns - o, s.host_end_ns - o, s.depth);
    if (s.device == scopeprof::device_status::ok && s.device_end_ns >= s.device_begin_ns)
      device[{s.device_id, s.stream}].spans.emplace_back(name, s.device_begin_ns - o, s.device_end_ns - o, -1);
  }
  for (auto& [key, track] : device) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(key.second));
    track.name = "GPU " + std::to_string(key.first) + " stream " + (key.second ? hex : "default") + " (CUDA events)";
    tracks.push_back(std::move(track));
  }
  if (r.sources().cupti_valid)
    for (const auto& a : r.activities())
      if (a.end_ns >= a.begin_ns) {
        const std::string name = a.name < r.activity_names().size() ? r.activity_demangled_names()[a.name] : std::string();
        cupti[{a.device, a.stream}].spans.emplace_back(to_valid_utf8(name), a.begin_ns - o, a.end_ns - o, -1);
      }
  for (auto& [key, track] : cupti) {
    track.name = "GPU " + std::to_string(key.first) + " stream " + std::to_string(key.second) + " (CUPTI)";
    tracks.push_back(std::move(track));
  }
  return tracks;
}

/// The head: schema, the counts, and frames with a name (and where given a file and a line).
inline std::string read_speedscope_frames(const scopeprof::report& r, const json& doc, std::vector<std::string>& names) {
  const json* schema = doc.find("$schema");
  if (!schema || schema->text != "https://www.speedscope.app/file-format-schema.json") return "speedscope $schema missing";
  const json* counts = doc.find("scopeprof");
  std::int64_t v = 0;
  if (!counts || !speedscope_int(counts->find("recorded"), v) || static_cast<std::uint64_t>(v) != r.counts().recorded ||
      !speedscope_int(counts->find("dropped"), v) || static_cast<std::uint64_t>(v) != r.counts().dropped ||
      !speedscope_int(counts->find("in_flight"), v) || static_cast<std::uint64_t>(v) != r.counts().in_flight)
    return "speedscope counts differ from the report";
  const json* shared = doc.find("shared");
  const json* frames = shared ? shared->find("frames") : nullptr;
  if (!frames || !frames->is(json::type::array)) return "speedscope file has no shared.frames";
  for (const auto& f : frames->items) {
    const json* n = f.find("name");
    const json* file = f.find("file");
    const json* line = f.find("line");
    std::int64_t l = 0;
    if (!n || !n->is(json::type::string)) return "a frame without a name";
    if ((file && !file->is(json::type::string)) || (line && (!line->integer(l) || l <= 0))) return "a frame's file/line malformed";
    names.push_back(n->text);
  }
  return {};
}

/// speedscope file: parses, follows the schema, and holds exactly the report's spans, track by track.
inline std::string check_speedscope(const scopeprof::report& r, const std::string& text) {
  json doc;
  std::string err;
  if (!parse_json(text, doc, err)) return "speedscope file does not parse: " + err;
  std::vector<std::string> frame_names;
  if (auto e = read_speedscope_frames(r, doc, frame_names); !e.empty()) return e;
  const json* profiles = doc.find("profiles");
  if (!profiles || !profiles->is(json::type::array)) return "speedscope file has no profiles array";
  std::vector<bool> used(frame_names.size(), false);
  std::vector<speedscope_profile_read> read(profiles->items.size());
  for (std::size_t i = 0; i < read.size(); ++i)
    if (auto e = read_speedscope_profile(profiles->items[i], frame_names, used, read[i]); !e.empty()) return e;
  for (std::size_t f = 0; f < used.size(); ++f)
    if (!used[f]) return "frame " + std::to_string(f) + " is used by no event";
  std::size_t next = 0;
  for (auto& track : speedscope_expected_tracks(r)) {
    if (next == read.size() || read[next].name != scopeprof::detail::to_valid_utf8(track.name))
      return "no profile named '" + track.name + "' where expected";
    std::map<speedscope_span_key, long> balance;  // expected minus found
    const bool one_lane = next + 1 == read.size() || read[next + 1].name != read[next].name + " lane 2";
    for (auto s : track.spans) {
      if (!track.check_depth || !one_lane) std::get<3>(s) = -1;
      ++balance[s];
    }
    for (std::size_t lane = 1; next < read.size(); ++lane, ++next) {
      if (lane > 1 && read[next].name != read[next - lane + 1].name + " lane " + std::to_string(lane)) break;
      for (auto s : read[next].spans) {
        if (!track.check_depth || !one_lane) std::get<3>(s) = -1;
        --balance[s];
      }
    }
    for (const auto& [span, n] : balance)
      if (n != 0)
        return "profile '" + track.name + "': span '" + std::get<0>(span) + "' [" + std::to_string(std::get<1>(span)) +
               ", " + std::to_string(std::get<2>(span)) + "] depth " + std::to_string(std::get<3>(span)) +
               (n > 0 ? " missing" : " not in the report");
  }
  if (next != read.size()) return "profile '" + read[next].name + "' is not expected";
  return {};
}

}  // namespace sptest
