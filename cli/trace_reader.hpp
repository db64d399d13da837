// scopeprof tool: reading a Chrome trace (the ones scopeprof writes, and Kineto's) without holding its
// document: the top-level fields that say which process wrote it, and then its events one at a time.
//
//   scopeprof_cli::trace_header h;
//   if (!read_trace_header(bytes, path, h, error)) fail(error);
//   for_each_trace_event(bytes, path, [&](trace_event& ev, std::string& why) { ...; return true; }, error);
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace scopeprof_cli {

/// What a trace's top-level fields say about the process that wrote it.
struct trace_header {
  bool has_events = false;     ///< a "traceEvents" array (a Chrome trace); false: some other JSON
  bool has_rank = false;       ///< distributedInfo.rank and world_size are integers
  std::int64_t rank = 0;       ///< 0 and 1 without distributedInfo
  std::int64_t world_size = 1;
  bool has_base = false;       ///< baseTimeNanoseconds is an integer
  std::int64_t base_unix_ns = 0;
  std::string program;  ///< otherData.program, "" when absent
  std::string host;     ///< otherData.host
  std::int64_t pid = 0; ///< otherData.pid
};

/// Reads the top-level fields of the trace in `bytes` (`name` names it in messages), and stops as soon as
/// it has them all. False, with "NAME: what is wrong" in `error`, when the bytes are not JSON, not a JSON
/// object, or a field has the wrong type.
bool read_trace_header(const std::string& bytes, const std::string& name, trace_header& h, std::string& error);

/// One event, its fields in the order of the file.
using trace_event = nlohmann::ordered_json;
/// Called with each element of traceEvents in order; returns false, with a reason in `why`, to stop.
using trace_event_handler = std::function<bool(trace_event& event, std::string& why)>;

/// Parses the whole trace and hands each event to `on_event`, holding one event at a time. False, with
/// "NAME: what is wrong" in `error`, when the bytes are not a valid trace (an element of traceEvents that is
/// not an object, a truncated file) or the handler stopped.
bool for_each_trace_event(const std::string& bytes, const std::string& name, const trace_event_handler& on_event,
                          std::string& error);

}  // namespace scopeprof_cli
