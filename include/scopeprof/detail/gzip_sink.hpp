// scopeprof: gzip output. A path ending in ".gz" (any case) is written through zlib's deflate, 1 MiB of
// text at a time, as a gzip file that gunzip and zcat read; in a build without zlib (SCOPEPROF_WITH_ZLIB=0)
// such a path is refused with a message that says so, and nothing is written.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/sink.hpp>
#include <scopeprof/report_types.hpp>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#if SCOPEPROF_WITH_ZLIB
#include <zlib.h>
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// True when the path ends in ".gz" (any case).
inline bool gzip_path(std::string_view path) noexcept {
  if (path.size() < 3) return false;
  const std::string_view end = path.substr(path.size() - 3);
  return end[0] == '.' && (end[1] == 'g' || end[1] == 'G') && (end[2] == 'z' || end[2] == 'Z');
}

/// The refusal of a ".gz" path in a build without zlib.
inline std::string without_zlib_message(const std::string& path, const char* what) {
  return std::string("scopeprof: cannot write ") + what + " to '" + path +
         "': this program was built without zlib (SCOPEPROF_WITH_ZLIB=0): write " + path.substr(0, path.size() - 3) +
         " instead, or rebuild with zlib";
}

#if SCOPEPROF_WITH_ZLIB
/// Into a gzip file: each chunk of text is deflated as it comes and written. finish() ends the stream,
/// closes the file and says what happened (zlib's failures and the disk's alike).
class gzip_sink final : public output_sink {
 public:
  /// zlib's fastest level: traces are large and repetitive, so it already shrinks them several times over.
  static constexpr int level = 1;

  gzip_sink(const std::string& path, const char* what) : file_(path), what_(what) {
    if (!file_.ok()) return;
    out_.reset(new unsigned char[out_size]);
    const int rc = deflateInit2(&z_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // 16: gzip wrapper
    if (rc == Z_OK) open_ = true;
    else file_.fail(zlib_error(rc));
  }
  ~gzip_sink() override {
    if (open_) deflateEnd(&z_);
  }

  /// Flush, end the stream, close and report. `failure` (non-empty) is a failure of the serializer itself.
  write_result finish(const char* failure = nullptr) noexcept {
    try {
      if (failure == nullptr) flush();
    } catch (...) {
      failure = "out of memory";
    }
    if (failure == nullptr) deflate_into_file(nullptr, 0, Z_FINISH);
    if (open_) deflateEnd(&z_);
    open_ = false;
    return file_.finish(what_, failure);
  }

 protected:
  void consume(const char* data, std::size_t size) override { deflate_into_file(data, size, Z_NO_FLUSH); }

 private:
  static constexpr std::size_t out_size = std::size_t{256} << 10;

  static const char* zlib_error(int rc) noexcept {
    return rc == Z_MEM_ERROR ? "zlib: out of memory" : rc == Z_VERSION_ERROR ? "zlib: incompatible library version"
                                                                             : "zlib: deflate failed";
  }

  // Feeds at most 1 GiB at a time (avail_in is 32 bits); with Z_FINISH, runs until the stream ends.
  void deflate_into_file(const char* data, std::size_t size, int mode) noexcept {
    if (!open_ || !file_.ok()) return;
    for (;;) {
      const std::size_t piece = size < (std::size_t{1} << 30) ? size : (std::size_t{1} << 30);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
      z_.avail_in = static_cast<uInt>(piece);
      const int flush = piece == size ? mode : Z_NO_FLUSH;
      do {
        z_.next_out = out_.get();
        z_.avail_out = static_cast<uInt>(out_size);
        const int rc = deflate(&z_, flush);
        if (rc == Z_STREAM_ERROR) {
          file_.fail("zlib: deflate failed (stream error)");
          return;
        }
        file_.write(out_.get(), out_size - z_.avail_out);
        if (!file_.ok()) return;
      } while (z_.avail_out == 0);
      if (piece == size) return;
      data += piece;
      size -= piece;
    }
  }

  output_file file_;
  const char* what_;
  z_stream z_{};
  std::unique_ptr<unsigned char[]> out_;
  bool open_ = false;
};
#endif

/// Serialize into the file at `path`: gzip when it ends in ".gz", plain otherwise.
template <class Serialize>
write_result write_to_path(const std::string& path, const char* what, Serialize serialize) noexcept {
  if (!gzip_path(path)) return write_through<file_sink>(path, what, serialize);
#if SCOPEPROF_WITH_ZLIB
  return write_through<gzip_sink>(path, what, serialize);
#else
  try {
    return write_result::failure(without_zlib_message(path, what));
  } catch (...) {
    return write_outcome(std::string(), what, "out of memory");
  }
#endif
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
