// scopeprof tool: the process and call tree of a saved report, read by a streaming (SAX) parser that keeps
// nothing else: no document tree, no histograms, no flat rows. The merge of a thousand ranks spends its
// time here, so it parses each report once and allocates only the rows it keeps.
#include "file_bytes.hpp"
#include "json_unique_keys.hpp"
#include "report_file.hpp"
#include "report_loader.hpp"
#include "sax_types.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

namespace scopeprof_cli {

namespace {

/// Where the parser is: the container it is in, and for an object the key of the value that comes next.
enum class place : std::uint8_t { skipped, top, process, devices, tree, row, row_host, row_device, row_work };

/// A key this reader keeps in one place: whether its value is a number or string (else an object or an
/// array), and whether the object must give it, as the full loader requires.
struct kept_key {
  const char* name;
  bool scalar;
  bool required;
};

/// The keys kept in each place (none in the others). Their index in the list is their bit in the per-object
/// mask of keys met (a kept key given twice is refused, as the full loader refuses any repeated key).
struct kept_list {
  const kept_key* keys;
  std::size_t size;
};
constexpr kept_key top_keys[] = {{"schema", true, false}, {"process", false, false}, {"tree", false, false}};
constexpr kept_key process_keys[] = {{"rank", true, false},        {"world_size", true, false}, {"local_rank", true, false},
                                     {"pid", true, false},         {"base_unix_ns", true, false},
                                     {"rank_source", true, false}, {"host", true, false},
                                     {"program", true, false},     {"devices", false, false}};
constexpr kept_key row_keys[] = {{"name", true, true},  {"depth", true, true},   {"parent", true, true}, {"calls", true, true},
                                 {"host", false, true}, {"device", false, true}, {"work", false, false}};
constexpr kept_key host_keys[] = {{"total", true, true}, {"self", true, true}};
constexpr kept_key device_keys[] = {{"calls", true, true}, {"total", true, true}};
constexpr kept_key work_keys[] = {{"calls", true, false},        {"device_calls", true, false}, {"host_calls", true, false},
                                  {"unmeasured", true, false},   {"device_span", true, false},  {"host", true, false},
                                  {"bytes", true, false},        {"flops", true, false},        {"device_bytes", true, false},
                                  {"device_flops", true, false}, {"host_bytes", true, false},   {"host_flops", true, false},
                                  {"device_id", true, false}};

constexpr kept_list kept_in(place p) {
  switch (p) {
    case place::top: return {top_keys, std::size(top_keys)};
    case place::process: return {process_keys, std::size(process_keys)};
    case place::row: return {row_keys, std::size(row_keys)};
    case place::row_host: return {host_keys, std::size(host_keys)};
    case place::row_device: return {device_keys, std::size(device_keys)};
    case place::row_work: return {work_keys, std::size(work_keys)};
    default: return {nullptr, 0};
  }
}

/// The index of `k` among the keys kept in `p`, or -1.
int kept_index(place p, const std::string& k) {
  const kept_list l = kept_in(p);
  for (std::size_t i = 0; i < l.size; ++i)
    if (k == l.keys[i].name) return static_cast<int>(i);
  return -1;
}

class tree_sax : public sax_types {
 public:
  using json = nlohmann::json;
  using loader = scopeprof::detail::report_loader;  // the full loader: its rules and messages, shared

  bool null() { return scalar_null(); }
  bool boolean(bool) { return wrong_type("true or false"); }
  bool number_integer(number_integer_t v) {
    if (in_work()) return work_value(v < 0 ? num::i : num::u, v < 0 ? 0 : static_cast<std::uint64_t>(v), v, 0);
    return integer(v, true);
  }
  bool number_unsigned(number_unsigned_t v) {
    if (in_work()) return work_value(num::u, v, 0, 0);
    if (v <= static_cast<number_unsigned_t>(INT64_MAX)) return integer(static_cast<std::int64_t>(v), false);
    if (stack_.empty() || !expects_scalar(stack_.back())) return true;  // a value this reader does not keep
    // Counts are unsigned 64-bit, as the full loader reads them; the rest are refused as it refuses them.
    if (stack_.back() == place::row && key_ == "calls") return (rows_.back().calls = v, true);
    if (stack_.back() == place::row_device && key_ == "calls") return (rows_.back().device_calls = v, true);
    return fail(field() + ": integer out of range");
  }
  bool number_float(number_float_t v, const string_t&) {
    if (in_work()) return work_value(num::d, 0, 0, v);
    return wrong_type("a number");
  }
  bool string(string_t& s) { return text(s); }
  bool binary(binary_t&) { return true; }

  bool start_object(std::size_t) {
    if (stack_.empty()) {
      is_object_ = true;
      push(place::top);
      return true;
    }
    const place in = stack_.back();
    place next = place::skipped;
    if (in == place::top && key_ == "process") next = place::process;
    else if (in == place::tree) next = begin_row();
    else if (in == place::row && key_ == "host") next = place::row_host;
    else if (in == place::row && key_ == "device") next = place::row_device;
    else if (in == place::row && key_ == "work") next = place::row_work;
    else if (expects_scalar(in)) return wrong_type("an object");
    if (in == place::top && key_ == "process") has_process_ = true;
    push(next);
    return true;
  }
  bool end_object() {
    const place p = stack_.back();
    const std::uint32_t met = keys_seen_.back();
    pop();
    const kept_list l = kept_in(p);
    for (std::size_t i = 0; i < l.size; ++i)
      if (l.keys[i].required && !(met & (std::uint32_t{1} << i))) return fail(path_in(p, l.keys[i].name) + ": missing");
    if (p == place::row_work) return end_work();
    if (p == place::row_device) return end_device();
    return true;
  }
  bool start_array(std::size_t) {
    if (stack_.empty()) {
      push(place::skipped);  // a document that is an array: not a report
      return true;
    }
    const place in = stack_.back();
    place next = place::skipped;
    if (in == place::top && key_ == "tree") next = (has_tree_ = true, place::tree);
    else if (in == place::process && key_ == "devices") next = place::devices;
    else if (expects_scalar(in)) return wrong_type("an array");
    push(next);
    return true;
  }
  bool end_array() {
    pop();
    return true;
  }
  bool key(string_t& k) {
    key_ = k;
    if (const int i = stack_.empty() ? -1 : kept_index(stack_.back(), k); i >= 0) {
      const std::uint32_t bit = std::uint32_t{1} << i;
      if (keys_seen_.back() & bit) return (error_ = repeated_key_message(field()), false);
      keys_seen_.back() |= bit;
    }
    if (!stack_.empty() && stack_.back() == place::top && k == "traceEvents") trace_events_ = true;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    parse_failed_ = true;
    (void)position;  // describe_json_failure() finds the place again, with the same words as the full loader
    return false;
  }

  // What the parse found.
  bool is_object_ = false;
  bool trace_events_ = false;
  bool has_process_ = false;
  bool has_tree_ = false;
  bool parse_failed_ = false;
  std::string schema_;
  std::string error_;
  scopeprof::process_desc process_;
  std::vector<scopeprof::tree_row> rows_;

 private:
  void push(place p) {
    stack_.push_back(p);
    keys_seen_.push_back(0);
  }
  void pop() {
    stack_.pop_back();
    keys_seen_.pop_back();
  }
  bool in_work() const { return !stack_.empty() && stack_.back() == place::row_work; }
  bool fail(const std::string& what) {
    error_ = "field " + what;
    return false;
  }
  std::string row_field_name(const char* name) const {
    return "tree[" + std::to_string(rows_.size() - 1) + "]." + name;
  }
  /// The current field's path for a message (the key shown printable: key_for_message).
  std::string field() const {
    return path_in(stack_.empty() ? place::skipped : stack_.back(), key_for_message(key_));
  }
  /// The path of key `k` (printable) in an object of place `p`, the current row's for a row's parts.
  std::string path_in(place p, const std::string& k) const {
    switch (p) {
      case place::process: return "process." + k;
      case place::devices: return "process.devices[]";
      case place::row: return row_field_name(k.c_str());
      case place::row_host: return row_field_name(("host." + k).c_str());
      case place::row_device: return row_field_name(("device." + k).c_str());
      case place::row_work: return row_field_name(("work." + k).c_str());
      default: return k;
    }
  }
  /// Whether the current key, in this place, names a value this reader keeps as a number or string (a
  /// row's work reads its numbers apart: work_value).
  bool expects_scalar(place in) const {
    if (in == place::devices) return true;
    if (in == place::row_work) return false;
    const int i = kept_index(in, key_);
    return i >= 0 && kept_in(in).keys[i].scalar;
  }
  bool wrong_type(const char* found) {
    if (stack_.empty()) return true;
    // A row's host and device are objects (device may be null): anything else there is wrong too.
    if (stack_.back() == place::row && (key_ == "host" || key_ == "device"))
      return fail(field() + ": expected an object, found " + found);
    if (!expects_scalar(stack_.back())) return true;
    return fail(field() + ": expected " + expected() + ", found " + found);
  }
  std::string expected() const {
    const place in = stack_.back();
    if ((in == place::top) || (in == place::row && key_ == "name") ||
        (in == place::process && (key_ == "rank_source" || key_ == "host" || key_ == "program")))
      return "a string";
    return "an integer";
  }
  bool scalar_null() {
    if (!stack_.empty() && stack_.back() == place::row && key_ == "device") return true;
    if (!stack_.empty() && stack_.back() == place::process && key_ == "base_unix_ns") return true;
    return wrong_type("null");
  }
  bool text(const std::string& s) {
    if (stack_.empty()) return true;
    const place in = stack_.back();
    if (in == place::top && key_ == "schema") schema_ = s;
    else if (in == place::process && key_ == "rank_source") process_.rank_source = s;
    else if (in == place::process && key_ == "host") process_.host = s;
    else if (in == place::process && key_ == "program") process_.program = s;
    else if (in == place::row && key_ == "name") rows_.back().name = s;
    else if (in == place::row && (key_ == "depth" || key_ == "parent" || key_ == "calls"))
      return fail(field() + ": expected an integer, found a string");
    else return wrong_type("a string");
    return true;
  }
  bool integer(std::int64_t v, bool negative) {
    if (stack_.empty()) return true;
    const place in = stack_.back();
    if (in == place::process) return process_integer(v);
    if (in == place::devices) return (process_.devices.push_back(static_cast<std::int32_t>(v)), true);
    if (in == place::row) return row_integer(v, negative);
    if (in == place::row_host || in == place::row_device) {
      if (!expects_scalar(in)) return true;  // (min, max, ...: the full loader's, not read here)
      if (negative) return fail(field() + ": " + loader::negative_duration);
      auto& r = rows_.back();
      if (in == place::row_host && key_ == "total") r.host_total_ns = v;
      else if (in == place::row_host && key_ == "self") r.host_self_ns = v;
      else if (in == place::row_device && key_ == "calls") r.device_calls = static_cast<std::uint64_t>(v);
      else if (in == place::row_device && key_ == "total") r.device_total_ns = v;
      return true;
    }
    return wrong_type("a number");
  }
  bool process_integer(std::int64_t v) {
    if (key_ == "rank") process_.rank = v;
    else if (key_ == "world_size") process_.world_size = v;
    else if (key_ == "local_rank") process_.local_rank = v;
    else if (key_ == "pid") process_.pid = v;
    else if (key_ == "base_unix_ns") process_.base_unix_ns = v;
    else return wrong_type("a number");
    return true;
  }
  bool row_integer(std::int64_t v, bool negative) {
    auto& r = rows_.back();
    if (key_ == "parent") {
      r.parent = v;
      if (v < -1 || v >= static_cast<std::int64_t>(rows_.size() - 1))
        return fail("tree[" + std::to_string(rows_.size() - 1) + "]: parent " + std::to_string(v) + " is not an earlier row");
      return true;
    }
    if (key_ == "name" || key_ == "host" || key_ == "device") return wrong_type("a number");
    if (negative && (key_ == "depth" || key_ == "calls"))
      return fail(field() + ": expected a count, found a negative number");
    if (key_ == "depth" && v > static_cast<std::int64_t>(UINT32_MAX)) return fail(field() + ": integer out of range");
    if (key_ == "depth") r.depth = static_cast<std::uint32_t>(v);
    else if (key_ == "calls") r.calls = static_cast<std::uint64_t>(v);
    return true;
  }
  /// A number of a row's "work" object: the sums the full loader reads, with its types (counts and
  /// nanoseconds are integers, bytes and FLOPs any number); the derived rates and the rest are skipped.
  /// `u` holds an integer that is not negative, `i` a negative one, `d` any other number (kind says which).
  enum class num { u, i, d };
  bool work_value(num kind, std::uint64_t u, std::int64_t i, double d) {
    scopeprof::declared_work& w = rows_.back().work;
    const bool counts = key_ == "calls" || key_ == "device_calls" || key_ == "host_calls" || key_ == "unmeasured";
    const bool times = key_ == "device_span" || key_ == "host";
    const bool amounts = key_ == "bytes" || key_ == "flops" || key_ == "device_bytes" || key_ == "device_flops" ||
                         key_ == "host_bytes" || key_ == "host_flops";
    if (key_ == "device_id") {
      if (kind == num::d) return fail(field() + ": expected an integer, found a number");
      const std::int64_t id = kind == num::i ? i : u > 2147483647u ? INT64_MAX : static_cast<std::int64_t>(u);
      if (!loader::is_device_id(id)) return fail(field() + ": " + loader::not_a_device_id);
      w.device = static_cast<std::int32_t>(id);
      return true;
    }
    if (!counts && !times && !amounts) return true;
    if (kind == num::i || (kind == num::d && !(d >= 0)))
      return fail(field() + ": expected a quantity, found a negative number");
    if ((counts || times) && kind == num::d) return fail(field() + ": expected an integer, found a number");
    if (times && u > static_cast<std::uint64_t>(INT64_MAX)) return fail(field() + ": integer out of range");
    const double amount = kind == num::d ? d : static_cast<double>(u);
    if (key_ == "calls") w.calls = u;
    else if (key_ == "device_calls") w.device_calls = u;
    else if (key_ == "host_calls") w.host_calls = u;
    else if (key_ == "unmeasured") w.unmeasured = u;
    else if (key_ == "device_span") w.device_ns = static_cast<std::int64_t>(u);
    else if (key_ == "host") w.host_ns = static_cast<std::int64_t>(u);
    else if (key_ == "bytes") w.bytes = amount;
    else if (key_ == "flops") w.flops = amount;
    else if (key_ == "device_bytes") w.device_bytes = amount;
    else if (key_ == "device_flops") w.device_flops = amount;
    else if (key_ == "host_bytes") w.host_bytes = amount;
    else w.host_flops = amount;
    return true;
  }
  /// The end of a row's "work": the sums must be ones a run can produce (the full loader's check).
  bool end_work() {
    const scopeprof::declared_work& w = rows_.back().work;
    if (w.calls == 0 || w.device_calls + w.host_calls + w.unmeasured != w.calls)
      return fail(row_field_name("work") + ": declared work that no run can produce (its calls do not add up)");
    return true;
  }
  /// The end of a row's "device" object (its calls and total there): a total over 0 calls would be merged,
  /// and lost when the report is written again.
  bool end_device() {
    if (rows_.back().device_calls == 0)
      return fail(row_field_name("device.calls") + ": " + loader::zero_device_calls);
    return true;
  }
  place begin_row() {
    rows_.emplace_back();
    return place::row;
  }

  std::vector<place> stack_;
  std::vector<std::uint32_t> keys_seen_;  // per open container, the kept keys met so far (bit: kept_index)
  std::string key_;
};

/// After the parse: the same checks and messages as the full loader, for what this reader keeps.
bool finish(tree_sax& sax, const std::string& bytes, const std::string& name, report_file& out, std::string& error) {
  if (!sax.error_.empty()) {
    error = name + ": " + sax.error_;
    return false;
  }
  if (sax.parse_failed_) {
    error = name + ": " + describe_json_failure(bytes);
    return false;
  }
  if (!sax.is_object_) error = name + ": not a scopeprof report (the document is not a JSON object)";
  else if (sax.schema_.empty())
    error = name + (sax.trace_events_ ? ": a Chrome trace, not a scopeprof JSON report (write one with SCOPEPROF_REPORT=x.json)"
                                      : ": not a scopeprof report (no \"schema\" field)");
  else if (sax.schema_ != report_schema)
    error = name + (sax.schema_.rfind("scopeprof-report/", 0) == 0
                        ? ": schema " + sax.schema_ + ": this scopeprof reads " + report_schema + " (a report from another version)"
                        : ": schema \"" + sax.schema_ + "\" is not a scopeprof report (" + report_schema + ")");
  else if (!sax.has_process_) error = name + ": field process: missing";
  else if (!sax.has_tree_) error = name + ": field tree: missing";
  else if (sax.process_.world_size < 1 || sax.process_.rank < 0 || sax.process_.rank >= sax.process_.world_size)
    error = name + ": field process: rank " + std::to_string(sax.process_.rank) + " of world size " +
            std::to_string(sax.process_.world_size) + " is impossible";
  if (!error.empty()) return false;
  report_file f;
  f.path = name;
  f.report = scopeprof::detail::report_loader::with_tree(std::move(sax.process_), std::move(sax.rows_));
  out = std::move(f);
  return true;
}

}  // namespace

bool parse_report_tree(const std::string& bytes, const std::string& name, report_file& out, std::string& error) {
  tree_sax sax;
  error.clear();
  try {
    nlohmann::json::sax_parse(bytes, &sax);
  } catch (const std::exception& e) {  // allocation failure on a hostile file
    error = name + ": cannot read the report (" + std::string(e.what()) + ")";
    return false;
  }
  return finish(sax, bytes, name, out, error);
}

bool load_report_tree(const std::string& path, report_file& out, std::string& error) {
  std::string bytes;
  if (!read_file_bytes(path, bytes, error)) return false;
  return parse_report_tree(bytes, path, out, error);
}

}  // namespace scopeprof_cli
