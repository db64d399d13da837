// scopeprof tool, `diff A.json B.json`: per flat row (scope name) and quantity (host time per call, device
// span per call), A against B: medians, the change, the totals and the time that moved, and whether the
// change is significant by a Mann-Whitney U test on the per-call histograms (rank_test.hpp).
//
//   auto d = scopeprof_cli::compare(a, b, scopeprof_cli::diff_settings{});
//   scopeprof_cli::write_diff_text(d, std::cout);
//   if (!d.failed.empty()) return exit_finding;
#pragma once

#include "commands.hpp"
#include "rank_test.hpp"

#include <nlohmann/json.hpp>
#include <scopeprof.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace scopeprof_cli {

/// What the header says the test is.
inline constexpr const char* diff_method =
    "Mann-Whitney U (two-sided, normal approximation with tie correction) on per-call histograms";
/// The schema of `diff --format json`.
inline constexpr const char* diff_schema = "scopeprof-diff/1";

struct diff_settings {
  double alpha = 0.05;        ///< significance level
  double fail_above = -1;     ///< a significant slowdown above this fraction fails; < 0: off
  double min_change = 0.01;   ///< a significant change smaller than this is still "same"
  bool gate_host = true;      ///< host rows may fail (--fail-on host|both)
  bool gate_device = true;    ///< device rows may fail (--fail-on device|both)
};

enum class diff_verdict { slower, faster, same, too_few_calls, only_in_a, only_in_b };

/// "slower", "faster", "same", "too few calls", "only in A", "only in B".
const char* verdict_text(diff_verdict v) noexcept;

struct diff_row {
  std::string name;
  std::string quantity;  ///< "host" (inclusive host time per call) or "device" (device span per call)
  std::uint64_t calls_a = 0, calls_b = 0;
  double median_a = 0, median_b = 0;  ///< per call, ns (within 1/129 relative)
  double change = 0;                  ///< median_b / median_a - 1; +inf when A's median is 0 and B's not
  std::int64_t total_a = 0, total_b = 0;
  std::int64_t moved = 0;             ///< total_b - total_a, ns
  rank_test_result test;              ///< tested == false for "too few calls" and rows on one side
  diff_verdict verdict = diff_verdict::same;
  bool failed = false;                ///< slower by more than fail_above, significantly
};

/// One side's identity for the header.
struct diff_side {
  std::string path;     ///< as given (compare() leaves it empty)
  std::string program;  ///< "" when unknown
  std::int64_t rank = 0;
  std::string host;
};

/// Declared work of one scope name in both runs (diff_work.cpp): each run's achieved rates over its own
/// time (work_rate.hpp). Not tested for significance: a rate is a ratio of sums, not a per-call sample;
/// the device or host rows above carry the test.
struct work_diff_row {
  std::string name;
  std::string basis_a, basis_b;                  ///< "device", "host" or "n/a"; "" where that run declared none
  double bytes_per_call_a = 0, bytes_per_call_b = 0;  ///< declared, per instance that declared work
  double flops_per_call_a = 0, flops_per_call_b = 0;
  double bytes_per_s_a, bytes_per_s_b;           ///< NaN where there is no rate
  double flops_per_s_a, flops_per_s_b;
  bool same_work = true;  ///< both runs declared the same bytes and FLOPs per call (else a rate's change
                          ///< is not only speed)
};

struct diff_result {
  diff_side a, b;
  diff_settings settings;
  std::vector<diff_row> rows;  ///< by |moved| descending
  std::vector<std::size_t> failed;  ///< indices into rows of the failed ones, in row order
  std::vector<work_diff_row> work;  ///< names with declared work in either run, in A's order then B's
};

/// The declared-work rows of A against B (compare() fills diff_result::work with them).
std::vector<work_diff_row> compare_work(const scopeprof::report& a, const scopeprof::report& b);
/// The declared-work section of each writer; nothing when no row declared work.
void write_work_text(const diff_result& d, std::ostream& out);
void write_work_markdown(const diff_result& d, std::ostream& out);
nlohmann::ordered_json work_json(const diff_result& d);

/// The pure core: A against B, rows sorted by the absolute time that moved.
diff_result compare(const scopeprof::report& a, const scopeprof::report& b, const diff_settings& settings);

/// Writers (diff_output.cpp). Text: header and an aligned table (`width` > 0 shortens long names to fit).
void write_diff_text(const diff_result& d, std::ostream& out, int width = 0);
/// Markdown for a CI comment: a bold verdict line, the header, one table, the footnote.
void write_diff_markdown(const diff_result& d, std::ostream& out);
/// JSON, schema scopeprof-diff/1, times in integer ns.
void write_diff_json(const diff_result& d, std::ostream& out);

/// "12.3 ms": three significant figures with a unit (ns, us, ms, s); a sign when `sign` is set.
std::string format_duration(double ns, bool sign = false);
/// "+20.0%", "-3.10%", "inf"... (three significant figures).
std::string format_change(double change);
/// "5%": a threshold (a fraction) as a percentage, as short as it goes.
std::string format_threshold(double fraction);
/// "1 row slower by more than 5% with significance: step (host +20.0%, p 1.2e-30)": the failed rows in one
/// line, for err and the verdict line.
std::string failed_rows_text(const diff_result& d);

}  // namespace scopeprof_cli
