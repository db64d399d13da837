// Compiled (-fsyntax-only) by tests/compile/header_check.cmake with each compiler and backend configuration,
// and again after min/max macros are defined: every macro and the public API a program touches, so their
// templates and inline functions are instantiated in each configuration. Uses no name `min` or `max`.
#include <cstdio>
#include <sstream>
#include <string>
#include <string_view>

#include <scopeprof.hpp>

namespace {

void load() { PROF_FUNCTION(); }

}  // namespace

int main() {
  scopeprof::set_thread_name("main");
  scopeprof::set_max_records(1024);
  scopeprof::set_device_timing(true);
  scopeprof::set_device_sampling(1);
  (void)scopeprof::set_device_sampling("step", 2);
  scopeprof::set_cupti(false);
  (void)scopeprof::cupti_enabled();
  (void)scopeprof::host_clock();
  {
    PROF_SCOPE("step");
    load();
    const std::string layer = "layer";
    PROF_SCOPE_DYN(layer);
    PROF_SCOPE_DYN(std::string_view("view"));
    PROF_SCOPE_HOST("host only");
    scopeprof::stream_handle stream = nullptr;
    PROF_SCOPE_STREAM("on a stream", stream);
    SCOPEPROF_V1_SCOPE("versioned");
    PROF_STEP();
    SCOPEPROF_V1_STEP();
  }
  const scopeprof::report r = scopeprof::collect();
  std::ostringstream text;
  r.print(text);
  const std::string all = r.to_string() + r.csv() + r.json() + r.chrome_trace();
  if (auto res = r.write_json("/nonexistent-dir/out.json"); !res) std::fprintf(stderr, "%s\n", res.message().c_str());
  const bool ok = r.write_csv("/nonexistent-dir/out.csv").ok() || static_cast<bool>(r.write_chrome_trace(""));
  const auto counts = r.counts();
  std::size_t rows = r.flat().size() + r.tree().size() + r.instances().size() + r.kernel_summary().size() +
                     r.activities().size() + (r.find("step") != nullptr ? 1 : 0);
  rows += r.sources().host.size();
  scopeprof::reset();
  scopeprof::set_enabled(scopeprof::enabled());
  return (ok || all.empty() || counts.entered != counts.recorded + counts.dropped + counts.in_flight) ? 1
                                                                                                      : static_cast<int>(rows % 2);
}
