// scopeprof: output paths of a job of several ranks. A path may hold {rank}, {local_rank}, {world_size},
// {pid} and {host}; every writer expands them. A path the environment names (SCOPEPROF_REPORT, the
// interval file, the dump files) that cannot tell the ranks apart gets the rank added before its format's
// suffix, with one warning, so the ranks of a job never write over each other's files.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/env.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/report_types.hpp>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// A host name as a path component: letters, digits, '.', '-' and '_' stay, anything else becomes '_'.
inline std::string path_safe(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '-' || c == '_';
    out += keep ? c : '_';
  }
  if (out.empty() || out == "." || out == "..") out = "unknown";
  return out;
}

/// `pattern` with {rank}, {local_rank}, {world_size}, {pid} and {host} replaced; any other brace is kept.
inline std::string expand_path_template(std::string_view pattern, const process_desc& p) {
  std::string out;
  out.reserve(pattern.size() + 16);
  for (std::size_t i = 0; i < pattern.size();) {
    if (pattern[i] == '{') {
      const std::size_t close = pattern.find('}', i);
      if (close != std::string_view::npos) {
        const std::string_view key = pattern.substr(i + 1, close - i - 1);
        std::string value;
        bool known = true;
        if (key == "rank") value = std::to_string(p.rank);
        else if (key == "local_rank") value = std::to_string(p.local_rank);
        else if (key == "world_size") value = std::to_string(p.world_size);
        else if (key == "pid") value = std::to_string(p.pid);
        else if (key == "host") value = path_safe(p.host);
        else known = false;
        if (known) {
          out += value;
          i = close + 1;
          continue;
        }
      }
    }
    out += pattern[i++];
  }
  return out;
}

/// Whether a path pattern gives each rank of a job its own file: it holds {rank}, {pid} (or %p, which the
/// dump and interval files expand), or both {host} and {local_rank}.
inline bool path_separates_ranks(std::string_view pattern) {
  const auto has = [pattern](std::string_view s) { return pattern.find(s) != std::string_view::npos; };
  return has("{rank}") || has("{pid}") || has("%p") || (has("{host}") && has("{local_rank}"));
}

/// "prof/run.trace.json.gz" -> "prof/run.rank3.trace.json.gz": ".rank<R>" before the format's suffix (the
/// first of .trace.json, .speedscope.json, .intervals.jsonl, .json, .jsonl, .csv, .html, .txt in the file
/// name, with a .gz after it), or at the end when the name has none of them.
inline std::string path_with_rank(const std::string& path, std::int64_t rank) {
  const std::string tag = ".rank" + std::to_string(rank);
  const std::size_t slash = path.find_last_of('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  const std::string lowered = lower(path.substr(name));
  std::size_t at = std::string::npos;
  for (std::string_view suffix : {".trace.json", ".speedscope.json", ".intervals.jsonl", ".json", ".jsonl", ".csv", ".html", ".txt"}) {
    for (std::string_view tail : {"", ".gz"}) {
      const std::string s = std::string(suffix) + std::string(tail);
      if (lowered.size() > s.size() && lowered.compare(lowered.size() - s.size(), s.size(), s) == 0) {
        at = name + lowered.size() - s.size();
        break;
      }
    }
    if (at != std::string::npos) break;
  }
  if (at == std::string::npos) return path + tag;
  return path.substr(0, at) + tag + path.substr(at);
}

/// A path the environment names (`variable` says which, for the warning): templates expanded, and when the
/// process is one of several ranks and the pattern cannot tell them apart, the rank added, with one warning
/// per variable.
inline std::string job_output_path(const std::string& pattern, const char* variable, const process_desc& p) {
  std::string path = expand_path_template(pattern, p);
  if (p.world_size <= 1 || path_separates_ranks(pattern)) return path;
  path = path_with_rank(path, p.rank);
  static std::mutex* mu = new std::mutex();  // never destroyed: exit handlers come here
  static std::set<std::string>* warned = new std::set<std::string>();
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(*mu);
    first = warned->insert(variable).second;
  }
  if (first)
    warn(std::string(variable) + "=" + detail::quoted(pattern) + " names one file for all " + std::to_string(p.world_size) +
         " ranks of this job: each rank writes its own (this one: " + detail::quoted(path) +
         "); put {rank} in the path to choose the name");
  return path;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
