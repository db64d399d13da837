// scopeprof tool: merging the ranks' Chrome traces into one (trace_merge.hpp).
#include "trace_merge.hpp"

#include "file_bytes.hpp"
#include "rank_roster.hpp"
#include "suffix.hpp"
#include "trace_reader.hpp"

#include <scopeprof.hpp>
#include <scopeprof/detail/gzip_sink.hpp>  // detail::write_to_path: the writers' file and gzip sinks

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace scopeprof_cli {

namespace {

using json = nlohmann::ordered_json;  // events keep their fields' order

/// Integers a double holds exactly: flow ids stay below this so that JavaScript viewers read them right.
constexpr double exact_integer_limit = 9007199254740992.0;  // 2^53

/// One rank's pass over its events: the time shift, and the pids it has renumbered.
class rank_pass {
 public:
  rank_pass(std::int64_t rank, std::size_t index, std::size_t inputs, double shift_us, std::int64_t& next_pid)
      : rank_(rank), index_(index), inputs_(inputs), shift_us_(shift_us), next_pid_(next_pid) {}

  void transform(json& ev) {
    if (auto pid = ev.find("pid"); pid != ev.end()) *pid = new_pid(*pid);
    if (auto ts = ev.find("ts"); ts != ev.end() && ts->is_number()) *ts = ts->get<double>() + shift_us_;
    for (const char* key : {"id", "bind_id"})
      if (auto id = ev.find(key); id != ev.end()) *id = new_id(*id);
    const auto ph = ev.find("ph");
    const auto name = ev.find("name");
    if (ph == ev.end() || *ph != "M" || name == ev.end() || ev.find("pid") == ev.end()) return;
    const std::int64_t pid = ev["pid"].get<std::int64_t>();
    auto args = ev.find("args");
    if (*name == "process_name" && args != ev.end() && args->is_object()) {
      const auto old = args->find("name");
      const std::string was = old != args->end() && old->is_string() ? old->get<std::string>() : std::string("process");
      (*args)["name"] = "rank " + std::to_string(rank_) + ": " + was;
      named_.insert(pid);
    } else if (*name == "process_sort_index" && args != ev.end() && args->is_object()) {
      const auto old = args->find("sort_index");
      const std::int64_t was = old != args->end() && old->is_number_integer() ? old->get<std::int64_t>() : 0;
      (*args)["sort_index"] = sort_index(was);
      sorted_.insert(pid);
    }
  }

  /// Metadata for the processes of this rank that had no name or sort index of their own.
  std::vector<json> missing_metadata() const {
    std::vector<json> out;
    for (const auto& [old, pid] : pids_) {
      if (!named_.count(pid))
        out.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0},
                       {"args", {{"name", "rank " + std::to_string(rank_) + ": pid " + old}}}});
      if (!sorted_.count(pid))
        out.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0},
                       {"args", {{"sort_index", sort_index(0)}}}});
    }
    return out;
  }

  /// The renumbering, old pid (as JSON text) -> new pid.
  const std::map<std::string, std::int64_t>& pids() const noexcept { return pids_; }

 private:
  std::int64_t new_pid(const json& old) {
    auto [it, inserted] = pids_.try_emplace(old.is_string() ? old.get<std::string>() : old.dump(), next_pid_);
    if (inserted) ++next_pid_;
    return it->second;
  }
  /// Ids unique across ranks: an integer id i becomes i * inputs + index while that stays exact in a
  /// double; anything else becomes the string "rR:" + its text.
  json new_id(const json& old) const {
    if (old.is_number_integer()) {
      const double scaled = std::fabs(old.get<double>()) * static_cast<double>(inputs_) + static_cast<double>(inputs_);
      if (scaled < exact_integer_limit)
        return old.get<std::int64_t>() * static_cast<std::int64_t>(inputs_) + static_cast<std::int64_t>(index_);
    }
    return "r" + std::to_string(rank_) + ":" + (old.is_string() ? old.get<std::string>() : old.dump());
  }
  /// Ranks in order, a rank's own order of processes kept inside its block of 1000.
  std::int64_t sort_index(std::int64_t was) const {
    return rank_ * 1000 + 500 + std::clamp<std::int64_t>(was, -499, 499);
  }

  std::int64_t rank_;
  std::size_t index_, inputs_;
  double shift_us_;
  std::int64_t& next_pid_;
  std::map<std::string, std::int64_t> pids_;
  std::set<std::int64_t> named_, sorted_;
};

/// Reads every input's header and checks the set; the inputs come back ascending by rank.
bool read_headers(const std::vector<std::string>& paths, std::vector<merge_input>& inputs, std::int64_t& world,
                  std::string& program, std::string& error) {
  rank_roster roster("traces");
  for (const auto& path : paths) {
    std::string bytes;
    trace_header h;
    if (!read_file_bytes(path, bytes, error) || !read_trace_header(bytes, path, h, error)) return false;
    if (!h.has_events) {
      error = path + ": not a Chrome trace (no traceEvents array)";
      return false;
    }
    if (!h.has_base && paths.size() > 1) {
      error = path + ": no baseTimeNanoseconds, so its times cannot be placed beside the other ranks' "
                     "(scopeprof and Kineto traces have it)";
      return false;
    }
    if (!h.has_rank && paths.size() > 1) {
      error = path + ": no distributedInfo with rank and world_size: which rank wrote it is unknown "
                     "(run under a launcher, or call scopeprof::set_rank)";
      return false;
    }
    if (!roster.add({path, h.rank, h.host, h.pid, h.program, h.base_unix_ns}, h.world_size, error)) return false;
  }
  if (std::string why = roster.incomplete(); !why.empty()) {
    error = why;
    return false;
  }
  world = roster.world_size();
  program = roster.program();
  inputs = roster.take_by_rank();
  return true;
}

/// A rank's time shift in us: its base minus the earliest, in whole 1/1024 us.
double shift_of(std::int64_t base, std::int64_t earliest) {
  const double ns = static_cast<double>(base - earliest);
  return std::round(ns * 1.024) / 1024.0;
}

void write_head(scopeprof::detail::output_sink& out, const std::vector<merge_input>& inputs, std::int64_t world, const std::string& program,
                std::int64_t earliest) {
  json ranks = json::array();
  for (const auto& in : inputs)
    ranks.push_back({{"rank", in.rank}, {"file", in.file}, {"host", in.host}, {"pid", in.pid},
                     {"base_unix_ns", in.base_unix_ns}, {"shift_us", shift_of(in.base_unix_ns, earliest)}});
  const json other = {
      {"generator", std::string("scopeprof merge ") + SCOPEPROF_VERSION_STRING},
      {"world_size", world},
      {"program", program},
      {"time_unit", "us from baseTimeNanoseconds; each rank moved by its baseTimeNanoseconds minus this one's, "
                    "rounded to 1/1024 us (ranks on different hosts line up as well as their clocks agree)"},
      {"processes", "renumbered per rank and named 'rank R: NAME'"},
      {"per_scope_figures", "scopeprofScopes stays in each rank's own trace"},
      {"ranks", ranks}};
  out.append("{\"schemaVersion\":1,\"deviceProperties\":[],\"baseTimeNanoseconds\":");
  out.append(std::to_string(earliest));
  out.append(",\"displayTimeUnit\":\"ns\",\"otherData\":");
  out.append(other.dump());
  out.append(",\"traceEvents\":[");
}

}  // namespace

bool is_trace_path(const std::string& path) {
  return ends_with(path, ".trace.json") || ends_with(path, ".trace.json.gz");
}

bool merge_traces(const std::vector<std::string>& paths, const std::string& output, std::string& error) {
  std::vector<merge_input> inputs;
  std::int64_t world = 0;
  std::string program;
  if (!read_headers(paths, inputs, world, program, error)) return false;
  std::int64_t earliest = inputs.front().base_unix_ns;
  for (const auto& in : inputs) earliest = std::min(earliest, in.base_unix_ns);

  // The library's own file and gzip sinks (1 MiB chunks). An input that cannot be read half-way abandons
  // the write: the sink removes the partial file when this write created it, and `error` names the input.
  const scopeprof::write_result w = scopeprof::detail::write_to_path(output, "merged trace", [&](scopeprof::detail::output_sink& out) {
    write_head(out, inputs, world, program, earliest);
    bool first = true;
    auto emit = [&](const json& ev) {
      out.append(first ? "\n" : ",\n");
      first = false;
      out.append(ev.dump());
    };
    std::int64_t next_pid = 1;
    for (std::size_t i = 0; i < inputs.size() && error.empty(); ++i) {
      std::string bytes;
      if (!read_file_bytes(inputs[i].file, bytes, error)) break;
      rank_pass pass(inputs[i].rank, i, inputs.size(), shift_of(inputs[i].base_unix_ns, earliest), next_pid);
      const bool ok = for_each_trace_event(bytes, inputs[i].file, [&](json& ev, std::string&) {
        pass.transform(ev);
        emit(ev);
        return true;
      }, error);
      if (!ok) break;
      for (const auto& ev : pass.missing_metadata()) emit(ev);
    }
    if (!error.empty()) out.abandon("an input could not be read");
    else out.append("\n]}\n");
  });
  if (error.empty() && !w) error = write_failure_text(w);
  return error.empty();
}

}  // namespace scopeprof_cli
