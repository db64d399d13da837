// scopeprof: reading the environment. A malformed value gives one warning (the value quoted with control
// characters escaped, so it cannot forge lines) and the default.
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/text.hpp>

#include <cstdint>
#include <cstdlib>
#include <string>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

inline std::string env_string(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

inline std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

/// Warnings quote the value with control characters escaped, so a value cannot forge lines.
inline std::string quoted(const std::string& value) { return "'" + display_name(value) + "'"; }

/// Parse a 0/1 style switch; a malformed value gives one warning and the default.
inline bool parse_switch(const char* name, const std::string& value, bool fallback) {
  const std::string v = lower(value);
  if (v.empty()) return fallback;
  if (v == "0" || v == "off" || v == "false" || v == "no") return false;
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  warn(std::string(name) + "=" + quoted(value) + " is not one of 0, 1, on, off, true, false; using " + (fallback ? "1" : "0"));
  return fallback;
}

/// Parse a positive integer (optional k/m/g suffix, powers of 1024); malformed: one warning, the default.
inline std::uint64_t parse_count(const char* name, const std::string& value, std::uint64_t fallback) {
  if (value.empty()) return fallback;
  std::uint64_t v = 0;
  std::size_t i = 0;
  for (; i < value.size() && value[i] >= '0' && value[i] <= '9'; ++i) {
    const auto digit = static_cast<std::uint64_t>(value[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) { i = 0; break; }
    v = v * 10 + digit;
  }
  std::uint64_t mult = 1;
  if (i > 0 && i + 1 == value.size()) {
    const char s = static_cast<char>(value[i] | 0x20);
    mult = s == 'k' ? 1024u : s == 'm' ? 1024u * 1024u : s == 'g' ? 1024u * 1024u * 1024u : 0u;
    if (mult) ++i;
  }
  if (i == 0 || i != value.size() || v == 0 || mult == 0 || v > UINT64_MAX / mult) {
    warn(std::string(name) + "=" + quoted(value) + " is not a positive whole number; using " + std::to_string(fallback));
    return fallback;
  }
  return v * mult;
}

inline clock_kind parse_clock(const std::string& value) {
  const std::string v = lower(value);
  const clock_kind best = best_clock_kind();
  if (v.empty() || v == "auto") return best;
  clock_kind asked;
  if (v == "steady") asked = clock_kind::steady;
  else if (v == "tsc") asked = clock_kind::tsc;
  else if (v == "cntvct") asked = clock_kind::cntvct;
  else {
    warn("SCOPEPROF_CLOCK=" + quoted(value) + " is not one of auto, tsc, steady, cntvct; using " + to_string(best));
    return best;
  }
  if (!clock_kind_available(asked)) {
    warn(std::string("SCOPEPROF_CLOCK=") + quoted(value) + ": " + to_string(asked) + " is not available on this machine; using " +
         to_string(best));
    return best;
  }
  return asked;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
