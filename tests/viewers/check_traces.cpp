// The trace-format checker (tests/cpu/trace_check.hpp) on trace files: every rule of the Kineto
// conventions and the viewers (required fields per event kind, nesting with ts + dur in doubles,
// flows bound to exactly one slice each way, distributedInfo first with HTA's rank regex).
//
//   scopeprof_check_traces FILE.trace.json...     exit 1 and one line per bad file
#include "../cpu/trace_check.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: scopeprof_check_traces FILE.trace.json...\n");
    return 2;
  }
  int bad = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string problem = !in ? std::string("cannot read the file") : sptest::check_trace_format(text.str());
    std::printf("%s: %s\n", argv[i], problem.empty() ? "ok" : problem.c_str());
    bad += !problem.empty();
  }
  return bad ? 1 : 0;
}
