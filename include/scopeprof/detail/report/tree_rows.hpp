// scopeprof: report builder pass 6: the tree table, instances summed by call path (parent path, name) and
// laid out depth-first, heaviest host total first among siblings.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/report/flat_rows.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Call paths before layout: each node's row (parent = parent node), its children and the roots.
struct path_nodes {
  struct node {
    tree_row row;
    std::vector<std::size_t> children;
    row_distributions dist;
  };
  std::vector<node> nodes;
  std::vector<std::size_t> roots;
};

inline void add_to_tree_row(tree_row& row, const scope_instance& s) {
  ++row.calls;
  row.host_total_ns += s.host_total_ns();
  row.host_self_ns += s.host_self_ns;
  row.kernels += s.kernels;
  row.copies += s.copies;
  row.device_busy_ns += s.device_busy_ns;
  row.device_busy_self_ns += s.device_busy_self_ns;
  if (s.device == device_status::ok) {
    ++row.device_calls;
    row.device_total_ns += s.device_span_ns();
    row.device_self_ns += s.device_self_ns;
  }
}

/// Sum the instances (in pre-order) by path: nodes in order of first appearance. A path is (parent
/// node, name), keyed by integers: sites with the same name share a path.
inline path_nodes sum_by_path(const std::vector<site_desc>& sites, const std::vector<scope_instance>& in) {
  path_nodes p;
  std::vector<std::size_t> group_of_site;
  std::vector<std::string> names = group_sites_by_name(sites, group_of_site);
  const std::size_t unnamed = names.size();  // a site id outside the list (never from the recorder)
  names.emplace_back();
  std::unordered_map<std::uint64_t, std::size_t> index;  // key: (parent node + 1) << 32 | name group
  std::vector<std::size_t> node_of(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto& s = in[i];
    const std::size_t group = s.site < group_of_site.size() ? group_of_site[s.site] : unnamed;
    const std::int64_t parent_node = s.parent < 0 ? -1 : static_cast<std::int64_t>(node_of[static_cast<std::size_t>(s.parent)]);
    const std::uint64_t key = (static_cast<std::uint64_t>(parent_node + 1) << 32) | group;
    const auto found = index.emplace(key, p.nodes.size());
    const std::size_t n = found.first->second;
    if (found.second) {
      p.nodes.emplace_back();
      p.nodes[n].row.name = names[group];
      p.nodes[n].row.depth = s.depth;
      p.nodes[n].row.parent = parent_node;
      if (parent_node < 0) p.roots.push_back(n);
      else p.nodes[static_cast<std::size_t>(parent_node)].children.push_back(n);
    }
    node_of[i] = n;
    add_to_tree_row(p.nodes[n].row, s);
    p.nodes[n].dist.add(s);
  }
  for (auto& node : p.nodes) node.dist.store(node.row);
  return p;
}

/// The rows depth-first, siblings heaviest host total first; parent = the parent's position in the output.
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

/// The tree table of `in` (instances in pre-order, self times and CUPTI counts done).
inline std::vector<tree_row> build_tree_rows(const std::vector<site_desc>& sites, const std::vector<scope_instance>& in) {
  path_nodes p = sum_by_path(sites, in);
  return lay_out_paths(p);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
