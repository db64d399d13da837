// scopeprof tool: typed access to the fields of a parsed JSON document that names the field on failure
// ("flat[3].host.total: expected an integer, found a string"), for messages a user can act on.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace scopeprof_cli {

/// What json_fields throws: the message names the field.
class json_field_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A view of one JSON value and its path from the document root.
class json_fields {
 public:
  using json = nlohmann::json;
  json_fields(const json& value, std::string path) : v_(&value), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw json_field_error((path_.empty() ? std::string("the document") : "field " + path_) + ": " + what);
  }
  void require_object() const {
    if (!v_->is_object()) fail("expected an object, found " + kind());
  }
  bool is_null() const noexcept { return v_->is_null(); }
  bool has(const char* key) const { return v_->is_object() && v_->contains(key); }

  json_fields field(const char* key) const {
    require_object();
    const auto it = v_->find(key);
    if (it == v_->end()) json_fields(*v_, child(key)).fail("missing");
    return json_fields(*it, child(key));
  }
  json_fields object(const char* key) const {
    json_fields f = field(key);
    f.require_object();
    return f;
  }
  json_fields object_or_null(const char* key) const {
    json_fields f = field(key);
    if (!f.is_null()) f.require_object();
    return f;
  }
  std::vector<json_fields> array(const char* key) const { return field(key).items(0); }
  /// The elements of this array (exactly `count` of them unless count is 0).
  std::vector<json_fields> items(std::size_t count) const {
    if (!v_->is_array()) fail("expected an array, found " + kind());
    if (count != 0 && v_->size() != count) fail("expected " + std::to_string(count) + " elements");
    std::vector<json_fields> out;
    out.reserve(v_->size());
    for (std::size_t i = 0; i < v_->size(); ++i) out.emplace_back((*v_)[i], path_ + "[" + std::to_string(i) + "]");
    return out;
  }

  std::int64_t as_i64() const {
    if (v_->is_number_integer()) {
      if (v_->is_number_unsigned() && v_->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
        fail("integer out of range");
      return v_->get<std::int64_t>();
    }
    fail("expected an integer, found " + kind());
  }
  std::uint64_t as_u64() const {
    if (v_->is_number_unsigned()) return v_->get<std::uint64_t>();
    if (v_->is_number_integer()) fail("expected a count, found a negative number");
    fail("expected an integer, found " + kind());
  }
  /// A number; null (the writer's NaN) reads as 0.
  double as_number() const {
    if (v_->is_number()) return v_->get<double>();
    if (v_->is_null()) return 0;
    fail("expected a number, found " + kind());
  }
  std::string as_text() const {
    if (!v_->is_string()) fail("expected a string, found " + kind());
    return v_->get<std::string>();
  }
  bool as_bool() const {
    if (!v_->is_boolean()) fail("expected true or false, found " + kind());
    return v_->get<bool>();
  }

  std::int64_t i64(const char* key) const { return field(key).as_i64(); }
  std::uint64_t u64(const char* key) const { return field(key).as_u64(); }
  double number(const char* key) const { return field(key).as_number(); }
  std::string text(const char* key) const { return field(key).as_text(); }
  bool boolean(const char* key) const { return field(key).as_bool(); }
  std::string text_or(const char* key, const std::string& fallback) const {
    return has(key) ? text(key) : fallback;
  }
  std::int64_t i64_or_null(const char* key, std::int64_t fallback) const {
    json_fields f = field(key);
    return f.is_null() ? fallback : f.as_i64();
  }

 private:
  std::string child(const char* key) const { return path_.empty() ? std::string(key) : path_ + "." + key; }
  std::string kind() const {
    if (v_->is_null()) return "null";
    if (v_->is_boolean()) return "a boolean";
    if (v_->is_number()) return "a number";
    if (v_->is_string()) return "a string";
    if (v_->is_array()) return "an array";
    return "an object";
  }
  const json* v_;
  std::string path_;
};

}  // namespace scopeprof_cli
