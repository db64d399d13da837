// scopeprof tool: the commands main.cpp dispatches to. Each takes its options, writes its result to the
// output the options name (or `out`), its diagnostics to `err`, and returns the process exit status:
// 0 success, 1 a finding the options ask to fail on (diff --fail-above), 2 bad input or usage.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace scopeprof_cli {

/// Exit statuses of every command.
enum exit_code : int { exit_ok = 0, exit_finding = 1, exit_bad_input = 2 };

struct merge_options {
  std::vector<std::string> inputs;  ///< JSON reports (optionally .gz), one per rank
  std::string output;               ///< "" or "-": the text table on `out`; else a file, format by suffix
  std::string format;               ///< "", "text", "json", "md": overrides the suffix
  int width = 0;                    ///< text table width in columns; 0: $COLUMNS or 120
};

struct diff_options {
  std::string baseline;   ///< A
  std::string candidate;  ///< B
  std::string output;     ///< "" or "-": `out`
  std::string format;     ///< "", "text", "md", "json"
  double fail_above = -1; ///< fraction (0.05 for "5%"); < 0: off
  double alpha = 0.05;    ///< significance level of the test
  std::string fail_on = "both";  ///< which rows --fail-above gates: "host", "device" or "both"
  bool allow_other_program = false;  ///< compare reports whose process().program differ
  int width = 0;
};

struct show_options {
  std::string input;
  std::string output;  ///< "" or "-": the text tables on `out`; else by suffix (.txt .csv .json .html, .gz)
};

int run_merge(const merge_options& o, std::ostream& out, std::ostream& err);
int run_diff(const diff_options& o, std::ostream& out, std::ostream& err);
int run_show(const show_options& o, std::ostream& out, std::ostream& err);

/// "5%", "0.05", "5 %" -> 0.05; false (and `error` says why) for anything else.
bool parse_fraction(const std::string& text, double& value, std::string& error);

}  // namespace scopeprof_cli
