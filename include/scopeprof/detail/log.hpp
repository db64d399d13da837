// scopeprof: the library's own messages. They go to stderr, prefixed, and never throw.
#pragma once

#include <scopeprof/config.hpp>

#include <cstdio>
#include <string>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline void warn(const std::string& message) noexcept {
  std::fprintf(stderr, "scopeprof: warning: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
