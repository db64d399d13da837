// The replay driver of a fuzz target built without libFuzzer (any compiler; a CTest test): every file
// named on the command line, and every file inside a named directory, goes to LLVMFuzzerTestOneInput once,
// in sorted order. SCOPEPROF_FUZZ_REPLAY("name") defines main().
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace sptest {

inline int replay_inputs(const char* name, int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p(argv[i]);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "%s: no input files\n", name);
    return 1;
  }
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read %s\n", name, f.string().c_str());
      return 1;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%s: %zu inputs passed\n", name, files.size());
  return 0;
}

}  // namespace sptest

#define SCOPEPROF_FUZZ_REPLAY(name) \
  int main(int argc, char** argv) { return sptest::replay_inputs(name, argc, argv); }
