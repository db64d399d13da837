// scopeprof: text helpers shared by the writers. Names are arbitrary bytes; every output is valid UTF-8.
#pragma once

#include <scopeprof/config.hpp>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not valid UTF-8
/// (overlong forms, surrogates and code points above U+10FFFF are invalid).
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) { n = 2; cp = c & 0x1Fu; }
  else if (c >= 0xE0 && c <= 0xEF) { n = 3; cp = c & 0x0Fu; }
  else if (c >= 0xF0 && c <= 0xF4) { n = 4; cp = c & 0x07u; }
  else return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char cc = byte(i + k);
    if ((cc & 0xC0u) != 0x80u) return 0;
    cp = (cp << 6) | (cc & 0x3Fu);
  }
  if (n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return n;
}

/// The bytes as valid UTF-8: each invalid byte becomes U+FFFD.
inline std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  return out;
}

/// Cut s to at most max_bytes without splitting a UTF-8 sequence.
inline std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) noexcept {
  if (s.size() <= max_bytes) return s;
  // Step back over at most three continuation bytes: a longer run is not one sequence, so cut anywhere.
  std::size_t end = max_bytes;
  for (int k = 0; k < 3 && end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0u) == 0x80u; ++k) --end;
  if (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0u) == 0x80u) end = max_bytes;
  return s.substr(0, end);
}

/// A JSON string literal (with quotes) holding the UTF-8 form of s.
inline void append_json_string(std::string& out, std::string_view s) {
  const std::string valid = to_valid_utf8(s);
  out += '"';
  for (const char ch : valid) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

/// An RFC 4180 field: quoted when it holds a comma, quote, CR or LF (or leading/trailing space).
inline void append_csv_field(std::string& out, std::string_view s) {
  const std::string valid = to_valid_utf8(s);
  const bool quote = valid.find_first_of(",\"\r\n") != std::string::npos ||
                     (!valid.empty() && (valid.front() == ' ' || valid.back() == ' '));
  if (!quote) {
    out += valid;
    return;
  }
  out += '"';
  for (const char ch : valid) {
    if (ch == '"') out += '"';
    out += ch;
  }
  out += '"';
}

/// A name for a terminal table: valid UTF-8, control characters shown as escapes so rows stay rows.
inline std::string display_name(std::string_view s) {
  const std::string valid = to_valid_utf8(s);
  std::string out;
  out.reserve(valid.size());
  for (std::size_t i = 0; i < valid.size(); ++i) {
    const char ch = valid[i];
    const auto c = static_cast<unsigned char>(ch);
    // C1 controls (U+0080..U+009F, UTF-8 C2 80..C2 9F) also steer terminals: show them escaped.
    if (c == 0xC2 && i + 1 < valid.size() && static_cast<unsigned char>(valid[i + 1]) <= 0x9F) {
      char buf[12];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned char>(valid[i + 1]));
      out += buf;
      ++i;
      continue;
    }
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

/// Number of terminal columns a valid UTF-8 string takes (one per code point; good enough for names).
inline std::size_t display_width(std::string_view s) noexcept {
  std::size_t w = 0;
  for (const char ch : s)
    if ((static_cast<unsigned char>(ch) & 0xC0u) != 0x80u) ++w;
  return w;
}

/// Nanoseconds as a short human string with a unit: "850 ns", "12.35 us", "1.234 ms", "2.500 s".
inline std::string format_duration_ns(double ns) {
  char buf[48];
  const double a = ns < 0 ? -ns : ns;
  if (a < 1e3) std::snprintf(buf, sizeof buf, "%.0f ns", ns);
  else if (a < 1e6) std::snprintf(buf, sizeof buf, "%.2f us", ns / 1e3);
  else if (a < 1e9) std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  else std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  return buf;
}

/// Longest text write_exact_double() writes ("-1.2345678901234567e-308" and "null" fit).
constexpr std::size_t max_double_chars = 25;

/// A double as JSON that reads back exactly (%.17g, a point whatever the program's LC_NUMERIC), or null
/// when it is not finite, written at `p` (room for max_double_chars); returns the end.
inline char* write_exact_double(char* p, double v) noexcept {
  if (!std::isfinite(v)) {
    std::memcpy(p, "null", 4);
    return p + 4;
  }
  const int n = std::snprintf(p, max_double_chars, "%.17g", v);
  for (int i = 0; i < n; ++i)
    if (p[i] == ',') p[i] = '.';
  return p + (n > 0 ? n : 0);
}

/// Fixed-point decimal with the given number of digits after the point (locale independent).
inline std::string format_fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// Longest text write_ns_as_us() writes: a sign, 16 digits, the point and three decimals.
constexpr std::size_t max_us_chars = 21;

/// Integer nanoseconds as microseconds with exactly three decimals ("12.345", "-0.001"), exact for any
/// value, written at `p` (room for max_us_chars); returns the end.
inline char* write_ns_as_us(char* p, std::int64_t ns) noexcept {
  std::uint64_t a = static_cast<std::uint64_t>(ns);
  if (ns < 0) {
    *p++ = '-';
    a = static_cast<std::uint64_t>(-(ns + 1)) + 1u;
  }
  p = std::to_chars(p, p + 20, a / 1000u).ptr;
  const auto frac = static_cast<unsigned>(a % 1000u);
  p[0] = '.';
  p[1] = static_cast<char>('0' + frac / 100u);
  p[2] = static_cast<char>('0' + frac / 10u % 10u);
  p[3] = static_cast<char>('0' + frac % 10u);
  return p + 4;
}

/// The same as a string.
inline std::string format_ns_as_us(std::int64_t ns) {
  char buf[max_us_chars];
  return std::string(buf, write_ns_as_us(buf, ns));
}

/// FNV-1a, for stable colours and hashing names.
inline std::uint64_t fnv1a(std::string_view s, std::uint64_t h = 1469598103934665603ull) noexcept {
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
