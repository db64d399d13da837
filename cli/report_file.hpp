// scopeprof tool: reading a saved JSON report (schema scopeprof-report/1, plain or gzip) back into a
// scopeprof::report, with a clear message naming the file and what is wrong when it cannot.
//
//   scopeprof_cli::report_file f;
//   std::string error;
//   if (!scopeprof_cli::load_report(path, f, error)) { err << error << "\n"; return exit_bad_input; }
//   for (const auto& row : f.report.tree()) ...
#pragma once

#include <scopeprof.hpp>

#include <string>

namespace scopeprof_cli {

/// The schema this tool reads (the library's JSON writer writes it).
inline constexpr const char* report_schema = "scopeprof-report/1";

/// One loaded report. The report has its tables (flat rows with their histograms, tree rows, kernel
/// summary, steps), counts, evidence, warnings and process; instances() and activities() are empty (a JSON
/// report carries no timeline).
struct report_file {
  std::string path;
  scopeprof::report report;
};

/// Reads `path` ("-" is stdin; a .gz path or gzip bytes are decompressed when built with zlib). False when
/// the file is missing, unreadable, truncated, not JSON, of another schema, or inconsistent; then `error`
/// is one line "PATH: what is wrong" and `out` is unchanged.
bool load_report(const std::string& path, report_file& out, std::string& error);

/// The same from bytes already read (`name` is used in messages).
bool parse_report(const std::string& bytes, const std::string& name, report_file& out, std::string& error);

/// Only the process and the call tree (tree() rows with calls, host total and self, device calls and total;
/// no statistics), by a streaming parser that keeps nothing else: what the merge needs, several times
/// faster than load_report on large reports. The same checks and messages for what it reads.
bool load_report_tree(const std::string& path, report_file& out, std::string& error);
bool parse_report_tree(const std::string& bytes, const std::string& name, report_file& out, std::string& error);

/// A tree row's path of names from its root, joined with " / " (names with that sequence stay ambiguous;
/// use tree_path_key for matching).
std::string tree_path_text(const scopeprof::report& r, std::size_t row);
/// A key unique per path of names, for matching nodes across reports: the names, each with '\\' and
/// '\x1f' escaped by a '\\', joined with '\x1f'.
std::string tree_path_key(const scopeprof::report& r, std::size_t row);

}  // namespace scopeprof_cli
