// scopeprof tool: the two streaming (SAX) readers of a Chrome trace: its top-level fields, and its events
// one at a time (trace_reader.hpp).
#include "trace_reader.hpp"

#include "json_unique_keys.hpp"
#include "sax_types.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace scopeprof_cli {

namespace {

using json = nlohmann::json;

/// What a SAX parse error means, for a message: the file was cut short, or it is not JSON there.
std::string parse_failure(std::size_t position, std::size_t size) {
  if (size == 0) return "empty file, not a Chrome trace";
  if (position >= size)
    return "truncated: the JSON ends after " + std::to_string(size) + " bytes, before the document closes";
  return "not JSON: parse error at byte " + std::to_string(position);
}

/// The SAX callbacks every reader here shares: the parse error, recorded; binary values never occur in JSON.
/// A top-level key given twice is refused by both readers (JSON leaves open which value counts: a viewer
/// that parses the whole document keeps the last, a streaming reader meets both), as are repeats inside
/// distributedInfo and otherData, whose fields the header reader keeps.
struct sax_base : sax_types {
  std::size_t size = 0;
  std::string problem;  ///< set when a callback stops the parse for a reason

  /// Notes `k`, met at `depth` (1: the top object; 2: one of its objects, named `parent`); false, with the
  /// message, when that object gave it before.
  bool unique_key(int depth, const std::string& parent, const std::string& k) {
    if (depth < 1 || depth > 2) return true;
    std::vector<std::string>& seen = keys_[depth - 1];
    if (std::find(seen.begin(), seen.end(), k) != seen.end())
      return fail(repeated_key_message(depth == 1 ? key_for_message(k) : key_for_message(parent) + "." + key_for_message(k)));
    seen.push_back(k);
    return true;
  }
  /// A new object opens at depth 2: its keys are its own.
  void new_inner_object() { keys_[1].clear(); }

  bool binary(binary_t&) { return true; }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    if (problem.empty()) problem = parse_failure(position, size);
    return false;
  }
  bool fail(std::string why) {
    problem = std::move(why);
    return false;
  }

 private:
  std::vector<std::string> keys_[2];  // the keys of the top object, and of the depth-2 object open now
};

/// The top-level fields: distributedInfo.{rank, world_size}, baseTimeNanoseconds, otherData.{program,
/// host, pid}, and whether traceEvents is an array. Stops (done = true) once it has them all.
class header_sax : public sax_base {
 public:
  explicit header_sax(trace_header& h) : h_(h) {}
  bool done = false;

  bool null() { return scalar(); }
  bool boolean(bool) { return scalar(); }
  bool number_float(number_float_t, const string_t&) { return field_is_integer() ? fail(where_ + " is not an integer") : scalar(); }
  bool number_unsigned(number_unsigned_t v) {
    if (v > static_cast<number_unsigned_t>(INT64_MAX)) return field_is_integer() ? fail(where_ + " is out of range") : scalar();
    return number_integer(static_cast<number_integer_t>(v));
  }
  bool number_integer(number_integer_t v) {
    if (depth_ == 1 && key_ == "baseTimeNanoseconds") {
      h_.base_unix_ns = v;
      h_.has_base = true;
    } else if (depth_ == 2 && parent_ == "distributedInfo" && key_ == "rank") {
      h_.rank = v;
      got_rank_ = true;
    } else if (depth_ == 2 && parent_ == "distributedInfo" && key_ == "world_size") {
      h_.world_size = v;
      got_world_ = true;
    } else if (depth_ == 2 && parent_ == "otherData" && key_ == "pid") {
      h_.pid = v;
    }
    return scalar();
  }
  bool string(string_t& s) {
    if (field_is_integer()) return fail(where_ + " is not an integer");
    if (depth_ == 2 && parent_ == "otherData" && key_ == "program") h_.program = s;
    if (depth_ == 2 && parent_ == "otherData" && key_ == "host") h_.host = s;
    return scalar();
  }
  bool start_object(std::size_t) {
    if (depth_ == 1) parent_ = key_, new_inner_object();
    if (field_is_integer()) return fail(where_ + " is not an integer");
    ++depth_;
    return true;
  }
  bool end_object() {
    if (--depth_ == 1 && parent_ == "distributedInfo") {
      h_.has_rank = got_rank_ && got_world_;
      seen_dist_ = true;
    }
    if (depth_ == 1 && parent_ == "otherData") seen_other_ = true;
    if (depth_ == 1) parent_.clear();
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 0) return fail("a JSON array, not a Chrome trace (an object with traceEvents)");
    if (field_is_integer()) return fail(where_ + " is not an integer");
    if (depth_ == 1 && key_ == "traceEvents") {
      h_.has_events = true;
      if (seen_dist_ && h_.has_base && seen_other_) {  // everything read: the events need not be parsed here
        done = true;
        return false;
      }
    }
    if (depth_ == 1) parent_ = key_;
    ++depth_;
    return true;
  }
  bool end_array() {
    if (--depth_ == 1) parent_.clear();
    return true;
  }
  bool key(string_t& k) {
    key_ = k;
    where_ = (depth_ == 1 ? std::string() : parent_ + ".") + k;
    if (depth_ == 2 && parent_ != "distributedInfo" && parent_ != "otherData") return true;
    return unique_key(depth_, parent_, k);
  }

 private:
  /// The value coming is one this reader needs as an integer.
  bool field_is_integer() const {
    return (depth_ == 1 && key_ == "baseTimeNanoseconds") ||
           (depth_ == 2 && parent_ == "distributedInfo" && (key_ == "rank" || key_ == "world_size")) ||
           (depth_ == 2 && parent_ == "otherData" && key_ == "pid");
  }
  bool scalar() {
    if (depth_ == 0) return fail("a JSON scalar, not a Chrome trace (an object with traceEvents)");
    return true;
  }

  trace_header& h_;
  int depth_ = 0;
  bool got_rank_ = false, got_world_ = false;
  bool seen_dist_ = false, seen_other_ = false;
  std::string key_, parent_, where_;
};

/// Builds each element of the top-level traceEvents array as a json value and hands it on; the rest of
/// the document is parsed and dropped.
class events_sax : public sax_base {
 public:
  explicit events_sax(const trace_event_handler& on_event) : on_event_(on_event) {}
  std::size_t events = 0;

  bool null() { return value(trace_event()); }
  bool boolean(bool v) { return value(trace_event(v)); }
  bool number_integer(number_integer_t v) { return value(trace_event(v)); }
  bool number_unsigned(number_unsigned_t v) { return value(trace_event(v)); }
  bool number_float(number_float_t v, const string_t&) { return value(trace_event(v)); }
  bool string(string_t& s) { return value(trace_event(std::move(s))); }
  bool key(string_t& k) {
    key_ = std::move(k);
    if (depth_ != 1) return true;
    top_key_ = key_;
    return unique_key(1, std::string(), key_);
  }
  bool start_object(std::size_t) { return open(trace_event::object()); }
  bool start_array(std::size_t) {
    if (depth_ == 1 && top_key_ == "traceEvents") in_events_ = true;
    return open(trace_event::array());
  }
  bool end_object() { return close(); }
  bool end_array() {
    if (depth_ == 2 && in_events_) in_events_ = false;
    return close();
  }

 private:
  /// Depths: 1 inside the top object, 2 inside traceEvents, 3 inside one event.
  bool building() const { return !stack_.empty(); }

  bool value(trace_event v) {
    if (building()) {
      add(std::move(v));
      return true;
    }
    if (in_events_ && depth_ == 2) return fail("traceEvents[" + std::to_string(events) + "] is not an object");
    return true;
  }
  bool open(trace_event container) {
    if (building()) {
      stack_.push_back(&add(std::move(container)));
    } else if (in_events_ && depth_ == 2) {
      if (!container.is_object()) return fail("traceEvents[" + std::to_string(events) + "] is not an object");
      current_ = std::move(container);
      stack_.push_back(&current_);
    }
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    if (!building()) return true;
    stack_.pop_back();
    if (!stack_.empty()) return true;
    std::string why;
    const bool go_on = on_event_(current_, why);
    current_ = trace_event();
    ++events;
    return go_on ? true : fail(why);
  }
  /// Adds `v` to the innermost container being built; returns where it now lives.
  trace_event& add(trace_event v) {
    trace_event& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return top.back();
    }
    trace_event& slot = top[key_];
    slot = std::move(v);
    return slot;
  }

  const trace_event_handler& on_event_;
  int depth_ = 0;
  bool in_events_ = false;
  std::string key_, top_key_;
  trace_event current_;
  std::vector<trace_event*> stack_;
};

}  // namespace

bool read_trace_header(const std::string& bytes, const std::string& name, trace_header& h, std::string& error) {
  trace_header got;
  header_sax sax(got);
  sax.size = bytes.size();
  const bool parsed = json::sax_parse(bytes, &sax);
  if (!parsed && !sax.done) {
    error = name + ": " + (sax.problem.empty() ? std::string("not JSON") : sax.problem);
    return false;
  }
  h = got;
  return true;
}

bool for_each_trace_event(const std::string& bytes, const std::string& name, const trace_event_handler& on_event,
                          std::string& error) {
  events_sax sax(on_event);
  sax.size = bytes.size();
  if (!json::sax_parse(bytes, &sax)) {
    error = name + ": " + (sax.problem.empty() ? std::string("not JSON") : sax.problem);
    return false;
  }
  return true;
}

}  // namespace scopeprof_cli
