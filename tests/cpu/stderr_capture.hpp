// Test helper: everything a test's code writes to file descriptor 2 (warnings), read back as text.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include <unistd.h>

namespace sptest {

// Everything written to file descriptor 2 while it is alive.
class stderr_capture {
 public:
  stderr_capture() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    REQUIRE(file_ != nullptr);
    saved_ = ::dup(2);
    REQUIRE(saved_ >= 0);
    REQUIRE(::dup2(::fileno(file_), 2) == 2);
  }
  ~stderr_capture() { restore(); }
  std::string finish() {
    restore();
    std::string out;
    std::rewind(file_);
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, file_)) > 0) out.append(buf, n);
    std::fclose(file_);
    file_ = nullptr;
    return out;
  }
  stderr_capture(const stderr_capture&) = delete;
  stderr_capture& operator=(const stderr_capture&) = delete;

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(stderr);
    ::dup2(saved_, 2);
    ::close(saved_);
    saved_ = -1;
  }
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

}  // namespace sptest
