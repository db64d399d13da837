// scopeprof: report builder pass 7: the tree table, the call paths (paths.hpp) laid out depth-first,
// heaviest host total first among siblings.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/report/paths.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// The tree table: the paths depth-first, siblings heaviest host total first; parent = the parent's
/// position in the output. Sorts the paths' children in place.
inline std::vector<tree_row> lay_out_paths(path_nodes& p) {
  std::vector<tree_row> out;
  const auto heavier = [&](std::size_t a, std::size_t b) { return p.nodes[a].row.host_total_ns > p.nodes[b].row.host_total_ns; };
  std::stable_sort(p.roots.begin(), p.roots.end(), heavier);
  std::vector<std::pair<std::size_t, std::int64_t>> stack;  // node, parent row in output
  for (auto it = p.roots.rbegin(); it != p.roots.rend(); ++it) stack.push_back({*it, -1});
  while (!stack.empty()) {
    const auto [n, parent_row] = stack.back();
    stack.pop_back();
    tree_row row = p.nodes[n].row;
    row.parent = parent_row;
    const auto out_index = static_cast<std::int64_t>(out.size());
    out.push_back(std::move(row));
    auto& ch = p.nodes[n].children;
    std::stable_sort(ch.begin(), ch.end(), heavier);
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back({*it, out_index});
  }
  return out;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
