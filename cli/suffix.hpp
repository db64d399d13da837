// scopeprof tool: whether a path or name ends with a suffix (the commands choose formats by suffix).
#pragma once

#include <string_view>

namespace scopeprof_cli {

inline bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace scopeprof_cli
