// scopeprof tool: the writers of a merged result (merge.hpp): a text table that fits a terminal, Markdown,
// and JSON (schema scopeprof-merge/1).
#pragma once

#include "merge.hpp"

#include <string>

namespace scopeprof_cli {

/// The schema of merge_json's document.
inline constexpr const char* merge_schema = "scopeprof-merge/1";

/// The legend every output carries.
inline constexpr const char* merge_legend =
    "host and device are separate quantities; imbalance = max/mean over ranks; straggler = rank with the max; "
    "declared work (when any): bytes and FLOPs summed over ranks, GB/s and TFLOP/s of each rank over its own "
    "device spans (else host time), slowest = rank with the lowest GB/s";

/// The text table, no line wider than `width` columns (0: $COLUMNS, else 120; at least 60). Names are
/// indented by depth and cut with "..." to fit. When host and device columns do not fit side by side, the
/// device figures follow in a second table.
std::string merge_text(const merged_result& m, int width);

/// A Markdown document: the header and one table with every column.
std::string merge_markdown(const merged_result& m);

/// The JSON document: inputs, and per node its path, depth, parent, ranks_present, calls and per quantity
/// (host_total, host_self, device_total or null) {ranks, min, median, max, mean, straggler, imbalance,
/// per_rank} with integer nanoseconds and null in per_rank for a rank without the node.
std::string merge_json(const merged_result& m);

/// "12.3ms", "850us", "1.50s": a duration in at most 7 characters below 10000 s.
std::string format_ns(double ns);
/// "2.00x", "12.5x", "1024x".
std::string format_ratio(double x);

}  // namespace scopeprof_cli
