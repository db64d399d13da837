// scopeprof tool: `scopeprof show report.json [-o out]`: a saved JSON report rendered again by the
// library's own writers (text, CSV, JSON, HTML), so the JSON report is the one artifact to keep.
#include "commands.hpp"
#include "file_bytes.hpp"
#include "report_file.hpp"
#include "suffix.hpp"

#include <cstring>
#include <ostream>
#include <string>

namespace scopeprof_cli {

namespace {

/// The output's format by its suffix (a trailing .gz aside), or "" when the tool cannot write it.
std::string format_of(const std::string& path, std::string& why) {
  const std::string p = ends_with(path, ".gz") ? path.substr(0, path.size() - 3) : path;
  if (ends_with(p, ".trace.json") || ends_with(p, ".speedscope.json")) {
    why = "a trace needs the run's timeline, which a JSON report does not carry: write it at run time "
          "(SCOPEPROF_REPORT=run.trace.json) or use -o with .txt, .csv, .json or .html";
    return "";
  }
  if (ends_with(p, ".json")) return "json";
  if (ends_with(p, ".csv")) return "csv";
  if (ends_with(p, ".html") || ends_with(p, ".htm")) return "html";
  if (ends_with(p, ".txt")) return "text";
  why = "unknown output suffix (use .txt, .csv, .json or .html, optionally with .gz)";
  return "";
}

}  // namespace

int run_show(const show_options& o, std::ostream& out, std::ostream& err) {
  report_file f;
  std::string error;
  if (!load_report(o.input, f, error)) {
    err << "scopeprof show: " << error << "\n";
    return exit_bad_input;
  }
  if (o.output.empty() || o.output == "-") {
    f.report.print(out);
    return exit_ok;
  }
  std::string why;
  const std::string format = format_of(o.output, why);
  if (format.empty()) {
    err << "scopeprof show: " << o.output << ": " << why << "\n";
    return exit_bad_input;
  }
  scopeprof::write_result w;
  if (format == "json") w = f.report.write_json(o.output);
  else if (format == "csv") w = f.report.write_csv(o.output);
  else if (format == "html") w = f.report.write_html(o.output);
  else if (!write_file_text(o.output, f.report.to_string(), error))
    w = scopeprof::write_result::failure(error);
  if (!w) {
    err << "scopeprof show: " << w.message() << "\n";
    return exit_bad_input;
  }
  return exit_ok;
}

}  // namespace scopeprof_cli
