// scopeprof tool: the bytes of an input file (gzip decompressed), and why a JSON text failed to parse.
#pragma once

#include <scopeprof/report_types.hpp>

#include <string>

namespace scopeprof_cli {

/// Reads `path` ("-": stdin) whole; gzip bytes (by their magic number, whatever the suffix) are
/// decompressed when the tool was built with zlib. False, with "PATH: why" in `error`, when it cannot.
bool read_file_bytes(const std::string& path, std::string& bytes, std::string& error);

/// Why `bytes` is not a JSON document: "empty file", "truncated: the JSON ends at byte N, inside ...",
/// or "not JSON: parse error at byte N".
std::string describe_json_failure(const std::string& bytes);

/// Writes `text` to `path` (gzip when it ends in ".gz" and the tool has zlib). False, with "PATH: why" in
/// `error`, when it cannot; a partly written file is removed when the write created it (a path that was
/// there before, such as /dev/stdout or a device, is never removed).
bool write_file_text(const std::string& path, const std::string& text, std::string& error);

/// A failed write's message without the library's "scopeprof: " prefix (the command names itself first).
std::string write_failure_text(const scopeprof::write_result& result);

}  // namespace scopeprof_cli
