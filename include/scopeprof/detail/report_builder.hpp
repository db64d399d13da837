// scopeprof: the report builder: raw per-thread records in, the report's instances, call tree, flat rows,
// tree rows and kernel summary out. Pure functions of the raw snapshot.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/demangle.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/report.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

class report_builder {
 public:
  static report build(raw_snapshot raw) {
    report r;
    r.counts_ = raw.counts;
    r.sites_ = std::move(raw.sites);
    r.sources_ = std::move(raw.sources);
    r.warnings_ = std::move(raw.warnings);
    r.origin_ns_ = raw.origin_ns;
    std::vector<std::vector<std::int64_t>> instance_of(raw.threads.size());
    for (std::size_t t = 0; t < raw.threads.size(); ++t) {
      r.threads_.push_back(raw.threads[t].desc);
      add_thread(r, raw.threads[t].records, static_cast<std::uint32_t>(t), instance_of[t]);
      std::vector<raw_instance>().swap(raw.threads[t].records);
    }
    if (r.sources_.cupti_valid) add_activities(r, raw, instance_of);
    compute_device_self(r);
    build_flat(r);
    build_tree(r);
    return r;
  }

 private:
  static bool contains(const raw_instance& outer, const raw_instance& inner) noexcept {
    return outer.host_begin_ns <= inner.host_begin_ns && inner.host_end_ns <= outer.host_end_ns;
  }

  // Records arrive in post-order with their nesting level: a scope's children are the records one level
  // deeper that ended since the previous record at its own level. A child that does not lie inside the
  // adopting scope (its true parent was dropped) becomes an orphan root instead of being misattributed.
  static void add_thread(report& r, const std::vector<raw_instance>& recs, std::uint32_t thread,
                         std::vector<std::int64_t>& instance_of) {
    const std::size_t n = recs.size();
    instance_of.assign(n, -1);
    std::vector<std::vector<std::uint32_t>> children(n);
    std::vector<std::vector<std::uint32_t>> pending;  // by recorded depth
    std::vector<std::uint32_t> roots;
    std::vector<char> orphan(n, 0);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint32_t d = recs[i].depth;
      if (pending.size() < d + 2) pending.resize(d + 2);
      for (std::size_t k = pending.size() - 1; k > d + 1; --k) {  // deeper than a child: parent lost
        for (auto c : pending[k]) orphan[c] = 1, roots.push_back(c);
        pending[k].clear();
      }
      for (auto c : pending[d + 1]) {
        if (contains(recs[i], recs[c])) children[i].push_back(c);
        else orphan[c] = 1, roots.push_back(c);
      }
      pending[d + 1].clear();
      pending[d].push_back(i);
    }
    for (std::size_t k = 0; k < pending.size(); ++k)
      for (auto c : pending[k]) {
        if (k > 0) orphan[c] = 1;
        roots.push_back(c);
      }
    const auto by_begin = [&](std::uint32_t a, std::uint32_t b) {
      return recs[a].host_begin_ns != recs[b].host_begin_ns ? recs[a].host_begin_ns < recs[b].host_begin_ns
                                                            : recs[a].depth < recs[b].depth;
    };
    std::stable_sort(roots.begin(), roots.end(), by_begin);
    // Emit in pre-order with an explicit stack (nesting may be deep).
    struct frame {
      std::uint32_t rec;
      std::int64_t parent;
      std::uint32_t depth;
    };
    std::vector<frame> stack;
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back({*it, -1, 0});
    while (!stack.empty()) {
      const frame f = stack.back();
      stack.pop_back();
      const raw_instance& x = recs[f.rec];
      scope_instance s;
      s.site = x.site;
      s.thread = thread;
      s.parent = f.parent;
      s.depth = f.depth;
      s.orphan = orphan[f.rec] != 0;
      s.host_begin_ns = x.host_begin_ns;
      s.host_end_ns = x.host_end_ns;
      std::int64_t child_total = 0;
      for (auto c : children[f.rec]) child_total += recs[c].host_end_ns - recs[c].host_begin_ns;
      s.host_self_ns = (x.host_end_ns - x.host_begin_ns) - child_total;
      s.device = x.device;
      s.device_id = x.device_id;
      s.stream = x.stream;
      s.device_begin_ns = x.device_begin_ns;
      s.device_end_ns = x.device_end_ns;
      if (s.orphan) ++r.orphans_;
      const auto index = static_cast<std::int64_t>(r.instances_.size());
      instance_of[f.rec] = index;
      r.instances_.push_back(s);
      auto& ch = children[f.rec];
      std::stable_sort(ch.begin(), ch.end(), by_begin);
      for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back({*it, index, f.depth + 1});
    }
  }

  // CUPTI records: each belongs to the innermost scope that launched it; a scope's inclusive counts add its
  // children's (instances are in pre-order, so children come after their parent).
  static void add_activities(report& r, raw_snapshot& raw, const std::vector<std::vector<std::int64_t>>& instance_of) {
    r.activity_names_ = std::move(raw.activity_names);
    r.activity_demangled_.reserve(r.activity_names_.size());
    for (const auto& n : r.activity_names_) r.activity_demangled_.push_back(demangle(n));  // once per name
    r.activities_.reserve(raw.activities.size());
    auto& in = r.instances_;
    for (const raw_activity& a : raw.activities) {
      if (a.name >= r.activity_names_.size() || a.end_ns < a.begin_ns) continue;
      device_activity d;
      d.kind = a.kind;
      d.name = a.name;
      d.device = a.device;
      d.stream = a.stream;
      d.graph = a.graph;
      d.begin_ns = a.begin_ns;
      d.end_ns = a.end_ns;
      if (a.thread >= 0 && static_cast<std::size_t>(a.thread) < instance_of.size() && a.record >= 0 &&
          static_cast<std::size_t>(a.record) < instance_of[static_cast<std::size_t>(a.thread)].size())
        d.instance = instance_of[static_cast<std::size_t>(a.thread)][static_cast<std::size_t>(a.record)];
      if (d.instance >= 0) {
        scope_instance& s = in[static_cast<std::size_t>(d.instance)];
        if (d.kind == activity_kind::kernel) ++s.kernels_self;
        else ++s.copies;
        s.device_busy_self_ns += d.duration_ns();
      }
      r.activities_.push_back(d);
    }
    std::stable_sort(r.activities_.begin(), r.activities_.end(),
                     [](const device_activity& a, const device_activity& b) { return a.begin_ns < b.begin_ns; });
    for (auto& s : in) {
      s.kernels = s.kernels_self;
      s.device_busy_ns = s.device_busy_self_ns;
    }
    // copies holds the scope's own count so far; add children bottom-up (reverse pre-order).
    for (std::size_t i = in.size(); i-- > 0;) {
      const auto& c = in[i];
      if (c.parent < 0) continue;
      auto& p = in[static_cast<std::size_t>(c.parent)];
      p.kernels += c.kernels;
      p.copies += c.copies;
      p.device_busy_ns += c.device_busy_ns;
    }
    // Kernel summary by (scope name, kernel name).
    std::unordered_map<std::string, std::size_t> group;
    std::vector<std::vector<std::int64_t>> durations;
    std::int64_t all = 0;
    for (const auto& d : r.activities_) {
      if (d.kind != activity_kind::kernel) continue;
      const std::string scope =
          d.instance < 0 ? std::string("(no scope)")
                         : (in[static_cast<std::size_t>(d.instance)].site < r.sites_.size()
                                ? r.sites_[in[static_cast<std::size_t>(d.instance)].site].name
                                : std::string());
      std::string key = scope;
      key += '\0';
      key += std::to_string(d.name);
      auto it = group.emplace(std::move(key), r.kernel_summary_.size());
      if (it.second) {
        r.kernel_summary_.emplace_back();
        r.kernel_summary_.back().scope = scope;
        r.kernel_summary_.back().kernel = r.activity_demangled_[d.name];
        r.kernel_summary_.back().mangled = r.activity_names_[d.name];
        durations.emplace_back();
      }
      durations[it.first->second].push_back(d.duration_ns());
      all += d.duration_ns();
    }
    for (std::size_t g = 0; g < r.kernel_summary_.size(); ++g) {
      auto& row = r.kernel_summary_[g];
      row.time = duration_stats::of(std::move(durations[g]));
      row.time_pct = all > 0 ? 100.0 * static_cast<double>(row.time.sum) / static_cast<double>(all) : 0.0;
    }
    std::stable_sort(r.kernel_summary_.begin(), r.kernel_summary_.end(),
                     [](const kernel_summary_row& a, const kernel_summary_row& b) { return a.time.sum > b.time.sum; });
  }

  // Device self = span minus the union of the spans of its nearest device-timed descendants on the same
  // device and stream, whatever lies between (host-only, sampled-out or other-stream scopes): so the self
  // column of one stream adds up to the spans of its outermost scopes, and nothing is subtracted twice.
  static void compute_device_self(report& r) {
    auto& in = r.instances_;
    std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>> child_spans(in.size());
    // Instances are in pre-order: walk them with the chain of open ancestors and, per (device, stream), a
    // stack of the timed ones among them, whose top is the nearest (linear in the instances, any depth).
    using stream_key = std::pair<std::int32_t, std::uint64_t>;
    std::map<stream_key, std::vector<std::size_t>> timed_ancestors;
    std::vector<std::size_t> chain;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const auto& c = in[i];
      while (!chain.empty() && (c.parent < 0 || chain.back() != static_cast<std::size_t>(c.parent))) {
        const auto& gone = in[chain.back()];
        if (gone.device == device_status::ok) timed_ancestors[{gone.device_id, gone.stream}].pop_back();
        chain.pop_back();
      }
      if (c.device == device_status::ok) {
        auto& stack = timed_ancestors[{c.device_id, c.stream}];
        if (!stack.empty()) child_spans[stack.back()].push_back({c.device_begin_ns, c.device_end_ns});
        stack.push_back(i);
      }
      chain.push_back(i);
    }
    for (std::size_t i = 0; i < in.size(); ++i) {
      auto& s = in[i];
      if (s.device != device_status::ok) continue;
      auto& spans = child_spans[i];
      std::sort(spans.begin(), spans.end());
      std::int64_t covered = 0, cur_b = 0, cur_e = 0;
      bool open = false;
      for (auto sp : spans) {
        const std::int64_t b = (std::max)(sp.first, s.device_begin_ns);
        const std::int64_t e = (std::min)(sp.second, s.device_end_ns);
        if (e <= b) continue;
        if (open && b <= cur_e) {
          cur_e = (std::max)(cur_e, e);
        } else {
          if (open) covered += cur_e - cur_b;
          cur_b = b, cur_e = e, open = true;
        }
      }
      if (open) covered += cur_e - cur_b;
      s.device_self_ns = s.device_span_ns() - covered;
    }
  }

  static void build_flat(report& r) {
    std::unordered_map<std::string, std::size_t> by_name;
    std::vector<std::size_t> group_of_site(r.sites_.size());
    for (std::size_t s = 0; s < r.sites_.size(); ++s) {
      auto it = by_name.emplace(r.sites_[s].name, r.flat_.size());
      if (it.second) {
        r.flat_.emplace_back();
        r.flat_.back().name = r.sites_[s].name;
      }
      group_of_site[s] = it.first->second;
    }
    const std::size_t groups = r.flat_.size();
    std::vector<std::vector<std::int64_t>> host(groups), device(groups);
    std::vector<std::uint32_t> active(groups, 0);  // open ancestors with the same name
    std::vector<std::size_t> stack;                // groups of the current ancestor chain
    std::int64_t all_self = 0;
    for (const auto& s : r.instances_) {
      if (s.depth == 0) {
        for (auto g : stack) --active[g];
        stack.clear();
      }
      while (stack.size() > s.depth) {
        --active[stack.back()];
        stack.pop_back();
      }
      const std::size_t g = s.site < group_of_site.size() ? group_of_site[s.site] : 0;
      if (groups == 0) break;
      flat_row& row = r.flat_[g];
      ++row.calls;
      if (active[g] == 0) {
        row.host_total_ns += s.host_total_ns();
        row.kernels += s.kernels;
        row.copies += s.copies;
        row.device_busy_ns += s.device_busy_ns;
      }
      row.device_busy_self_ns += s.device_busy_self_ns;
      row.host_self_ns += s.host_self_ns;
      all_self += s.host_self_ns;
      host[g].push_back(s.host_total_ns());
      switch (s.device) {
        case device_status::ok:
          ++row.device_calls;
          if (active[g] == 0) row.device_total_ns += s.device_span_ns();
          row.device_self_ns += s.device_self_ns;
          device[g].push_back(s.device_span_ns());
          break;
        case device_status::captured: ++row.device_captured; break;
        case device_status::invalid: ++row.device_invalid; break;
        default: break;
      }
      ++active[g];
      stack.push_back(g);
    }
    for (std::size_t g = 0; g < groups; ++g) {
      r.flat_[g].host = duration_stats::of(std::move(host[g]));
      r.flat_[g].device = duration_stats::of(std::move(device[g]));
      r.flat_[g].host_time_pct = all_self > 0 ? 100.0 * static_cast<double>(r.flat_[g].host_self_ns) / all_self : 0.0;
    }
    r.flat_.erase(std::remove_if(r.flat_.begin(), r.flat_.end(), [](const flat_row& f) { return f.calls == 0; }),
                  r.flat_.end());
    std::stable_sort(r.flat_.begin(), r.flat_.end(),
                     [](const flat_row& a, const flat_row& b) { return a.host_self_ns > b.host_self_ns; });
  }

  static void build_tree(report& r) {
    // Aggregate instances by path (parent row, name), then lay the rows out depth-first.
    struct node {
      tree_row row;
      std::vector<std::size_t> children;
    };
    std::vector<node> nodes;
    std::vector<std::size_t> roots;
    std::unordered_map<std::string, std::size_t> index;  // key: parent node index + '\0' + name
    std::vector<std::size_t> node_of(r.instances_.size());
    for (std::size_t i = 0; i < r.instances_.size(); ++i) {
      const auto& s = r.instances_[i];
      const std::string& name = s.site < r.sites_.size() ? r.sites_[s.site].name : std::string();
      const std::int64_t parent_node = s.parent < 0 ? -1 : static_cast<std::int64_t>(node_of[static_cast<std::size_t>(s.parent)]);
      std::string key = std::to_string(parent_node);
      key += '\0';
      key += name;
      auto it = index.find(key);
      std::size_t n;
      if (it == index.end()) {
        n = nodes.size();
        nodes.emplace_back();
        nodes[n].row.name = name;
        nodes[n].row.depth = s.depth;
        nodes[n].row.parent = parent_node;
        index.emplace(std::move(key), n);
        if (parent_node < 0) roots.push_back(n);
        else nodes[static_cast<std::size_t>(parent_node)].children.push_back(n);
      } else {
        n = it->second;
      }
      node_of[i] = n;
      tree_row& row = nodes[n].row;
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
    const auto heavier = [&](std::size_t a, std::size_t b) { return nodes[a].row.host_total_ns > nodes[b].row.host_total_ns; };
    std::stable_sort(roots.begin(), roots.end(), heavier);
    std::vector<std::pair<std::size_t, std::int64_t>> stack;  // node, parent row in output
    for (auto it = roots.rbegin(); it != roots.rend(); ++it) stack.push_back({*it, -1});
    while (!stack.empty()) {
      const auto [n, parent_row] = stack.back();
      stack.pop_back();
      tree_row row = nodes[n].row;
      row.parent = parent_row;
      const auto out_index = static_cast<std::int64_t>(r.tree_.size());
      r.tree_.push_back(std::move(row));
      auto& ch = nodes[n].children;
      std::stable_sort(ch.begin(), ch.end(), heavier);
      for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back({*it, out_index});
    }
  }
};

}  // namespace detail

SCOPEPROF_NAMESPACE_END
