// scopeprof: the library's own messages. They go to stderr, prefixed, and never throw.
#pragma once

#include <cstdio>
#include <string>

namespace scopeprof {
namespace detail {

inline void warn(const std::string& message) noexcept {
  std::fprintf(stderr, "scopeprof: warning: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace detail
}  // namespace scopeprof
