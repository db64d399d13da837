// scopeprof: report builder pass 5: the instances (and the fold) summed by call path, (parent path, name):
// each path's row, distributions and device outcomes, from which both tables are laid out (flat_rows.hpp,
// tree_rows.hpp).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report/row_sums.hpp>
#include <scopeprof/report_types.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Call paths before layout: each node's row (parent = parent node), its children and the roots.
struct path_nodes {
  struct node {
    tree_row row;
    std::vector<std::size_t> children;
    row_distributions dist;
    std::size_t group = 0;  // the name group of its sites (path_index)
    std::uint64_t device_captured = 0, device_invalid = 0;  // instances with no span, and why
  };
  std::vector<node> nodes;
  std::vector<std::size_t> roots;
};

inline void add_to_tree_row(tree_row& row, const scope_instance& s, record_share take) {
  if (take.host) {
    ++row.calls;
    row.host_total_ns += s.host_total_ns();
    row.host_self_ns += s.host_self_ns;
    add_instance_work(row.work, s);  // with a fold, the work comes from it
  }
  row.kernels += s.kernels;
  row.copies += s.copies;
  row.device_busy_ns += s.device_busy_ns;
  row.device_busy_self_ns += s.device_busy_self_ns;
  if (take.device && s.device == device_status::ok) {
    ++row.device_calls;
    row.device_total_ns += s.device_span_ns();
    row.device_self_ns += s.device_self_ns;
  }
}

/// Paths as they are found: a path is (parent node, name), keyed by integers, so sites with the same name
/// share a path.
class path_index {
 public:
  path_index(const std::vector<site_desc>& sites, path_nodes& p) : p_(p) {
    names_ = group_sites_by_name(sites, group_of_site_);
    unnamed_ = names_.size();  // a site id outside the list (never from the recorder)
    names_.emplace_back();
  }
  /// The node of `site` under `parent_node` (-1: a root), created (in order of first appearance) if new.
  /// A parent with few children is searched in place (one instance after another mostly finds a node so);
  /// the hash finds the rest.
  std::size_t node(std::int64_t parent_node, std::uint32_t site, std::uint32_t depth) {
    const std::size_t group = site < group_of_site_.size() ? group_of_site_[site] : unnamed_;
    const std::vector<std::size_t>& siblings =
        parent_node < 0 ? p_.roots : p_.nodes[static_cast<std::size_t>(parent_node)].children;
    if (siblings.size() <= scan_limit) {
      for (const std::size_t c : siblings)
        if (p_.nodes[c].group == group) return c;
    }
    const std::uint64_t key = (static_cast<std::uint64_t>(parent_node + 1) << 32) | group;
    const auto found = index_.emplace(key, p_.nodes.size());
    const std::size_t n = found.first->second;
    if (found.second) {
      p_.nodes.emplace_back();
      p_.nodes[n].group = group;
      p_.nodes[n].row.name = names_[group];
      p_.nodes[n].row.depth = depth;
      p_.nodes[n].row.parent = parent_node;
      if (parent_node < 0) p_.roots.push_back(n);
      else p_.nodes[static_cast<std::size_t>(parent_node)].children.push_back(n);
    }
    return n;
  }

 private:
  static constexpr std::size_t scan_limit = 8;
  path_nodes& p_;
  std::vector<std::size_t> group_of_site_;
  std::vector<std::string> names_;
  std::size_t unnamed_ = 0;
  std::unordered_map<std::uint64_t, std::size_t> index_;  // key: (parent node + 1) << 32 | name group
};

/// The host self time of each fold node in ns (by node id), so that a path's self and its children's
/// totals add up to its total in ns as they do in ticks: its total, less its children's totals, less
/// the time in children the tables do not hold (scopes forgotten by a reset() under a scope still open),
/// each converted on its own. Converting the self sum alone could leave them 1 ns apart.
inline std::vector<std::int64_t> fold_self_ns(const path_tree& t, double k) {
  const auto ns = [k](std::int64_t v) { return k == 1.0 ? v : static_cast<std::int64_t>(static_cast<double>(v) * k + 0.5); };
  const std::size_t n = std::size_t{t.size()} + 1;
  std::vector<std::int64_t> child_ticks(n, 0), child_ns(n, 0), self(n, 0);
  for (std::uint32_t id = 1; id <= t.size(); ++id) {
    const path_tree::node& f = t.at(id);
    if (f.parent == path_tree::root) continue;
    child_ticks[f.parent] += f.stats.host_total.stats.sum;
    child_ns[f.parent] += ns(f.stats.host_total.stats.sum);
  }
  for (std::uint32_t id = 1; id <= t.size(); ++id) {
    const running_stats& total = t.at(id).stats.host_total.stats;
    const running_stats& own = t.at(id).stats.host_self.stats;
    const std::int64_t unheld = total.sum - own.sum - child_ticks[id];
    self[id] = ns(total.sum) - child_ns[id] - ns(unheld);
  }
  return self;
}

/// The fold's host figures (and device ones, when it holds them) into the paths (its nodes come parent
/// first).
inline void add_fold_to_paths(const folded_paths& fold, path_index& index, path_nodes& p) {
  const path_tree& t = fold.tree;
  const double k = fold.ns_per_tick;
  const auto ns = [k](std::int64_t v) { return k == 1.0 ? v : static_cast<std::int64_t>(static_cast<double>(v) * k + 0.5); };
  std::vector<std::int64_t> node_of(std::size_t{t.size()} + 1, -1);
  const std::vector<std::int64_t> self_ns = fold_self_ns(t, k);
  for (std::uint32_t id = 1; id <= t.size(); ++id) {
    const path_tree::node& f = t.at(id);
    const std::size_t n = index.node(node_of[f.parent], f.site, f.depth);
    node_of[id] = static_cast<std::int64_t>(n);
    tree_row& row = p.nodes[n].row;
    row.calls += f.stats.host_total.stats.count;
    row.host_total_ns += ns(f.stats.host_total.stats.sum);
    row.host_self_ns += self_ns[id];
    p.nodes[n].dist.host.merge(f.stats.host_total);
    p.nodes[n].dist.host_self.merge(f.stats.host_self);
    p.nodes[n].dist.host_scale = k;
    row.work.merge(work_in_ns(f.stats.work, k));
    if (fold.device) {
      p.nodes[n].device_captured += f.stats.device_captured;
      p.nodes[n].device_invalid += f.stats.device_invalid;
    }
    if (fold.device && f.stats.device_total.stats.count != 0) {
      row.device_calls += f.stats.device_total.stats.count;
      row.device_total_ns += f.stats.device_total.stats.sum;
      row.device_self_ns += f.stats.device_self.stats.sum;
      p.nodes[n].dist.device.merge(f.stats.device_total);
      p.nodes[n].dist.device_self.merge(f.stats.device_self);
    }
  }
}

/// Sum the instances (in pre-order) by path, nodes in order of first appearance; with a fold, the host
/// figures come from it (every scope since reset()), and the device span and self when it holds them; the
/// CUPTI ones from the instances.
inline path_nodes sum_by_path(const std::vector<site_desc>& sites, const std::vector<scope_instance>& in,
                              const folded_paths* fold = nullptr) {
  const record_share take = record_share::of(fold);
  path_nodes p;
  path_index index(sites, p);
  std::vector<std::size_t> node_of(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto& s = in[i];
    const std::int64_t parent_node = s.parent < 0 ? -1 : static_cast<std::int64_t>(node_of[static_cast<std::size_t>(s.parent)]);
    const std::size_t n = index.node(parent_node, s.site, s.depth);
    node_of[i] = n;
    add_to_tree_row(p.nodes[n].row, s, take);
    p.nodes[n].dist.add(s, take);
    if (take.device) {
      p.nodes[n].device_captured += s.device == device_status::captured;
      p.nodes[n].device_invalid += s.device == device_status::invalid;
    }
  }
  if (!take.host) add_fold_to_paths(*fold, index, p);
  for (auto& node : p.nodes) node.dist.store(node.row);
  return p;
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
