// scopeprof: the report's process (rank, host, pid, devices, wall clock) as the outputs write it: one line
// of words for the text, HTML and speedscope headers, and one JSON object for the JSON report, the interval
// lines and speedscope's own member.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report_types.hpp>

#include <string>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// "rank 3 of 8 (local 1, from RANK), host node7, pid 4242, GPU 0", or "host node7, pid 4242" for a
/// process no launcher ranked. Names are shown with control characters escaped.
inline std::string process_words(const process_desc& p) {
  std::string s;
  if (!p.rank_source.empty() || p.world_size > 1)
    s += "rank " + std::to_string(p.rank) + " of " + std::to_string(p.world_size) + " (local " +
         std::to_string(p.local_rank) + (p.rank_source.empty() ? "" : ", from " + display_name(p.rank_source)) + "), ";
  s += "host " + display_name(p.host) + ", pid " + std::to_string(p.pid);
  for (std::size_t i = 0; i < p.devices.size(); ++i)
    s += (i == 0 ? (p.devices.size() == 1 ? ", GPU " : ", GPUs ") : ",") + std::to_string(p.devices[i]);
  return s;
}

/// {"rank":R,"world_size":W,"local_rank":L,"rank_source":"...","host":"...","program":"...","pid":P,
/// "base_unix_ns":N,"devices":[...]}
/// (base_unix_ns null when unknown).
inline void append_json_process(std::string& out, const process_desc& p) {
  out += "{\"rank\":" + std::to_string(p.rank) + ",\"world_size\":" + std::to_string(p.world_size) +
         ",\"local_rank\":" + std::to_string(p.local_rank) + ",\"rank_source\":";
  append_json_string(out, p.rank_source);
  out += ",\"host\":";
  append_json_string(out, p.host);
  out += ",\"program\":";
  append_json_string(out, p.program);
  out += ",\"pid\":" + std::to_string(p.pid) + ",\"base_unix_ns\":";
  out += p.base_unix_ns != 0 ? std::to_string(p.base_unix_ns) : std::string("null");
  out += ",\"devices\":[";
  for (std::size_t i = 0; i < p.devices.size(); ++i) out += (i ? "," : "") + std::to_string(p.devices[i]);
  out += "]}";
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
