// A small strict RFC 4180 CSV parser for the tests and the fuzz target: every record ends in CRLF, a field
// is either unquoted (no quote, CR or LF inside) or quoted (quotes doubled inside, and the closing quote
// is followed by a comma or the end of the record), and every record has as many fields as the header.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sptest {

using csv_rows = std::vector<std::vector<std::string>>;

inline bool parse_csv(std::string_view text, csv_rows& rows, std::string& error) {
  rows.clear();
  std::size_t i = 0;
  const auto fail = [&](const std::string& why) {
    error = why + " (record " + std::to_string(rows.size() + 1) + ", byte " + std::to_string(i) + ")";
    return false;
  };
  if (text.empty()) return fail("empty CSV: no header");
  std::vector<std::string> record;
  while (i < text.size()) {
    std::string field;
    if (text[i] == '"') {
      ++i;
      for (;;) {
        if (i >= text.size()) return fail("unterminated quoted field");
        if (text[i] == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += text[i++];
      }
      if (i < text.size() && text[i] != ',' && text[i] != '\r') return fail("characters after a closing quote");
    } else {
      while (i < text.size() && text[i] != ',' && text[i] != '\r') {
        if (text[i] == '"') return fail("quote inside an unquoted field");
        if (text[i] == '\n') return fail("bare LF (records end in CRLF)");
        field += text[i++];
      }
    }
    record.push_back(std::move(field));
    if (i >= text.size()) return fail("last record does not end in CRLF");
    if (text[i] == ',') {
      ++i;
      continue;
    }
    // text[i] == '\r'
    if (i + 1 >= text.size() || text[i + 1] != '\n') return fail("bare CR (records end in CRLF)");
    i += 2;
    if (!rows.empty() && record.size() != rows.front().size())
      return fail("record has " + std::to_string(record.size()) + " fields, the header has " +
                  std::to_string(rows.front().size()));
    rows.push_back(std::move(record));
    record.clear();
  }
  if (!record.empty()) return fail("last record does not end in CRLF");
  return true;
}

/// Index of a header column, or -1.
inline int csv_column(const csv_rows& rows, std::string_view name) {
  if (rows.empty()) return -1;
  for (std::size_t c = 0; c < rows.front().size(); ++c)
    if (rows.front()[c] == name) return static_cast<int>(c);
  return -1;
}

}  // namespace sptest
