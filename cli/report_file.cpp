// scopeprof tool: a saved JSON report back into a scopeprof::report. Every field is read by name with its
// type checked, so a file that is truncated, foreign or of another schema gets one line saying which field
// of which file is wrong, never an exception out of here.
#include "report_file.hpp"

#include "file_bytes.hpp"
#include "json_fields.hpp"
#include "json_unique_keys.hpp"
#include "report_loader.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

namespace scopeprof_cli {

namespace {

/// "scopeprof-report/1" or a clear reason why this document is not one this tool reads.
bool check_schema(const nlohmann::json& doc, std::string& why) {
  if (!doc.is_object()) {
    why = "not a scopeprof report (the document is not a JSON object)";
    return false;
  }
  const auto it = doc.find("schema");
  if (it == doc.end() || !it->is_string()) {
    why = doc.contains("traceEvents") ? "a Chrome trace, not a scopeprof JSON report (write one with SCOPEPROF_REPORT=x.json)"
                                      : "not a scopeprof report (no \"schema\" field)";
    return false;
  }
  const std::string schema = it->get<std::string>();
  if (schema == report_schema) return true;
  if (schema.rfind("scopeprof-report/", 0) == 0)
    why = "schema " + schema + ": this scopeprof reads " + report_schema + " (a report from another version)";
  else
    why = "schema \"" + schema + "\" is not a scopeprof report (" + report_schema + ")";
  return false;
}

}  // namespace

bool parse_report(const std::string& bytes, const std::string& name, report_file& out, std::string& error) {
  std::string repeated;
  nlohmann::json doc = parse_json_unique_keys(bytes, repeated);
  if (doc.is_discarded()) {
    error = name + ": " + describe_json_failure(bytes);
    return false;
  }
  if (!repeated.empty()) {
    error = name + ": " + repeated_key_message(repeated);
    return false;
  }
  std::string why;
  if (!check_schema(doc, why)) {
    error = name + ": " + why;
    return false;
  }
  try {
    report_file f;
    f.path = name;
    f.report = scopeprof::detail::report_loader::load(doc, name);
    out = std::move(f);
    return true;
  } catch (const json_field_error& e) {
    error = name + ": " + e.what();
  } catch (const std::exception& e) {  // allocation failure on a hostile file, or a library error
    error = name + ": cannot read the report (" + std::string(e.what()) + ")";
  }
  return false;
}

bool load_report(const std::string& path, report_file& out, std::string& error) {
  std::string bytes;
  if (!read_file_bytes(path, bytes, error)) return false;
  return parse_report(bytes, path, out, error);
}

namespace {

/// A name as one path element: '\\' and the separator escaped, so two different paths never share a key.
void append_key_name(std::string& key, const std::string& name) {
  for (char c : name) {
    if (c == '\\' || c == '\x1f') key += '\\';
    key += c;
  }
}

std::vector<std::size_t> rows_from_root(const scopeprof::report& r, std::size_t row) {
  std::vector<std::size_t> chain;
  for (std::int64_t i = static_cast<std::int64_t>(row); i >= 0; i = r.tree()[static_cast<std::size_t>(i)].parent)
    chain.push_back(static_cast<std::size_t>(i));
  return {chain.rbegin(), chain.rend()};
}

}  // namespace

std::string tree_path_text(const scopeprof::report& r, std::size_t row) {
  std::string s;
  for (std::size_t i : rows_from_root(r, row)) s += (s.empty() ? "" : " / ") + r.tree()[i].name;
  return s;
}

std::string tree_path_key(const scopeprof::report& r, std::size_t row) {
  std::string key;
  bool first = true;
  for (std::size_t i : rows_from_root(r, row)) {
    if (!first) key += '\x1f';
    first = false;
    append_key_name(key, r.tree()[i].name);
  }
  return key;
}

}  // namespace scopeprof_cli
