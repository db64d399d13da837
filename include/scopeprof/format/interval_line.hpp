// scopeprof: one line of the interval file (SCOPEPROF_REPORT_EVERY, docs/formats.md): the tables of one
// interval of a running job as a single JSON object on a single line (JSON Lines), schema
// "scopeprof-intervals/1". Its "tree" rows have the shape of the report's "tree" rows (format/json.hpp).
#pragma once

#include <scopeprof/format/json.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/version.hpp>

#include <cstdint>
#include <string>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Where one interval lies and what it is.
struct interval_line_info {
  std::uint64_t sequence = 0;   // 1 for the first line a process writes
  long long pid = 0;
  std::string every;            // the setting, as given
  std::int64_t begin_ns = 0;    // since the process's clock start
  std::int64_t end_ns = 0;
  std::int64_t end_unix_ns = 0;  // CLOCK_REALTIME at the end
  bool steps = false;           // the interval is counted in steps:
  std::uint64_t first_step = 0;  // ... the mark that opened it
  std::uint64_t end_step = 0;    // ... the mark that closed it (the step that begins the next interval)
  bool final_line = false;      // written at exit: the interval was cut short
};

/// The line for the interval whose tables are `rep` (ends with '\n').
inline std::string interval_json_line(const report& rep, const interval_line_info& in) {
  std::uint64_t scopes = 0;
  for (const tree_row& t : rep.tree()) scopes += t.calls;
  std::string out = "{\"schema\":\"scopeprof-intervals/1\",\"version\":\"" SCOPEPROF_VERSION_STRING "\",\"units\":\"ns\"";
  out += ",\"sequence\":" + std::to_string(in.sequence) + ",\"pid\":" + std::to_string(in.pid) +
         ",\"rank\":" + std::to_string(rep.process().rank) + ",\"world_size\":" + std::to_string(rep.process().world_size) +
         ",\"every\":";
  append_json_string(out, in.every);
  out += ",\"begin\":" + std::to_string(in.begin_ns) + ",\"end\":" + std::to_string(in.end_ns) +
         ",\"end_unix_ns\":" + std::to_string(in.end_unix_ns) + ",\"steps\":";
  out += in.steps ? "{\"first\":" + std::to_string(in.first_step) + ",\"end\":" + std::to_string(in.end_step) + "}"
                  : std::string("null");
  out += in.final_line ? ",\"final\":true" : ",\"final\":false";
  out += ",\"scopes\":" + std::to_string(scopes) + ",\"counts\":";
  append_json_counts(out, rep.counts());
  out += ",\"host_clock\":";
  append_json_string(out, rep.sources().host);
  out += ",\"quantiles\":{\"fields\":[\"median\",\"p90\",\"p99\"],\"relative_error\":\"1/129\"}";
  out += ",\"device\":\"each row's device: span and self of its scopes with a resolved span (null: none)\",\"tree\":[";
  for (std::size_t i = 0; i < rep.tree().size(); ++i) {
    if (i) out += ',';
    append_json_tree_row(out, rep.tree()[i], false, rep);
  }
  out += "]}\n";
  return out;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
