// The report at exit (SCOPEPROF_REPORT) of a GPU program, and the first scope of a process. Run without
// arguments it starts itself again as a child, in a fresh process, with SCOPEPROF_REPORT set to a JSON
// path; the child's very first CUDA work happens inside its first scope, and it returns from main with
// scopes still unresolved, so the report at exit must resolve them while the CUDA runtime is alive. The
// parent then reads the report: device evidence valid, every device-timed scope with a span, and the
// first scope's host time free of the one-time set-up (driver probe, context, reference event, events).
#include <scopeprof.hpp>

#include "gpu_support.cuh"
#include "json_check.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

int child() {
  { PROF_SCOPE("first"); }  // the process's first scope, and its first CUDA work
  for (int i = 0; i < 50; ++i) {
    PROF_SCOPE("later");
  }
  {
    PROF_SCOPE("kernel");
    (void)scopeprof_gpu::spin(200);  // still running when main returns: the exit report resolves it
  }
  return 0;
}

int failures = 0;
void expect(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

const sptest::json* flat_row(const sptest::json& report, const std::string& name) {
  const sptest::json* flat = report.find("flat");
  if (flat == nullptr) return nullptr;
  for (const auto& row : flat->items)
    if (row.find("name") != nullptr && row.find("name")->text == name) return &row;
  return nullptr;
}

double number_at(const sptest::json* row, const char* object, const char* field) {
  if (row == nullptr || row->find(object) == nullptr || row->find(object)->find(field) == nullptr) return -1;
  return row->find(object)->find(field)->number();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "child") return child();
  std::string why;
  if (!scopeprof_gpu::device_available(why)) {
    std::printf("skipped: no CUDA device (%s)\n", why.c_str());
    return 0;
  }
  const std::string path = "scopeprof_exit_report.json";
  std::remove(path.c_str());
  const std::string command = "SCOPEPROF_REPORT=" + path + " '" + argv[0] + "' child";
  const int rc = std::system(command.c_str());
  expect(rc == 0, "the child exits normally (status " + std::to_string(rc) + ")");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  sptest::json report;
  std::string error;
  expect(sptest::parse_json(text.str(), report, error), "the report at exit is valid JSON " + error);
  const sptest::json* evidence = report.find("evidence");
  const std::string device = evidence && evidence->find("device") ? evidence->find("device")->text : "";
  std::printf("device evidence: %s\n", device.c_str());
  expect(evidence && evidence->find("device_valid") && evidence->find("device_valid")->b, "device evidence is valid");
  expect(device.find("INVALID") == std::string::npos && device.find("Unloading") == std::string::npos,
         "no CUDA error in the device evidence");
  for (const char* name : {"first", "later", "kernel"}) {
    const sptest::json* row = flat_row(report, name);
    const double calls = row && row->find("calls") ? row->find("calls")->number() : -1;
    expect(row != nullptr && number_at(row, "device", "calls") == calls,
           std::string(name) + ": every call has a device span (" + std::to_string(number_at(row, "device", "calls")) +
               " of " + std::to_string(calls) + ")");
  }
  expect(number_at(flat_row(report, "kernel"), "device", "total") >= 200e3, "the unfinished kernel's span is resolved at exit");
  const double first_ns = number_at(flat_row(report, "first"), "host", "total");
  const double later_ns = number_at(flat_row(report, "later"), "host", "median");
  std::printf("first scope host time %.1f us, later scopes median %.1f us\n", first_ns / 1e3, later_ns / 1e3);
  // The set-up (loading the driver, creating the context) takes tens of milliseconds: none of it here.
  expect(first_ns >= 0 && first_ns < 2e6, "the first scope carries no one-time set-up");
  expect(device.find("one-time set-up") != std::string::npos && device.find("outside every scope") != std::string::npos,
         "the set-up is reported, outside every scope");
  std::printf(failures ? "FAILED\n" : "PASSED\n");
  return failures ? 1 : 0;
}
