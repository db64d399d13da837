// scopeprof tool: a JSON document parsed with every object's keys checked for repeats. JSON leaves open
// which value of a repeated key counts (nlohmann/json keeps the last, a streaming reader meets the first),
// so a report that repeats a key is refused, and every reader of it says so in the same words.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace scopeprof_cli {

/// `bytes` parsed as nlohmann::json::parse(bytes, nullptr, false) does (the same document, or a discarded
/// value on a syntax error). When an object repeats a key, `repeated` is the path of the first repeat
/// ("tree[1].depth", "process"), else it is left empty; the document then holds the last value of that key.
nlohmann::json parse_json_unique_keys(const std::string& bytes, std::string& repeated);

/// A key as a message shows it: as it is when every byte is printable ASCII, else as a JSON string (quoted,
/// escaped), so a hostile key cannot break the one-line message or hide in it.
std::string key_for_message(const std::string& key);

/// The message for a repeated key, without the file name: "field PATH: given twice in one object".
std::string repeated_key_message(const std::string& path);

}  // namespace scopeprof_cli
