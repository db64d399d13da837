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
#include <string>
#include <vector>

namespace scopeprof_cli {

namespace {

/// Where the parser is: the container it is in, and for an object the key of the value that comes next.
enum class place : std::uint8_t { skipped, top, process, devices, tree, row, row_host, row_device, row_work };

/// Fields a tree row must have (bits), as the full loader requires them.
enum row_field : unsigned { f_name = 1, f_depth = 2, f_parent = 4, f_calls = 8, f_host = 16, f_device = 32,
                            f_host_total = 64, f_host_self = 128, f_device_calls = 256,
                            f_device_total = 512 };

class tree_sax : public sax_types {
 public:
  using json = nlohmann::json;

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
    if (stack_.back() == place::row && key_ == "calls") return (rows_.back().calls = v, seen_ |= f_calls, true);
    if (stack_.back() == place::row_device && key_ == "calls")
      return (rows_.back().device_calls = v, seen_ |= f_device_calls, true);
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
    else if (in == place::row && key_ == "host") next = (seen_ |= f_host, place::row_host);
    else if (in == place::row && key_ == "device") next = (seen_ |= f_device, place::row_device);
    else if (in == place::row && key_ == "work") next = place::row_work;
    else if (expects_scalar(in)) return wrong_type("an object");
    if (in == place::top && key_ == "process") has_process_ = true;
    push(next);
    return true;
  }
  bool end_object() {
    const place p = stack_.back();
    pop();
    if (p == place::row) return end_row();
    if (p == place::row_work) return end_work();
    if (p == place::row_device) return end_device();
    if (p == place::row_host && !(seen_ & f_host_total)) return fail(row_field_name("host.total") + ": missing");
    if (p == place::row_host && !(seen_ & f_host_self)) return fail(row_field_name("host.self") + ": missing");
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
    if (const std::uint32_t bit = kept_key_bit(k); bit != 0) {
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
  /// A bit for each key this reader keeps in the object it is in (0 for the rest, and in skipped places):
  /// a kept key given twice is refused, as the full loader refuses any repeated key.
  std::uint32_t kept_key_bit(const std::string& k) const {
    static const std::vector<const char*> top{"schema", "process", "tree"};
    static const std::vector<const char*> process{"rank", "world_size", "local_rank", "pid", "base_unix_ns",
                                                  "rank_source", "host", "program", "devices"};
    static const std::vector<const char*> row{"name", "depth", "parent", "calls", "host", "device", "work"};
    static const std::vector<const char*> host{"total", "self"};
    static const std::vector<const char*> device{"calls", "total"};
    static const std::vector<const char*> work{"calls", "device_calls", "host_calls", "unmeasured", "device_span",
                                               "host", "bytes", "flops", "device_bytes", "device_flops",
                                               "host_bytes", "host_flops", "device_id"};
    const std::vector<const char*>* names = nullptr;
    switch (stack_.empty() ? place::skipped : stack_.back()) {
      case place::top: names = &top; break;
      case place::process: names = &process; break;
      case place::row: names = &row; break;
      case place::row_host: names = &host; break;
      case place::row_device: names = &device; break;
      case place::row_work: names = &work; break;
      default: return 0;
    }
    for (std::size_t i = 0; i < names->size(); ++i)
      if (k == (*names)[i]) return std::uint32_t{1} << i;
    return 0;
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
    const std::string k = key_for_message(key_);
    switch (stack_.empty() ? place::skipped : stack_.back()) {
      case place::process: return "process." + k;
      case place::devices: return "process.devices[]";
      case place::row: return row_field_name(k.c_str());
      case place::row_host: return row_field_name(("host." + k).c_str());
      case place::row_device: return row_field_name(("device." + k).c_str());
      case place::row_work: return row_field_name(("work." + k).c_str());
      default: return k;
    }
  }
  /// Whether the current key, in this place, names a value this reader keeps as a number or string.
  bool expects_scalar(place in) const {
    if (in == place::top) return key_ == "schema";
    if (in == place::devices) return true;
    if (in == place::process)
      return key_ == "rank" || key_ == "world_size" || key_ == "local_rank" || key_ == "pid" || key_ == "base_unix_ns" ||
             key_ == "rank_source" || key_ == "host" || key_ == "program";
    if (in == place::row) return key_ == "name" || key_ == "depth" || key_ == "parent" || key_ == "calls";
    if (in == place::row_host) return key_ == "total" || key_ == "self";
    if (in == place::row_device) return key_ == "calls" || key_ == "total";
    return false;
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
    if (!stack_.empty() && stack_.back() == place::row && key_ == "device") return (seen_ |= f_device, true);
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
    else if (in == place::row && key_ == "name") rows_.back().name = s, seen_ |= f_name;
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
      if (negative) return fail(field() + ": expected a duration, found a negative number");
      auto& r = rows_.back();
      if (in == place::row_host && key_ == "total") r.host_total_ns = v, seen_ |= f_host_total;
      else if (in == place::row_host && key_ == "self") r.host_self_ns = v, seen_ |= f_host_self;
      else if (in == place::row_device && key_ == "calls")
        r.device_calls = static_cast<std::uint64_t>(v), seen_ |= f_device_calls;
      else if (in == place::row_device && key_ == "total") r.device_total_ns = v, seen_ |= f_device_total;
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
      r.parent = v, seen_ |= f_parent;
      if (v < -1 || v >= static_cast<std::int64_t>(rows_.size() - 1))
        return fail("tree[" + std::to_string(rows_.size() - 1) + "]: parent " + std::to_string(v) + " is not an earlier row");
      return true;
    }
    if (key_ == "name" || key_ == "host" || key_ == "device") return wrong_type("a number");
    if (negative && (key_ == "depth" || key_ == "calls"))
      return fail(field() + ": expected a count, found a negative number");
    if (key_ == "depth" && v > static_cast<std::int64_t>(UINT32_MAX)) return fail(field() + ": integer out of range");
    if (key_ == "depth") r.depth = static_cast<std::uint32_t>(v), seen_ |= f_depth;
    else if (key_ == "calls") r.calls = static_cast<std::uint64_t>(v), seen_ |= f_calls;
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
      if (id < -2 || id > 2147483647) return fail(field() + ": expected a device id");
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
  /// The end of a row's "device" object: its calls and total there, as the full loader requires them (a
  /// total over 0 calls would be merged, and lost when the report is written again).
  bool end_device() {
    if (!(seen_ & f_device_calls)) return fail(row_field_name("device.calls") + ": missing");
    if (!(seen_ & f_device_total)) return fail(row_field_name("device.total") + ": missing");
    if (rows_.back().device_calls == 0)
      return fail(row_field_name("device.calls") + ": " + scopeprof::detail::report_loader::zero_device_calls);
    return true;
  }
  place begin_row() {
    rows_.emplace_back();
    seen_ = 0;
    return place::row;
  }
  bool end_row() {
    static const struct { unsigned bit; const char* name; } required[] = {
        {f_name, "name"}, {f_depth, "depth"}, {f_parent, "parent"}, {f_calls, "calls"}, {f_host, "host"}, {f_device, "device"}};
    for (const auto& r : required)
      if (!(seen_ & r.bit)) return fail(row_field_name(r.name) + ": missing");
    return true;
  }

  std::vector<place> stack_;
  std::vector<std::uint32_t> keys_seen_;  // per open container, the kept keys met so far (kept_key_bit)
  std::string key_;
  unsigned seen_ = 0;
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
