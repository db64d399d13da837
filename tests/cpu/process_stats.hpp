// What the tests read about their own process.
#pragma once

#include <fstream>
#include <string>

namespace sptest {

/// Resident set size in KiB (Linux /proc), or -1 where it cannot be read.
inline long vm_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

}  // namespace sptest
