// scopeprof tool: an output file written piece by piece (gzip when its path ends in ".gz" and the tool has
// zlib), for outputs too large to build in memory first. A file that fails part-way is removed.
//
//   scopeprof_cli::output_file f;
//   if (!f.open(path, error)) fail(error);
//   f.write("...");               // buffered; errors are kept for close()
//   if (!f.close(error)) fail(error);
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace scopeprof_cli {

class output_file {
 public:
  output_file() = default;
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file();  ///< an output never closed is removed (it is incomplete)

  /// Creates `path`; false, with "PATH: why" in `error`, when it cannot.
  bool open(const std::string& path, std::string& error);
  void write(std::string_view text);
  /// Flushes and closes; false, with "PATH: why" in `error`, when any write failed (the file is removed).
  bool close(std::string& error);
  /// Closes and removes the file (the output is abandoned).
  void discard();

 private:
  void flush_buffer();

  std::string path_;
  std::FILE* plain_ = nullptr;
  void* gz_ = nullptr;  ///< gzFile when the path ends in .gz
  std::string buffer_;
  bool failed_ = false;
};

}  // namespace scopeprof_cli
