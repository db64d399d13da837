// scopeprof tool: `scopeprof merge run.*.trace.json -o merged.trace.json`: the Chrome traces of a job's
// ranks as one trace, one group of processes per rank, on one time axis.
//
// Each rank's events keep their tracks; their pids are renumbered so that no two ranks share one (device
// tracks of different ranks would otherwise fold together), and each process is named "rank R: NAME".
// Times are moved onto the earliest rank's baseTimeNanoseconds: a rank's ts grow by the difference of the
// wall-clock bases, rounded to 1/1024 us so the ts stay exact doubles (no child ends after its parent).
// Flow and async ids are made unique per rank. The merge streams: one input's bytes and one event in
// memory at a time, the output written as it goes.
#pragma once

#include <string>
#include <vector>

namespace scopeprof_cli {

/// Merges the traces at `inputs` (one per rank, .gz too) into `output` (.gz: gzip). False, with "FILE: what
/// is wrong" in `error` and no output file left behind, when an input is unreadable, not a Chrome trace,
/// lacks the baseTimeNanoseconds that aligns it (with more than one input), repeats a rank, or
/// belongs to another job or program, or when ranks 0..W-1 are not all there.
bool merge_traces(const std::vector<std::string>& inputs, const std::string& output, std::string& error);

/// True when `path` names a Chrome trace by its suffix (.trace.json, optionally .gz).
bool is_trace_path(const std::string& path);

}  // namespace scopeprof_cli
