// scopeprof tool: output_file (output_file.hpp).
#include "output_file.hpp"

#include <cerrno>
#include <cstring>

#if defined(SCOPEPROF_CLI_WITH_ZLIB)
#include <zlib.h>
#endif

namespace scopeprof_cli {

namespace {
constexpr std::size_t buffer_bytes = 1 << 20;

bool ends_with_gz(const std::string& s) { return s.size() >= 3 && s.compare(s.size() - 3, 3, ".gz") == 0; }
}  // namespace

output_file::~output_file() { discard(); }

bool output_file::open(const std::string& path, std::string& error) {
  discard();
  path_ = path;
  failed_ = false;
  if (ends_with_gz(path)) {
#if defined(SCOPEPROF_CLI_WITH_ZLIB)
    gz_ = gzopen(path.c_str(), "wb");
    if (gz_ == nullptr) {
      error = path + ": cannot create (" + std::strerror(errno) + ")";
      return false;
    }
#else
    error = path + ": a .gz output needs zlib, and this scopeprof was built without it";
    return false;
#endif
  } else {
    plain_ = std::fopen(path.c_str(), "wb");
    if (plain_ == nullptr) {
      error = path + ": cannot create (" + std::strerror(errno) + ")";
      return false;
    }
  }
  buffer_.reserve(buffer_bytes);
  return true;
}

void output_file::write(std::string_view text) {
  buffer_.append(text.data(), text.size());
  if (buffer_.size() >= buffer_bytes) flush_buffer();
}

void output_file::flush_buffer() {
  if (buffer_.empty()) return;
  if (plain_ != nullptr) {
    failed_ |= std::fwrite(buffer_.data(), 1, buffer_.size(), plain_) != buffer_.size();
  }
#if defined(SCOPEPROF_CLI_WITH_ZLIB)
  if (gz_ != nullptr) {
    failed_ |= gzwrite(static_cast<gzFile>(gz_), buffer_.data(), static_cast<unsigned>(buffer_.size())) !=
               static_cast<int>(buffer_.size());
  }
#endif
  buffer_.clear();
}

bool output_file::close(std::string& error) {
  if (plain_ == nullptr && gz_ == nullptr) {
    error = path_ + ": not open";
    return false;
  }
  flush_buffer();
  if (plain_ != nullptr) {
    failed_ |= std::fclose(plain_) != 0;
    plain_ = nullptr;
  }
#if defined(SCOPEPROF_CLI_WITH_ZLIB)
  if (gz_ != nullptr) {
    failed_ |= gzclose(static_cast<gzFile>(gz_)) != Z_OK;
    gz_ = nullptr;
  }
#endif
  if (failed_) {
    std::remove(path_.c_str());
    error = path_ + ": write failed (disk full?)";
    return false;
  }
  return true;
}

void output_file::discard() {
  if (plain_ == nullptr && gz_ == nullptr) return;
  if (plain_ != nullptr) std::fclose(plain_);
  plain_ = nullptr;
#if defined(SCOPEPROF_CLI_WITH_ZLIB)
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
#endif
  gz_ = nullptr;
  buffer_.clear();
  std::remove(path_.c_str());
}

}  // namespace scopeprof_cli
