// scopeprof: writing a whole output file, with errors reported as a path and a reason, never thrown.
#pragma once

#include <scopeprof/report.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline write_result write_file(const std::string& path, const std::string& contents, const char* what) noexcept {
  try {
    if (path.empty()) return write_result::failure(std::string("scopeprof: cannot write ") + what + ": empty path");
    errno = 0;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr)
      return write_result::failure(std::string("scopeprof: cannot write ") + what + " to '" + path +
                                   "': " + std::strerror(errno));
    const std::size_t written = contents.empty() ? 0 : std::fwrite(contents.data(), 1, contents.size(), f);
    int err = (written != contents.size()) ? errno : 0;
    if (std::fflush(f) != 0 && err == 0) err = errno;
    if (std::fclose(f) != 0 && err == 0) err = errno;
    if (written != contents.size() || err != 0)
      return write_result::failure(std::string("scopeprof: cannot write ") + what + " to '" + path +
                                   "': " + std::strerror(err != 0 ? err : EIO));
    return write_result();
  } catch (...) {
    return write_result::failure(std::string("scopeprof: cannot write ") + what + " to '" + path +
                                 "': out of memory");
  }
}

/// Render (which may run out of memory) and write; every failure becomes a write_result.
template <class Render>
write_result write_rendered(const std::string& path, const char* what, Render render) noexcept {
  try {
    return write_file(path, render(), what);
  } catch (...) {
    return write_result::failure(std::string("scopeprof: cannot write ") + what + " to '" + path + "': out of memory");
  }
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
