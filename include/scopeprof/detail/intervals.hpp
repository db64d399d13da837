// scopeprof: interval aggregates (SCOPEPROF_REPORT_EVERY=<N>s|<N>ms|<N>steps): the tables of each interval
// of a running job, appended as one JSON line per interval, so the job can be watched and plotted while it
// runs. This header holds the interval's state and decides, at each drain pass, where the interval ends;
// impl/intervals.hpp writes the lines.
//
// Where a scope goes. The drain folds a scope's whole call tree when its outermost scope ends, so a scope
// belongs to the interval in which its outermost scope ended. Intervals end at host counter values (cuts):
// every multiple of the period after the setting (seconds), or the mark of step A + k*N (steps, A being
// the next step when it was set). A pass first finds the cuts it has passed (drain.hpp), then folds each
// outermost scope into the part its end time falls in: [0] the interval under way, [k] the one after the
// k-th cut. The closed parts are written as lines and added to the run's tables, and the last part goes on
// as the interval under way. So the lines tile the run without gap or overlap, and add up to the tables.
// (A scope of another thread that is being written at the very instant of a cut may land in the next line.)
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/call_path_fold.hpp>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

enum class interval_unit : std::uint8_t { off, nanoseconds, steps };

/// A parsed SCOPEPROF_REPORT_EVERY value.
struct interval_every {
  interval_unit unit = interval_unit::off;
  std::uint64_t n = 0;  // ns or steps
  std::string text = "off";
};

/// Parse "<N>s", "<N>ms", "<N>min", "<N>steps" (also "<N>step"), or "off"/"" (off). False, with `why`, for
/// anything else; `out` is then unchanged.
inline bool parse_interval_every(const std::string& value, interval_every& out, std::string& why) {
  if (value.empty() || value == "off" || value == "0") {
    out = interval_every{};
    return true;
  }
  std::size_t digits = 0;
  while (digits < value.size() && value[digits] >= '0' && value[digits] <= '9') ++digits;
  const std::string unit = value.substr(digits);
  std::uint64_t n = 0;
  if (digits == 0 || digits > 12 || (n = std::strtoull(value.substr(0, digits).c_str(), nullptr, 10)) == 0) {
    why = "expected a whole number from 1 followed by s, ms, min or steps, e.g. 10s or 100steps";
    return false;
  }
  interval_every e;
  e.text = value;
  std::uint64_t scale = 1;
  if (unit == "s") e.unit = interval_unit::nanoseconds, scale = 1'000'000'000ull;
  else if (unit == "ms") e.unit = interval_unit::nanoseconds, scale = 1'000'000ull;
  else if (unit == "min") e.unit = interval_unit::nanoseconds, scale = 60'000'000'000ull;
  else if (unit == "steps" || unit == "step") e.unit = interval_unit::steps;
  else {
    why = "the unit must be s, ms, min or steps (e.g. 10s or 100steps)";
    return false;
  }
  if (n > (std::numeric_limits<std::uint64_t>::max)() / scale / 2) {
    why = "an interval too long to count";
    return false;
  }
  e.n = n * scale;
  if (e.unit == interval_unit::nanoseconds && e.n < 1'000'000ull) {
    why = "an interval shorter than 1 ms";
    return false;
  }
  out = e;
  return true;
}

/// The interval file beside the report at exit: its path without the format's suffix, plus
/// ".intervals.jsonl"; "scopeprof-%p.intervals.jsonl" when the report goes to no file.
inline std::string default_interval_path(const std::string& report_target) {
  const std::string fallback = "scopeprof-%p.intervals.jsonl";
  if (report_target.empty() || report_target == "stderr" || report_target == "stdout") return fallback;
  std::string base = report_target;
  const auto strip = [&base](std::string_view suffix) {
    if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
      base.resize(base.size() - suffix.size());
      return true;
    }
    return false;
  };
  strip(".gz");
  for (std::string_view s : {".json", ".csv", ".txt", ".html"})
    if (strip(s)) break;
  if (!strip(".trace")) strip(".speedscope");
  return base + ".intervals.jsonl";
}

/// One end of an interval found by a pass: the host counter value, and (steps) the mark's number.
struct interval_cut {
  std::uint64_t ticks = 0;
  std::uint64_t step = 0;
  std::int64_t ns = 0;  // seconds: the steady ns it stands for (0: from ticks)
};

/// The interval now being filled, and where the intervals a pass closes end. Under collect_mu.
struct interval_state {
  interval_every every;
  std::string path;                 // the JSON lines file, %p for the process id ("" until set)
  std::vector<path_tree> parts = std::vector<path_tree>(1);  // [0]: the interval under way; [k]: after cuts[k-1]
  std::vector<interval_cut> cuts;   // this pass: where intervals end, ascending
  std::uint64_t begin_ticks = 0;    // where the interval under way began (host counter)
  std::uint64_t begin_step = 0;     // steps: the mark that opened it (its number)
  std::int64_t begin_ns = 0;        // where it began, steady ns as the previous line's end was written
  std::int64_t due_ns = 0;          // seconds: steady ns at which the interval under way ends
  std::int64_t next_due_ns = 0;     // ... after this pass's cuts
  bool final_line = false;          // this pass writes the last line (exit)
  std::uint64_t lines = 0;          // interval lines written
  std::uint64_t lines_failed = 0;   // lines that could not be written
  bool warned = false;              // a write failure was reported

  bool active() const noexcept { return every.unit != interval_unit::off; }

  /// The part an outermost scope that ended at `end_ticks` is folded into, when intervals are on.
  path_tree& target(std::uint64_t end_ticks) noexcept {
    std::size_t k = 0;
    while (k < cuts.size() && cuts[k].ticks <= end_ticks) ++k;
    return parts[k];
  }

  /// reset(): forget the scopes of the interval so far (the boundaries stay).
  void forget() noexcept {
    for (path_tree& p : parts) p.clear();
  }
};

}  // namespace detail
SCOPEPROF_NAMESPACE_END
