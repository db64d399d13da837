// parse_fraction: the value of --fail-above. A percentage ("5%", "5 %") or a plain fraction ("0.05").
// Parsed in the classic locale so a user's LC_NUMERIC cannot turn "0.05" into an error or into 0.
#include "commands.hpp"

#include <cmath>
#include <locale>
#include <sstream>

namespace scopeprof_cli {
namespace {

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

// Only decimal notation: strtod-style parsing would also take "nan", "inf" and hex floats.
bool plain_number_chars(const std::string& s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return false;
  return !s.empty();
}

bool parse_decimal(const std::string& s, double& value) {
  if (!plain_number_chars(s)) return false;
  std::istringstream in(s);
  in.imbue(std::locale::classic());
  double v = 0;
  in >> v;
  if (in.fail() || in.peek() != std::char_traits<char>::eof()) return false;
  value = v;
  return true;
}

}  // namespace

bool parse_fraction(const std::string& text, double& value, std::string& error) {
  std::string number = trimmed(text);
  double scale = 1;
  if (!number.empty() && number.back() == '%') {
    number = trimmed(number.substr(0, number.size() - 1));
    scale = 0.01;
  }
  double v = 0;
  if (!parse_decimal(number, v) || !std::isfinite(v)) {
    error = "not a fraction; expected a percentage such as 5% or a fraction such as 0.05";
    return false;
  }
  if (v < 0) {
    error = "negative; expected a percentage such as 5% or a fraction such as 0.05";
    return false;
  }
  value = v * scale;
  return true;
}

}  // namespace scopeprof_cli
