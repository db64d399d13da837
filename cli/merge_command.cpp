// scopeprof tool: `scopeprof merge` (commands.hpp): loads the rank reports one at a time, so memory holds
// one report plus the merged aggregates, and writes the merge as text, Markdown or JSON.
#include "commands.hpp"
#include "file_bytes.hpp"
#include "merge.hpp"
#include "merge_output.hpp"
#include "report_file.hpp"
#include "suffix.hpp"
#include "trace_merge.hpp"

#include <algorithm>
#include <filesystem>
#include <ostream>

namespace scopeprof_cli {

namespace {

/// The output format: o.format, else the output's suffix (a trailing .gz is the compression, not the
/// format). False, with the message in `error`, for a format merge cannot write.
bool choose_format(const merge_options& o, std::string& format, std::string& error) {
  if (!o.format.empty()) {
    format = o.format;
    if (format == "text" || format == "json" || format == "md") return true;
    error = "unknown format '" + o.format + "' (merge writes text, json or md)";
    return false;
  }
  std::string path = o.output;
  if (ends_with(path, ".gz")) path.resize(path.size() - 3);
  if (ends_with(path, ".trace.json")) {
    error = o.output + ": a merged trace is made from the ranks' traces, not their JSON reports (which carry " +
            "no timeline): scopeprof merge prof/run.*.trace.json -o " + o.output;
    return false;
  }
  if (ends_with(path, ".html")) {
    error = o.output + ": merge writes .txt, .md or .json (an HTML report is per rank: scopeprof show)";
    return false;
  }
  format = ends_with(path, ".json") ? "json" : ends_with(path, ".md") ? "md" : "text";
  return true;
}

/// Fails early (before reading a thousand reports) when the output's folder does not exist.
bool output_folder_exists(const std::string& path, std::string& error) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (parent.empty() || std::filesystem::is_directory(parent, ec)) return true;
  error = path + ": cannot write: folder " + parent.string() + " does not exist";
  return false;
}

/// A merge of traces: every input a trace, and an output file with a JSON suffix.
bool check_trace_merge(const merge_options& o, std::string& error) {
  const auto trace = std::find_if(o.inputs.begin(), o.inputs.end(), is_trace_path);
  for (const auto& in : o.inputs) {
    if (!is_trace_path(in)) {
      error = in + ": not a .trace.json, while " + *trace +
              " is: merge takes the ranks' JSON reports or their traces, not both";
      return false;
    }
  }
  if (!o.format.empty()) {
    error = "--format is for merges of JSON reports; a merge of traces writes a trace";
    return false;
  }
  std::string path = o.output;
  if (ends_with(path, ".gz")) path.resize(path.size() - 3);
  if (!ends_with(path, ".json")) {
    error = "a merge of traces writes a trace: give -o merged.trace.json (or .trace.json.gz)";
    return false;
  }
  return true;
}

/// Every input folded in, one report in memory at a time.
bool merge_inputs(const std::vector<std::string>& inputs, merged_result& result, std::string& error) {
  merger m;
  for (const auto& path : inputs) {
    report_file f;
    if (!load_report_tree(path, f, error) || !m.add(f, error)) return false;
  }
  result = m.finish(error);
  return error.empty();
}

std::string render(const merged_result& m, const std::string& format, int width) {
  if (format == "json") return merge_json(m);
  if (format == "md") return merge_markdown(m);
  return merge_text(m, width);
}

}  // namespace

int run_merge(const merge_options& o, std::ostream& out, std::ostream& err) {
  const bool to_stream = o.output.empty() || o.output == "-";
  std::string format, error;
  if (o.inputs.empty()) {
    err << "scopeprof merge: no input reports (give one JSON report per rank)\n";
    return exit_bad_input;
  }
  if (std::any_of(o.inputs.begin(), o.inputs.end(), is_trace_path)) {
    if (!check_trace_merge(o, error) || !output_folder_exists(o.output, error) ||
        !merge_traces(o.inputs, o.output, error)) {
      err << "scopeprof merge: " << error << "\n";
      return exit_bad_input;
    }
    return exit_ok;
  }
  if (!choose_format(o, format, error) || (!to_stream && !output_folder_exists(o.output, error))) {
    err << "scopeprof merge: " << error << "\n";
    return exit_bad_input;
  }
  merged_result merged;
  if (!merge_inputs(o.inputs, merged, error)) {
    err << "scopeprof merge: " << error << "\n";
    return exit_bad_input;
  }
  const std::string text = render(merged, format, o.width);
  if (to_stream) {
    out << text;
    return out ? exit_ok : exit_bad_input;
  }
  if (!write_file_text(o.output, text, error)) {
    err << "scopeprof merge: " << error << "\n";
    return exit_bad_input;
  }
  return exit_ok;
}

}  // namespace scopeprof_cli
