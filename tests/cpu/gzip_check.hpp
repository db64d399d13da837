// Reading gzip files in the tests with zlib's own reader (gzopen/gzread), which also passes files that
// are not gzip through unchanged: the result says which it was.
#pragma once

#include <scopeprof.hpp>  // SCOPEPROF_WITH_ZLIB (the suite also builds against single_include/)

#if SCOPEPROF_WITH_ZLIB
#include <zlib.h>

#include <string>

namespace sptest {

struct gunzipped {
  bool ok = false;    // read to the end of a complete stream
  bool gzip = false;  // the file was a gzip stream (not passed through)
  std::string bytes;  // what it inflated to
  std::string error;
};

inline gunzipped gunzip_file(const std::string& path) {
  gunzipped r;
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) {
    r.error = "gzopen failed";
    return r;
  }
  char buf[1 << 16];
  for (;;) {
    const int n = gzread(f, buf, sizeof buf);
    if (n < 0) {
      int code = 0;
      r.error = gzerror(f, &code);
      gzclose(f);
      return r;
    }
    if (n == 0) break;
    r.bytes.append(buf, static_cast<std::size_t>(n));
  }
  r.gzip = gzdirect(f) == 0;
  const int rc = gzclose(f);
  r.ok = rc == Z_OK;
  if (!r.ok) r.error = "gzclose: " + std::to_string(rc);
  return r;
}

}  // namespace sptest
#endif
