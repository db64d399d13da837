// scopeprof tool: a JSON document built from nlohmann/json's SAX events. Each key goes into its object's
// map as it is read, and the map's insert says whether the key was there already: finding a repeat costs
// nothing beyond building the document.
#include "json_unique_keys.hpp"
#include "sax_types.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace scopeprof_cli {

namespace {

using json = nlohmann::json;

class checked_dom : public sax_types {
 public:
  checked_dom(json& root, std::string& repeated) : root_(root), repeated_(repeated) {}

  bool null() { return (put(nullptr), true); }
  bool boolean(bool v) { return (put(v), true); }
  bool number_integer(number_integer_t v) { return (put(v), true); }
  bool number_unsigned(number_unsigned_t v) { return (put(v), true); }
  bool number_float(number_float_t v, const string_t&) { return (put(v), true); }
  bool string(string_t& v) { return (put(std::move(v)), true); }
  bool binary(binary_t& v) { return (put(json::binary(std::move(v))), true); }
  bool start_object(std::size_t) { return (open(put(json::object())), true); }
  bool start_array(std::size_t) { return (open(put(json::array())), true); }
  bool end_object() { return (close(), true); }
  bool end_array() { return (close(), true); }
  bool key(string_t& k) {
    auto& object = open_.back()->get_ref<json::object_t&>();
    auto [at, inserted] = object.emplace(std::move(k), nullptr);
    if (!inserted) {
      if (repeated_.empty()) repeated_ = path(at->first);
      at->second = nullptr;  // the last value counts, as in the plain parser's document
    }
    keys_.back() = &at->first;
    slot_ = &at->second;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  /// Where a value goes: the root, the end of the open array, or the slot of the key just read.
  json* put(json&& v) {
    if (open_.empty()) return &(root_ = std::move(v));
    json* c = open_.back();
    if (c->is_array()) {
      auto& a = c->get_ref<json::array_t&>();
      a.push_back(std::move(v));
      return &a.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  void open(json* c) {
    open_.push_back(c);
    keys_.push_back(nullptr);
  }
  void close() {
    open_.pop_back();
    keys_.pop_back();
  }
  /// Where the parser is, ending in `last`: keys joined by '.', array elements as [i].
  std::string path(const std::string& last) const {
    std::string p;
    for (std::size_t i = 0; i + 1 < open_.size(); ++i) {  // open_[0] is the document itself
      if (open_[i]->is_array()) p += "[" + std::to_string(open_[i]->size() - 1) + "]";
      else p += (p.empty() ? "" : ".") + key_for_message(*keys_[i]);
    }
    return p + (p.empty() ? "" : ".") + key_for_message(last);
  }

  json& root_;
  std::string& repeated_;
  std::vector<json*> open_;                // the open containers, outermost first
  std::vector<const std::string*> keys_;   // for each open object, the key being read
  json* slot_ = nullptr;                   // the value of that key in the innermost open object
};

}  // namespace

nlohmann::json parse_json_unique_keys(const std::string& bytes, std::string& repeated) {
  json doc;
  checked_dom dom(doc, repeated);
  if (!json::sax_parse(bytes, &dom)) return json(json::value_t::discarded);
  return doc;
}

std::string key_for_message(const std::string& key) {
  for (char c : key)
    if (c < 0x20 || c > 0x7e) return json(key).dump(-1, ' ', /*ensure_ascii=*/true, json::error_handler_t::replace);
  return key;
}

std::string repeated_key_message(const std::string& path) { return "field " + path + ": given twice in one object"; }

}  // namespace scopeprof_cli
