// scopeprof: output sinks. A serializer appends text to the sink's buffer, either as a string (text()) or
// straight into reserved memory (reserve(), then commit()), and calls row_done() between records; the
// buffer goes to its destination (a file, a gzip file, an ostream) whenever it passes 1 MiB, so writing a
// report to a file never holds more than one buffer of it in memory. A string sink keeps it all.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/report_types.hpp>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

class output_sink {
 public:
  static constexpr std::size_t unbounded = static_cast<std::size_t>(-1);
  explicit output_sink(std::size_t flush_at = std::size_t{1} << 20) : flush_at_(flush_at) {}
  virtual ~output_sink() = default;
  output_sink(const output_sink&) = delete;
  output_sink& operator=(const output_sink&) = delete;

  /// The text not yet handed on, as a string: serializers append here.
  std::string& text() noexcept {
    if (direct_) {
      buffer_.resize(used_);  // shrinks: never allocates
      direct_ = false;
    }
    return buffer_;
  }
  /// Room for `n` more bytes: write them through the pointer, then commit() the end. Nothing else may
  /// use the sink in between.
  char* reserve(std::size_t n) {
    if (!direct_) {
      used_ = buffer_.size();
      direct_ = true;
    }
    if (buffer_.size() - used_ < n) grow(n);
    return buffer_.data() + used_;
  }
  void commit(const char* end) noexcept { used_ = static_cast<std::size_t>(end - buffer_.data()); }
  /// These bytes, through reserve() and commit().
  void append(std::string_view s) {
    char* p = reserve(s.size());
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    commit(p + s.size());
  }
  /// Bytes buffered now.
  std::size_t size() const noexcept { return direct_ ? used_ : buffer_.size(); }
  /// Between records: hand the buffer on once it is big enough.
  void row_done() {
    if (size() >= flush_at_) flush();
  }
  /// The serializer cannot go on (an input it copies could not be read): the write fails with `why`,
  /// nothing more reaches the destination, and a file the write created is removed. `why` must outlive
  /// the write; the first reason is kept.
  void abandon(const char* why) noexcept {
    if (abandoned_ == nullptr) abandoned_ = why;
  }
  /// The reason given to abandon(), or nullptr.
  const char* abandoned() const noexcept { return abandoned_; }
  /// Hand on what is buffered (also at the end of a serializer's work); an unbounded sink keeps it.
  void flush() {
    if (flush_at_ == unbounded) return;
    if (size() != 0 && abandoned_ == nullptr) consume(buffer_.data(), size());  // abandoned: dropped
    if (direct_) used_ = 0;
    else buffer_.clear();
  }

 protected:
  virtual void consume(const char* data, std::size_t size) = 0;
  /// Everything buffered, taken out of the sink (the unbounded sink's result).
  std::string release() noexcept {
    std::string out;
    out.swap(text());
    return out;
  }
  /// Write into `storage`'s memory: its bytes are overwritten, so a buffer kept from an earlier
  /// serialization is reused as it is, without clearing it.
  void adopt(std::string storage) noexcept {
    buffer_ = std::move(storage);
    used_ = 0;
    direct_ = true;
  }

 private:
  // The direct path keeps the string longer than the text and counts the bytes in use. It grows 64 KiB
  // past what is asked at a time (the string's capacity still grows geometrically): the new bytes are
  // zero-filled once, while they are in cache, and written over after every flush.
  void grow(std::size_t n) { buffer_.resize(used_ + n + (std::size_t{64} << 10)); }

  std::string buffer_;
  std::size_t used_ = 0;    // bytes in use while direct_
  bool direct_ = false;     // buffer_.size() is the room, used_ the text
  std::size_t flush_at_;
  const char* abandoned_ = nullptr;
};

/// Everything into one string (report::csv(), json(), chrome_trace()).
class string_sink final : public output_sink {
 public:
  string_sink() : output_sink(unbounded) {}
  /// Reuse `storage`'s allocation (its bytes are overwritten): repeated serializations without a new
  /// allocation each time.
  explicit string_sink(std::string storage) : output_sink(unbounded) { adopt(std::move(storage)); }
  std::string take() noexcept { return release(); }

 protected:
  void consume(const char*, std::size_t) override {}  // unbounded: never flushed
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
  void consume(const char* data, std::size_t size) override { out_.write(data, static_cast<std::streamsize>(size)); }

 private:
  std::ostream& out_;
};

/// "scopeprof: cannot write <what> to '<path>': <why>", or success when `why` is nullptr.
inline write_result write_outcome(const std::string& path, const char* what, const char* why) noexcept {
  try {
    if (why == nullptr) return write_result();
    if (path.empty()) return write_result::failure(std::string("scopeprof: cannot write ") + what + ": " + why);
    return write_result::failure(std::string("scopeprof: cannot write ") + what + " to '" + path + "': " + why);
  } catch (...) {
    return write_result::failure("scopeprof: cannot write the report: out of memory");
  }
}

/// A file opened for writing. The first failure is kept (errno's text, or the reason given to fail())
/// and later writes are skipped. A failed write removes the file only when this write created it: a path
/// that was there before (a device such as /dev/stdout, a link, a pipe) is never removed.
class output_file {
 public:
  explicit output_file(const std::string& path) : path_(path) {
    if (path.empty()) {
      error_ = "empty path";
      return;
    }
    struct stat st;
    const bool existed = ::lstat(path.c_str(), &st) == 0;
    errno = 0;
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr) fail_errno();
    else created_ = !existed;
  }
  ~output_file() { close(); }
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;

  bool ok() const noexcept { return file_ != nullptr && error_ == nullptr; }
  /// The first failure, or nullptr.
  const char* error() const noexcept { return error_; }
  void fail(const char* why) noexcept {
    if (error_ == nullptr) error_ = why;
  }
  void write(const void* data, std::size_t size) noexcept {
    if (!ok() || size == 0) return;
    errno = 0;
    if (std::fwrite(data, 1, size, file_) != size) fail_errno();
  }
  /// Flush and close (what the disk says only now, a full disk for one, is kept too).
  void close() noexcept {
    if (file_ == nullptr) return;
    errno = 0;
    if (std::fflush(file_) != 0) fail_errno();
    errno = 0;
    if (std::fclose(file_) != 0) fail_errno();
    file_ = nullptr;
  }
  /// Close, keep `failure` (non-null: the serializer's own) and say what happened. After a failure a
  /// file this write created is removed, and the message says so.
  write_result finish(const char* what, const char* failure) noexcept {
    close();
    if (failure != nullptr) fail(failure);
    if (error_ != nullptr && created_ && std::remove(path_.c_str()) == 0) {
      try {
        return write_outcome(path_, what, (std::string(error_) + " (the partial file was removed)").c_str());
      } catch (...) {  // out of memory: the message without the note
      }
    }
    return write_outcome(path_, what, error_);
  }

 private:
  void fail_errno() noexcept { fail(std::strerror(errno != 0 ? errno : EIO)); }

  std::FILE* file_ = nullptr;
  const char* error_ = nullptr;
  std::string path_;
  bool created_ = false;  // this write created the file (nothing was at the path): it may remove it
};

/// Into a file, 1 MiB at a time. finish() flushes, closes and says what happened.
class file_sink final : public output_sink {
 public:
  file_sink(const std::string& path, const char* what) : file_(path), what_(what) {}

  /// Flush, close and report. `failure` (non-empty) is a failure of the serializer itself (out of memory).
  write_result finish(const char* failure = nullptr) noexcept {
    try {
      if (failure == nullptr) flush();
    } catch (...) {
      failure = "out of memory";
    }
    return file_.finish(what_, failure);
  }

 protected:
  void consume(const char* data, std::size_t size) override { file_.write(data, size); }

 private:
  output_file file_;
  const char* what_;
};

/// Serialize into a sink of type Sink (file_sink, gzip_sink): every failure, the serializer's own
/// included (out of memory, or abandon()), becomes a write_result.
template <class Sink, class Serialize>
write_result write_through(const std::string& path, const char* what, Serialize& serialize) noexcept {
  try {
    Sink sink(path, what);
    try {
      serialize(static_cast<output_sink&>(sink));
    } catch (...) {
      return sink.finish("out of memory");
    }
    return sink.finish(sink.abandoned());
  } catch (...) {
    return write_outcome(std::string(), what, "out of memory");
  }
}

/// Serialize into a file.
template <class Serialize>
write_result write_to_file(const std::string& path, const char* what, Serialize serialize) noexcept {
  return write_through<file_sink>(path, what, serialize);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
