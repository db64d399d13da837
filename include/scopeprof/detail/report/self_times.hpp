// scopeprof: report builder pass 2: device self times of the instances (in pre-order; host self times come
// with the instances, instances.hpp).
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/report_types.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

using device_spans = std::vector<std::pair<std::int64_t, std::int64_t>>;  // (begin, end)

/// Per instance, the spans of its nearest device-timed descendants on the same device and stream,
/// whatever lies between (host-only, sampled-out or other-stream scopes).
inline std::vector<device_spans> nearest_timed_child_spans(const std::vector<scope_instance>& in) {
  std::vector<device_spans> child_spans(in.size());
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
  return child_spans;
}

/// The length of the union of `spans`, each clipped to [begin, end].
inline std::int64_t covered_ns(device_spans& spans, std::int64_t begin, std::int64_t end) {
  std::sort(spans.begin(), spans.end());
  std::int64_t covered = 0, cur_b = 0, cur_e = 0;
  bool open = false;
  for (auto sp : spans) {
    const std::int64_t b = (std::max)(sp.first, begin);
    const std::int64_t e = (std::min)(sp.second, end);
    if (e <= b) continue;
    if (open && b <= cur_e) {
      cur_e = (std::max)(cur_e, e);
    } else {
      if (open) covered += cur_e - cur_b;
      cur_b = b, cur_e = e, open = true;
    }
  }
  if (open) covered += cur_e - cur_b;
  return covered;
}

// Device self = span minus the union of the spans of its nearest device-timed descendants on the same
// device and stream, whatever lies between (host-only, sampled-out or other-stream scopes): so the self
// column of one stream adds up to the spans of its outermost scopes, and nothing is subtracted twice.
inline void compute_device_self(std::vector<scope_instance>& in) {
  std::vector<device_spans> child_spans = nearest_timed_child_spans(in);
  for (std::size_t i = 0; i < in.size(); ++i) {
    auto& s = in[i];
    if (s.device != device_status::ok) continue;
    s.device_self_ns = s.device_span_ns() - covered_ns(child_spans[i], s.device_begin_ns, s.device_end_ns);
  }
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
