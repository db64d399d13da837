// Fuzz target for the scopeprof tool's readers. The input bytes are a JSON report or a Chrome trace, as a
// user hands the tool a file: truncated, of another schema, or hostile. The report readers (the full
// loader behind `show` and `diff`, and the streaming tree reader behind `merge`) and the trace readers
// (header and events, behind `merge` of traces) must either accept it or give one line that names the
// file; never crash, hang or read out of bounds (ASan, UBSan). When the full loader accepts:
//   - the tree reader accepts too, with the same call tree (the merge and the full loader agree);
//   - every writer's output of the loaded report passes the strict checks the writers' tests use;
//   - the JSON the library writes for it is read back to the same tree and flat rows (a stable round trip).
// Any failure prints the reason and aborts.
#include "report_file.hpp"
#include "trace_reader.hpp"

#include "output_check.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

const char* const input_name = "input.json";

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "fuzz_report: %s\n", why.c_str());
  std::abort();
}

/// The first difference between the call trees of two reports ("" when they agree), over what both
/// readers keep.
std::string tree_difference(const scopeprof::report& a, const scopeprof::report& b) {
  if (a.tree().size() != b.tree().size()) return "tree sizes differ";
  for (std::size_t i = 0; i < a.tree().size(); ++i) {
    const auto& x = a.tree()[i];
    const auto& y = b.tree()[i];
    if (x.name != y.name || x.depth != y.depth || x.parent != y.parent || x.calls != y.calls ||
        x.host_total_ns != y.host_total_ns || x.host_self_ns != y.host_self_ns ||
        x.device_calls != y.device_calls || x.device_total_ns != y.device_total_ns)
      return "tree row " + std::to_string(i) + " differs";
    const auto &u = x.work, &v = y.work;  // declared work: the merge reads what the full loader reads
    if (u.calls != v.calls || u.bytes != v.bytes || u.flops != v.flops || u.device_calls != v.device_calls ||
        u.device_bytes != v.device_bytes || u.device_ns != v.device_ns || u.host_calls != v.host_calls ||
        u.host_ns != v.host_ns || u.unmeasured != v.unmeasured)
      return "tree row " + std::to_string(i) + "'s declared work differs";
  }
  return "";
}

std::string flat_difference(const scopeprof::report& a, const scopeprof::report& b) {
  if (a.flat().size() != b.flat().size()) return "flat sizes differ";
  for (std::size_t i = 0; i < a.flat().size(); ++i) {
    const auto& x = a.flat()[i];
    const auto& y = b.flat()[i];
    if (x.name != y.name || x.calls != y.calls || x.host_total_ns != y.host_total_ns ||
        x.host_self_ns != y.host_self_ns || x.device_total_ns != y.device_total_ns ||
        x.host.count != y.host.count || x.host.sum != y.host.sum || x.host_histogram.size() != y.host_histogram.size())
      return "flat row " + std::to_string(i) + " differs";
  }
  return "";
}

void check_message(const std::string& reader, const std::string& error) {
  const std::string prefix = std::string(input_name) + ": ";
  if (error.compare(0, prefix.size(), prefix) != 0 || error.size() == prefix.size())
    fail(reader + " refused without naming the file and the problem: '" + error + "'");
  if (error.find('\n') != std::string::npos) fail(reader + "'s message is not one line: '" + error + "'");
}

/// The trace readers on the same bytes: each event they hand on is an object.
void read_as_trace(const std::string& bytes) {
  scopeprof_cli::trace_header h;
  std::string error;
  if (!scopeprof_cli::read_trace_header(bytes, input_name, h, error)) check_message("the trace header reader", error);
  error.clear();
  const bool ok = scopeprof_cli::for_each_trace_event(bytes, input_name, [](scopeprof_cli::trace_event& ev, std::string&) {
    if (!ev.is_object()) fail("the trace event reader handed on a non-object");
    return true;
  }, error);
  if (!ok) check_message("the trace event reader", error);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  read_as_trace(bytes);
  scopeprof_cli::report_file full;
  scopeprof_cli::report_file tree;
  std::string full_error;
  std::string tree_error;
  const bool full_ok = scopeprof_cli::parse_report(bytes, input_name, full, full_error);
  const bool tree_ok = scopeprof_cli::parse_report_tree(bytes, input_name, tree, tree_error);
  if (!full_ok) check_message("the full loader", full_error);
  if (!tree_ok) check_message("the tree reader", tree_error);
  if (!full_ok) return 0;
  if (!tree_ok) fail("the tree reader refused a report the full loader accepted: " + tree_error);
  if (auto d = tree_difference(full.report, tree.report); !d.empty()) fail("the two readers' trees: " + d);

  const scopeprof::report& r = full.report;
  if (auto e = sptest::check_table(r, r.to_string()); !e.empty()) fail("text table: " + e);
  if (auto e = sptest::check_csv(r, r.csv()); !e.empty()) fail("CSV: " + e);
  const std::string json = r.json();
  if (auto e = sptest::check_json(r, json); !e.empty()) fail("JSON: " + e);

  scopeprof_cli::report_file again;
  std::string again_error;
  if (!scopeprof_cli::parse_report(json, input_name, again, again_error))
    fail("the JSON written for an accepted report is refused: " + again_error);
  if (auto d = tree_difference(r, again.report); !d.empty()) fail("round trip: " + d);
  if (auto d = flat_difference(r, again.report); !d.empty()) fail("round trip: " + d);
  return 0;
}

#if defined(SCOPEPROF_FUZZ_REPLAY_MAIN)
#include "replay_main.hpp"
SCOPEPROF_FUZZ_REPLAY("fuzz_report_replay")
#endif
