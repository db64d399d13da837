// scopeprof: the report's writers, thin wrappers over the serializers in format/ and the sinks (a path
// ending in ".gz" is written as gzip: detail/gzip_sink.hpp).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/gzip_sink.hpp>
#include <scopeprof/detail/output_path.hpp>
#include <scopeprof/detail/sink.hpp>
#include <scopeprof/format/chrome_trace.hpp>
#include <scopeprof/format/csv.hpp>
#include <scopeprof/format/html.hpp>
#include <scopeprof/format/json.hpp>
#include <scopeprof/format/speedscope.hpp>
#include <scopeprof/format/table.hpp>
#include <scopeprof/report.hpp>

#include <new>
#include <ostream>
#include <sstream>
#include <string>

SCOPEPROF_NAMESPACE_BEGIN

namespace detail {
/// The writers of per-instance outputs fail ("out of memory") rather than write a file without the
/// instances that could not be built.
inline void require_instances(const report& r) {
  if (r.instances_lost()) throw std::bad_alloc();
}
}  // namespace detail

SCOPEPROF_API void report::print(std::ostream& out) const { detail::print_tables(*this, out); }

SCOPEPROF_API std::string report::to_string() const {
  std::ostringstream s;
  detail::print_tables(*this, s);
  return s.str();
}

SCOPEPROF_API std::string report::csv() const {
  detail::string_sink sink;
  detail::serialize_csv(*this, sink);
  return sink.take();
}

SCOPEPROF_API write_result report::write_csv(const std::string& path) const {
  return detail::write_to_path(detail::expand_path_template(path, process_), "CSV report", [this](detail::output_sink& sink) { detail::serialize_csv(*this, sink); });
}

SCOPEPROF_API std::string report::json() const {
  detail::string_sink sink;
  detail::serialize_json(*this, sink);
  return sink.take();
}

SCOPEPROF_API write_result report::write_json(const std::string& path) const {
  return detail::write_to_path(detail::expand_path_template(path, process_), "JSON report", [this](detail::output_sink& sink) { detail::serialize_json(*this, sink); });
}

SCOPEPROF_API std::string report::chrome_trace() const {
  detail::string_sink sink;
  detail::serialize_chrome_trace(*this, sink);
  return sink.take();
}

SCOPEPROF_API write_result report::write_chrome_trace(const std::string& path) const {
  return detail::write_to_path(detail::expand_path_template(path, process_), "Chrome trace",
                               [this](detail::output_sink& sink) {
                                 detail::require_instances(*this);
                                 detail::serialize_chrome_trace(*this, sink);
                               });
}

SCOPEPROF_API std::string report::speedscope() const {
  detail::string_sink sink;
  detail::serialize_speedscope(*this, sink);
  return sink.take();
}

SCOPEPROF_API write_result report::write_speedscope(const std::string& path) const {
  return detail::write_to_path(detail::expand_path_template(path, process_), "speedscope profile",
                               [this](detail::output_sink& sink) {
                                 detail::require_instances(*this);
                                 detail::serialize_speedscope(*this, sink);
                               });
}

SCOPEPROF_API std::string report::html() const {
  detail::string_sink sink;
  detail::serialize_html(*this, sink);
  return sink.take();
}

SCOPEPROF_API write_result report::write_html(const std::string& path) const {
  return detail::write_to_path(detail::expand_path_template(path, process_), "HTML report", [this](detail::output_sink& sink) {
                                 detail::require_instances(*this);
                                 detail::serialize_html(*this, sink);
                               });
}

SCOPEPROF_NAMESPACE_END
