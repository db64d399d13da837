// scopeprof tool: reading and writing whole files, gzip through zlib where the tool was built with it.
#include "file_bytes.hpp"

#include <scopeprof/detail/gzip_sink.hpp>  // detail::write_to_path: the writers' file and gzip sinks

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#if defined(SCOPEPROF_CLI_WITH_ZLIB)
#include <zlib.h>
#endif

namespace scopeprof_cli {

namespace {

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f && static_cast<unsigned char>(bytes[1]) == 0x8b;
}

#if defined(SCOPEPROF_CLI_WITH_ZLIB)
/// Decompresses every gzip member of `in` into `out`; false with the reason when the stream is damaged or
/// cut short.
bool gunzip(const std::string& in, std::string& out, std::string& why) {
  if (in.size() > 0xFFFFFFFFu) {  // zlib takes a 32-bit length; reports are far smaller
    why = "the gzip file is larger than 4 GiB";
    return false;
  }
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
    why = "cannot start zlib";
    return false;
  }
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char buf[1 << 16];
  int rc = Z_OK;
  for (;;) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      if (inflateReset(&z) != Z_OK) break;  // a concatenated member (gzip allows several)
      continue;
    }
    if (rc != Z_OK) break;
    if (z.avail_in == 0 && z.avail_out != 0) break;  // the input ran out inside a member
  }
  inflateEnd(&z);
  if (rc == Z_STREAM_END) return true;
  why = rc == Z_OK || rc == Z_BUF_ERROR ? "the gzip stream is truncated" : "the gzip stream is damaged";
  return false;
}
#endif

}  // namespace

bool read_file_bytes(const std::string& path, std::string& bytes, std::string& error) {
  std::string raw;
  if (path == "-") {
    raw.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      error = path + ": cannot open (" + std::strerror(errno) + ")";
      return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
      error = path + ": cannot read (" + std::strerror(errno) + ")";
      return false;
    }
    raw = ss.str();
  }
  if (!is_gzip(raw)) {
    bytes = std::move(raw);
    return true;
  }
#if defined(SCOPEPROF_CLI_WITH_ZLIB)
  std::string why;
  std::string plain;
  if (!gunzip(raw, plain, why)) {
    error = path + ": " + why;
    return false;
  }
  bytes = std::move(plain);
  return true;
#else
  error = path + ": a gzip file, and this scopeprof was built without zlib (gunzip it first)";
  return false;
#endif
}

std::string describe_json_failure(const std::string& bytes) {
  if (bytes.find_first_not_of(" \t\r\n") == std::string::npos) return "empty file, not a JSON report";
  try {
    const nlohmann::json parsed = nlohmann::json::parse(bytes);
    (void)parsed;
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann counts the byte after the last one read; at the end of the text the document was cut short.
    if (e.byte >= bytes.size())
      return "truncated: the JSON ends after " + std::to_string(bytes.size()) + " bytes, before the document closes";
    return "not JSON: parse error at byte " + std::to_string(e.byte);
  } catch (const std::exception& e) {
    return std::string("not JSON: ") + e.what();
  }
  return "not JSON";
}

std::string write_failure_text(const scopeprof::write_result& result) {
  const std::string prefix = "scopeprof: ";  // the library's messages name it; the command's name comes first
  const std::string& m = result.message();
  return m.compare(0, prefix.size(), prefix) == 0 ? m.substr(prefix.size()) : m;
}

bool write_file_text(const std::string& path, const std::string& text, std::string& error) {
  // The library's own file and gzip sinks, so the tool and the library write and fail alike (a partial
  // file the write created is removed there).
  const scopeprof::write_result w =
      scopeprof::detail::write_to_path(path, "output", [&text](scopeprof::detail::output_sink& out) { out.append(text); });
  if (w) return true;
  error = write_failure_text(w);
  return false;
}

}  // namespace scopeprof_cli
