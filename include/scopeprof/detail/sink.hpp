// scopeprof: output sinks. A serializer appends text to the sink's buffer and calls row_done() between
// records; the buffer goes to its destination (a string, a file, an ostream) whenever it passes 1 MiB, so
// writing a report to a file never holds more than one buffer of it in memory.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/report_types.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>
#include <utility>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

class output_sink {
 public:
  explicit output_sink(std::size_t flush_at = std::size_t{1} << 20) : flush_at_(flush_at) {}
  virtual ~output_sink() = default;
  output_sink(const output_sink&) = delete;
  output_sink& operator=(const output_sink&) = delete;

  /// The text not yet handed on: serializers append here.
  std::string& text() noexcept { return buffer_; }
  /// Between records: hand the buffer on once it is big enough.
  void row_done() {
    if (buffer_.size() >= flush_at_) flush();
  }
  /// Hand on what is buffered (also at the end of a serializer's work).
  void flush() {
    if (!buffer_.empty()) consume(buffer_);
    buffer_.clear();
  }

 protected:
  virtual void consume(const std::string& chunk) = 0;

 private:
  std::string buffer_;
  std::size_t flush_at_;
};

/// Everything into one string (report::csv(), json(), chrome_trace()).
class string_sink final : public output_sink {
 public:
  string_sink() : output_sink(static_cast<std::size_t>(-1)) {}
  std::string take() {
    flush();
    return std::move(result_);
  }

 protected:
  void consume(const std::string& chunk) override {
    if (result_.empty()) result_ = chunk;
    else result_ += chunk;
  }

 private:
  std::string result_;
};

/// Into an ostream (report::print()).
class ostream_sink final : public output_sink {
 public:
  explicit ostream_sink(std::ostream& out) : output_sink(std::size_t{64} << 10), out_(out) {}
  ~ostream_sink() override {
    try {
      flush();
    } catch (...) {
    }
  }

 protected:
  void consume(const std::string& chunk) override { out_.write(chunk.data(), static_cast<std::streamsize>(chunk.size())); }

 private:
  std::ostream& out_;
};

/// Into a file, 1 MiB at a time. The first failure is kept (with errno's text) and later writes are
/// skipped; finish() flushes, closes and says what happened.
class file_sink final : public output_sink {
 public:
  file_sink(const std::string& path, const char* what) : path_(path), what_(what) {
    if (path.empty()) {
      error_ = "empty path";
      return;
    }
    errno = 0;
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr) error_ = std::strerror(errno != 0 ? errno : EIO);
  }
  ~file_sink() override {
    if (file_ != nullptr) std::fclose(file_);
  }

  /// Flush, close and report. `failure` (non-empty) is a failure of the serializer itself (out of memory).
  write_result finish(const char* failure = nullptr) noexcept {
    try {
      if (failure == nullptr) flush();
    } catch (...) {
      failure = "out of memory";
    }
    if (file_ != nullptr) {
      if (std::fflush(file_) != 0 && error_.empty()) error_ = std::strerror(errno != 0 ? errno : EIO);
      if (std::fclose(file_) != 0 && error_.empty()) error_ = std::strerror(errno != 0 ? errno : EIO);
      file_ = nullptr;
    }
    try {
      if (failure != nullptr && error_.empty()) error_ = failure;
      if (error_.empty()) return write_result();
      if (path_.empty()) return write_result::failure(std::string("scopeprof: cannot write ") + what_ + ": " + error_);
      return write_result::failure(std::string("scopeprof: cannot write ") + what_ + " to '" + path_ + "': " + error_);
    } catch (...) {
      return write_result::failure("scopeprof: cannot write the report: out of memory");
    }
  }

 protected:
  void consume(const std::string& chunk) override {
    if (file_ == nullptr || !error_.empty()) return;
    errno = 0;
    if (std::fwrite(chunk.data(), 1, chunk.size(), file_) != chunk.size())
      error_ = std::strerror(errno != 0 ? errno : EIO);
  }

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  const char* what_;
  std::string error_;
};

/// Serialize into a file: every failure, the serializer's own included, becomes a write_result.
template <class Serialize>
write_result write_to_file(const std::string& path, const char* what, Serialize serialize) noexcept {
  try {
    file_sink sink(path, what);
    try {
      serialize(sink);
    } catch (...) {
      return sink.finish("out of memory");
    }
    return sink.finish();
  } catch (...) {
    return write_result::failure(std::string("scopeprof: cannot write ") + what + ": out of memory");
  }
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
