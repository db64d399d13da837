// scopeprof: the command-line tool. Merges the reports of a job's ranks, compares two runs, and renders a
// saved JSON report again. `scopeprof --help` and `scopeprof COMMAND --help` say how.
#include "commands.hpp"

#include <scopeprof/version.hpp>

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <string>

namespace {

void add_merge(CLI::App& app, scopeprof_cli::merge_options& o) {
  CLI::App* c = app.add_subcommand("merge", "Merge the JSON reports of a job's ranks: per call path, min/median/max "
                                            "over ranks, the straggler rank and imbalance (host and device apart); "
                                            "or merge their Chrome traces into one, a process group per rank");
  c->add_option("reports", o.inputs, "JSON reports (.json, .json.gz) or Chrome traces (.trace.json, .trace.json.gz), "
                                     "one per rank")->required();
  c->add_option("-o,--output", o.output, "output file: .txt (default: the table on stdout), .json, .md; "
                                         "for traces: merged.trace.json");
  c->add_option("-f,--format", o.format, "text, json or md (default: by the output's suffix)")
      ->check(CLI::IsMember({"text", "json", "md"}));
  c->add_option("-w,--width", o.width, "width of the text table (default: $COLUMNS or 120)")->check(CLI::Range(40, 1000));
}

void add_diff(CLI::App& app, scopeprof_cli::diff_options& o, std::string& fail_above) {
  CLI::App* c = app.add_subcommand("diff", "Compare two runs per scope: median per call, total, and a Mann-Whitney U "
                                           "test on the per-call histograms");
  c->add_option("baseline", o.baseline, "report A (before)")->required();
  c->add_option("candidate", o.candidate, "report B (after)")->required();
  c->add_option("-o,--output", o.output, "output file (default: stdout)");
  c->add_option("-f,--format", o.format, "text, md or json (default: by the output's suffix)")
      ->check(CLI::IsMember({"text", "md", "json"}));
  c->add_option("--fail-above", fail_above,
                "exit 1 when a scope's median per call rose by more than this (5% or 0.05) with significance");
  c->add_option("--fail-on", o.fail_on,
                 "which rows --fail-above gates: device (device spans only: host times of launch-only scopes shift "
                 "between processes), host, or both (default)")
      ->check(CLI::IsMember({"host", "device", "both"}));
  c->add_option("--alpha", o.alpha, "significance level (default 0.05)")->check(CLI::Range(1e-12, 0.5));
  c->add_flag("--allow-other-program", o.allow_other_program, "compare reports of differently named programs");
  c->add_option("-w,--width", o.width, "width of the text table (default: $COLUMNS or 120)")->check(CLI::Range(40, 1000));
}

void add_show(CLI::App& app, scopeprof_cli::show_options& o) {
  CLI::App* c = app.add_subcommand("show", "Render a saved JSON report again: text tables, CSV, JSON or HTML");
  c->add_option("report", o.input, "a JSON report (.json or .json.gz, - for stdin)")->required();
  c->add_option("-o,--output", o.output, "output file: .txt, .csv, .json, .html (+ .gz); default: the tables on stdout");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    CLI::App app{"scopeprof: merge rank reports, compare runs, render saved reports", "scopeprof"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("scopeprof ") + SCOPEPROF_VERSION_STRING);
    scopeprof_cli::merge_options merge;
    scopeprof_cli::diff_options diff;
    scopeprof_cli::show_options show;
    std::string fail_above;
    add_merge(app, merge);
    add_diff(app, diff, fail_above);
    add_show(app, show);
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      const int rc = app.exit(e);  // prints help or the usage error
      return rc == 0 ? 0 : scopeprof_cli::exit_bad_input;
    }
    if (app.got_subcommand("merge")) return scopeprof_cli::run_merge(merge, std::cout, std::cerr);
    if (app.got_subcommand("show")) return scopeprof_cli::run_show(show, std::cout, std::cerr);
    if (!fail_above.empty()) {
      std::string error;
      if (!scopeprof_cli::parse_fraction(fail_above, diff.fail_above, error)) {
        std::cerr << "scopeprof diff: --fail-above " << fail_above << ": " << error << "\n";
        return scopeprof_cli::exit_bad_input;
      }
    }
    return scopeprof_cli::run_diff(diff, std::cout, std::cerr);
  } catch (const std::exception& e) {  // out of memory on a huge input, or a bug: a message, not an abort
    std::cerr << "scopeprof: " << e.what() << "\n";
    return scopeprof_cli::exit_bad_input;
  }
}
