// A small strict JSON parser (RFC 8259) for the tests and the fuzz target. It builds a tree so tests can
// read values back, and rejects everything a lenient parser would let through: trailing commas, leading
// zeros, raw control characters, invalid UTF-8, invalid escapes, lone surrogates, duplicate keys, trailing
// garbage. Numbers keep their source text, so exact values (e.g. "12.345" microseconds) can be re-read.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sptest {

struct json {
  enum class type { null, boolean, number, string, array, object };
  type t = type::null;
  bool b = false;
  std::string text;  // number: the literal as written; string: the decoded UTF-8
  std::vector<json> items;
  std::vector<std::pair<std::string, json>> members;

  bool is(type k) const noexcept { return t == k; }
  const json* find(std::string_view key) const noexcept {
    if (t != type::object) return nullptr;
    for (const auto& m : members)
      if (m.first == key) return &m.second;
    return nullptr;
  }
  double number() const { return std::strtod(text.c_str(), nullptr); }
  /// The number as an integer, or false when the literal is not a plain integer.
  bool integer(std::int64_t& out) const {
    if (t != type::number || text.empty()) return false;
    std::size_t i = text[0] == '-' ? 1 : 0;
    if (i == text.size()) return false;
    std::uint64_t v = 0;
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      if (v > (UINT64_MAX - 9) / 10) return false;
      v = v * 10 + static_cast<std::uint64_t>(text[i] - '0');
    }
    if (v > static_cast<std::uint64_t>(INT64_MAX)) return false;
    out = text[0] == '-' ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
    return true;
  }
};

namespace detail_json {

/// Independent UTF-8 decoder: length of the valid sequence at s[i] (0 if invalid), code point in cp.
inline std::size_t decode_utf8(std::string_view s, std::size_t i, std::uint32_t& cp) noexcept {
  const auto u = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = u(i);
  std::size_t n;
  std::uint32_t min;
  if (c < 0x80) { cp = c; return 1; }
  if ((c & 0xE0) == 0xC0) { n = 2; cp = c & 0x1F; min = 0x80; }
  else if ((c & 0xF0) == 0xE0) { n = 3; cp = c & 0x0F; min = 0x800; }
  else if ((c & 0xF8) == 0xF0) { n = 4; cp = c & 0x07; min = 0x10000; }
  else return 0;
  if (s.size() - i < n) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((u(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (u(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

inline void encode_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class parser {
 public:
  explicit parser(std::string_view s) : s_(s) {}

  bool parse(json& out, std::string& error) {
    skip_ws();
    if (!value(out, 0)) {
      error = error_ + " at byte " + std::to_string(pos_);
      return false;
    }
    skip_ws();
    if (pos_ != s_.size()) {
      error = "trailing characters at byte " + std::to_string(pos_);
      return false;
    }
    return true;
  }

 private:
  static constexpr int max_depth = 256;
  std::string_view s_;
  std::size_t pos_ = 0;
  std::string error_;

  bool fail(const char* why) {
    if (error_.empty()) error_ = why;
    return false;
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return s_[pos_]; }
  void skip_ws() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool value(json& out, int depth) {
    if (depth > max_depth) return fail("nesting too deep");
    if (at_end()) return fail("unexpected end of input");
    switch (peek()) {
      case '{': return object(out, depth);
      case '[': return array(out, depth);
      case '"': out.t = json::type::string; return string(out.text);
      case 't': out.t = json::type::boolean; out.b = true; return literal("true");
      case 'f': out.t = json::type::boolean; out.b = false; return literal("false");
      case 'n': out.t = json::type::null; return literal("null");
      default: return number(out);
    }
  }

  bool object(json& out, int depth) {
    out.t = json::type::object;
    ++pos_;  // {
    skip_ws();
    if (!at_end() && peek() == '}') { ++pos_; return true; }
    for (;;) {
      skip_ws();
      if (at_end() || peek() != '"') return fail("expected a string key");
      std::string key;
      if (!string(key)) return false;
      for (const auto& m : out.members)
        if (m.first == key) return fail("duplicate key");
      skip_ws();
      if (at_end() || peek() != ':') return fail("expected ':'");
      ++pos_;
      skip_ws();
      json v;
      if (!value(v, depth + 1)) return false;
      out.members.emplace_back(std::move(key), std::move(v));
      skip_ws();
      if (at_end()) return fail("unterminated object");
      if (peek() == ',') { ++pos_; continue; }
      if (peek() == '}') { ++pos_; return true; }
      return fail("expected ',' or '}'");
    }
  }

  bool array(json& out, int depth) {
    out.t = json::type::array;
    ++pos_;  // [
    skip_ws();
    if (!at_end() && peek() == ']') { ++pos_; return true; }
    for (;;) {
      skip_ws();
      json v;
      if (!value(v, depth + 1)) return false;
      out.items.push_back(std::move(v));
      skip_ws();
      if (at_end()) return fail("unterminated array");
      if (peek() == ',') { ++pos_; continue; }
      if (peek() == ']') { ++pos_; return true; }
      return fail("expected ',' or ']'");
    }
  }

  bool hex4(std::uint32_t& v) {
    if (s_.size() - pos_ < 4) return fail("truncated \\u escape");
    v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f') v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else return fail("bad hex digit in \\u escape");
    }
    return true;
  }

  bool string(std::string& out) {
    ++pos_;  // opening quote
    for (;;) {
      if (at_end()) return fail("unterminated string");
      const auto c = static_cast<unsigned char>(peek());
      if (c == '"') { ++pos_; return true; }
      if (c < 0x20) return fail("raw control character in string");
      if (c == '\\') {
        ++pos_;
        if (at_end()) return fail("unterminated escape");
        const char e = s_[pos_++];
        switch (e) {
          case '"': out += '"'; break;
          case '\\': out += '\\'; break;
          case '/': out += '/'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'n': out += '\n'; break;
          case 'r': out += '\r'; break;
          case 't': out += '\t'; break;
          case 'u': {
            std::uint32_t cp;
            if (!hex4(cp)) return false;
            if (cp >= 0xDC00 && cp <= 0xDFFF) return fail("lone low surrogate escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
              std::uint32_t lo;
              if (s_.substr(pos_, 2) != "\\u") return fail("high surrogate escape without a low one");
              pos_ += 2;
              if (!hex4(lo)) return false;
              if (lo < 0xDC00 || lo > 0xDFFF) return fail("high surrogate escape without a low one");
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            encode_utf8(out, cp);
            break;
          }
          default: return fail("invalid escape");
        }
        continue;
      }
      std::uint32_t cp;
      const std::size_t n = decode_utf8(s_, pos_, cp);
      if (n == 0) return fail("invalid UTF-8 in string");
      out.append(s_.data() + pos_, n);
      pos_ += n;
    }
  }

  bool digits() {
    const std::size_t start = pos_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++pos_;
    return pos_ > start;
  }

  bool number(json& out) {
    const std::size_t start = pos_;
    if (!at_end() && peek() == '-') ++pos_;
    if (at_end()) return fail("invalid number");
    if (peek() == '0') {
      ++pos_;
      if (!at_end() && peek() >= '0' && peek() <= '9') return fail("leading zero in number");
    } else if (!digits()) {
      return fail("invalid value");
    }
    if (!at_end() && peek() == '.') {
      ++pos_;
      if (!digits()) return fail("no digits after the decimal point");
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++pos_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++pos_;
      if (!digits()) return fail("no digits in exponent");
    }
    out.t = json::type::number;
    out.text = std::string(s_.substr(start, pos_ - start));
    return true;
  }
};

}  // namespace detail_json

/// Parse a whole JSON text strictly. On failure returns false and says why (with the byte offset).
inline bool parse_json(std::string_view text, json& out, std::string& error) {
  out = json();
  return detail_json::parser(text).parse(out, error);
}

}  // namespace sptest
