// scopeprof: the key-averages model of a torch profiler session, and its text table. Pure functions of the
// events copied out of Kineto (no torch include): <scopeprof/torch_session.hpp> fills the events, this
// header groups them into rows and prints them. The rules the table keeps are listed at the top of
// torch_session.hpp; helpers prefixed ka_ belong to the key averages.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/format/table.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

SCOPEPROF_NAMESPACE_BEGIN

/// @brief What one profiler event is, as this table names it.
enum class torch_event_kind {
  user_annotation,      ///< a user scope on the host (PROF_SCOPE, RECORD_USER_SCOPE, record_function)
  gpu_user_annotation,  ///< the device span of a user annotation: first to last kernel it launched
  op,                   ///< an operator (aten::addmm, a TORCH_LIBRARY custom op, ...)
  kernel,               ///< device work: a kernel
  memcpy,               ///< device work: a copy
  memset,               ///< device work: a memset
  runtime,              ///< a CUDA runtime or driver call on the host (cudaLaunchKernel, ...)
  python,               ///< a Python function (never from C++ programs)
  overhead,             ///< profiler overhead (Activity Buffer Request, CUPTI overhead records)
  other                 ///< anything else Kineto reports
};

/// @brief Short label of a kind, as printed in the table's Kind column.
inline const char* to_string(torch_event_kind k) noexcept {
  switch (k) {
    case torch_event_kind::user_annotation: return "annotation";
    case torch_event_kind::gpu_user_annotation: return "gpu annotation";
    case torch_event_kind::op: return "operator";
    case torch_event_kind::kernel: return "kernel";
    case torch_event_kind::memcpy: return "memcpy";
    case torch_event_kind::memset: return "memset";
    case torch_event_kind::runtime: return "runtime call";
    case torch_event_kind::python: return "python";
    case torch_event_kind::overhead: return "overhead";
    case torch_event_kind::other: return "other";
  }
  return "other";
}

/// @brief True for device work rows (kernel, memcpy, memset): where device time is counted once.
inline bool is_device_work(torch_event_kind k) noexcept {
  return k == torch_event_kind::kernel || k == torch_event_kind::memcpy || k == torch_event_kind::memset;
}

/// @brief One profiler event, copied out of torch's KinetoEvent (so the result does not depend on torch's
/// accessors, which changed between releases).
struct torch_event {
  std::string name;
  torch_event_kind kind = torch_event_kind::other;
  bool on_device = false;              ///< runs on the GPU (kernel, memcpy, memset, gpu annotation)
  std::uint64_t thread = 0;            ///< host thread (or device stream) id as torch reports it
  std::int64_t start_ns = 0;
  std::int64_t duration_ns = 0;
  std::uint64_t correlation = 0;       ///< this event's id
  std::uint64_t linked_correlation = 0;  ///< device work and runtime calls: the id of the host event that launched it
  std::string shapes;                  ///< input shapes ("[[4, 16], [8, 16]]") when recorded
};

/// @brief One row of the key-averages table.
struct torch_table_row {
  torch_event_kind kind = torch_event_kind::other;
  std::string name;
  std::string shapes;  ///< empty unless grouped by shapes
  std::uint64_t calls = 0;
  std::int64_t self_cpu_ns = 0;   ///< host rows: time not inside a nested host event
  std::int64_t cpu_total_ns = 0;  ///< host rows: inclusive (a name nested in itself counted once)
  std::int64_t self_cuda_ns = 0;  ///< device work rows: their duration; host rows: kernels launched directly
  std::int64_t cuda_total_ns = 0; ///< host rows: kernels launched inside (nested ones too); gpu annotation: its span
  bool host = false;              ///< a host row: the CPU columns apply
  /// This row's CUDA columns repeat device work that the kernel/memcpy/memset rows already count.
  bool repeats_device_work = false;
  /// Overhead rows: a host operator has the same correlation id, so torch's own key_averages() may show that
  /// operator's kernels under this row as well (this table never does).
  std::string shares_id_with;
};

/// @brief What the session saw of CUDA, and whether its CUDA columns can be trusted.
struct torch_cuda_evidence {
  bool requested = false;        ///< CUDA activity was asked for and torch had a CUDA device
  bool device_events = false;    ///< kernels, copies, memsets or GPU annotations arrived
  std::uint64_t runtime_calls = 0;  ///< CUDA runtime/driver calls recorded on the host
  std::uint64_t launch_calls = 0;   ///< of which launches or copies that should have produced device records
  int cupti_probe = -1;          ///< before the first session: 1 CUPTI had another subscriber, 0 free, -1 unknown
  /// scopeprof's own CUPTI collector (set_cupti(true), SCOPEPROF_CUPTI=1) was collecting when the session
  /// started, so it held CUPTI's subscriber slot.
  bool held_by_scopeprof = false;
  /// @brief True when CUDA activity was asked for and is missing: the CUDA columns are not evidence.
  bool missing() const noexcept {
    return requested && !device_events && (runtime_calls > 0 || cupti_probe == 1 || held_by_scopeprof);
  }
  /// @brief Requested, nothing recorded, and no witness either way (the program may have run no CUDA work).
  bool absent_unexplained() const noexcept { return requested && !device_events && !missing(); }
};

namespace detail {

// ---- The model: per-event times, then rows ----

/// Per-event quantities the rows add up, by index into the events.
struct ka_event_times {
  std::vector<bool> host;              // a host event: the CPU columns apply
  std::vector<std::ptrdiff_t> parent;  // the enclosing host event on the same thread, -1 at the top
  std::vector<std::int64_t> self_cpu, self_cuda, cuda_total;
};

// Links the host events of one thread (ids) to their parents by time containment.
inline void ka_nest_thread(const std::vector<torch_event>& events, std::vector<std::size_t>& ids,
                           std::vector<std::ptrdiff_t>& parent) {
  std::stable_sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) {
    const torch_event& x = events[a];
    const torch_event& y = events[b];
    if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
    return x.duration_ns > y.duration_ns;
  });
  std::vector<std::size_t> stack;
  for (std::size_t id : ids) {
    const torch_event& e = events[id];
    while (!stack.empty()) {
      const torch_event& top = events[stack.back()];
      // Events of one thread nest properly; times rounded to microseconds (torch 1.x) can make a child
      // seem to end after its parent, so a child is the event that starts inside the open one.
      if (e.start_ns >= top.start_ns && (e.start_ns < top.start_ns + top.duration_ns || e.start_ns == top.start_ns))
        break;
      stack.pop_back();
    }
    if (!stack.empty()) parent[id] = static_cast<std::ptrdiff_t>(stack.back());
    stack.push_back(id);
  }
}

// Host nesting, per thread; self CPU = duration minus the direct host children's durations.
inline void ka_host_times(const std::vector<torch_event>& events, ka_event_times& t) {
  const std::size_t n = events.size();
  std::map<std::uint64_t, std::vector<std::size_t>> by_thread;
  for (std::size_t i = 0; i < n; ++i) {
    const torch_event& e = events[i];
    if (e.on_device || e.kind == torch_event_kind::other) continue;
    t.host[i] = true;
    by_thread[e.thread].push_back(i);
  }
  for (auto& entry : by_thread) ka_nest_thread(events, entry.second, t.parent);
  for (std::size_t i = 0; i < n; ++i)
    if (t.host[i]) t.self_cpu[i] = events[i].duration_ns;
  for (std::size_t i = 0; i < n; ++i)
    if (t.host[i] && t.parent[i] >= 0) t.self_cpu[static_cast<std::size_t>(t.parent[i])] -= events[i].duration_ns;
}

// Device work goes to the host operator or annotation that launched it (its correlation id), only those.
inline void ka_device_self(const std::vector<torch_event>& events, ka_event_times& t) {
  const std::size_t n = events.size();
  std::unordered_map<std::uint64_t, std::size_t> launcher;
  for (std::size_t i = 0; i < n; ++i) {
    const torch_event& e = events[i];
    if (t.host[i] && e.correlation != 0 &&
        (e.kind == torch_event_kind::op || e.kind == torch_event_kind::user_annotation))
      launcher.emplace(e.correlation, i);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const torch_event& e = events[i];
    if (!is_device_work(e.kind)) continue;
    t.self_cuda[i] = t.cuda_total[i] = e.duration_ns;
    auto it = launcher.find(e.linked_correlation);
    if (it != launcher.end()) t.self_cuda[it->second] += e.duration_ns;
  }
}

// Inclusive device time of host events: own launches plus nested ones (children before parents in a
// deepest-first order). A gpu annotation's total is its span.
inline void ka_device_total(const std::vector<torch_event>& events, ka_event_times& t) {
  const std::size_t n = events.size();
  std::vector<std::size_t> depth_order;
  std::vector<int> depth(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!t.host[i]) continue;
    int d = 0;
    for (std::ptrdiff_t p = t.parent[i]; p >= 0; p = t.parent[static_cast<std::size_t>(p)]) ++d;
    depth[i] = d;
    depth_order.push_back(i);
    t.cuda_total[i] = t.self_cuda[i];
  }
  std::sort(depth_order.begin(), depth_order.end(), [&](std::size_t a, std::size_t b) { return depth[a] > depth[b]; });
  for (std::size_t i : depth_order)
    if (t.parent[i] >= 0) t.cuda_total[static_cast<std::size_t>(t.parent[i])] += t.cuda_total[i];
  for (std::size_t i = 0; i < n; ++i)
    if (events[i].kind == torch_event_kind::gpu_user_annotation) t.cuda_total[i] = events[i].duration_ns;
}

inline ka_event_times ka_times(const std::vector<torch_event>& events) {
  const std::size_t n = events.size();
  ka_event_times t;
  t.host.assign(n, false);
  t.parent.assign(n, -1);
  t.self_cpu.assign(n, 0);
  t.self_cuda.assign(n, 0);
  t.cuda_total.assign(n, 0);
  ka_host_times(events, t);
  ka_device_self(events, t);
  ka_device_total(events, t);
  return t;
}

/// A row's key: kind, name, input shapes (empty unless grouped by them).
using ka_key = std::tuple<int, std::string, std::string>;
using ka_groups = std::map<ka_key, torch_table_row>;

inline ka_key ka_key_of(const torch_event& e, bool group_by_shapes) {
  return ka_key{static_cast<int>(e.kind), e.name, group_by_shapes ? e.shapes : std::string()};
}

// Whether event i has an enclosing host event with the same key.
inline bool ka_nested_in_same(const std::vector<torch_event>& events, const ka_event_times& t, std::size_t i,
                              const ka_key& k, bool group_by_shapes) {
  for (std::ptrdiff_t p = t.parent[i]; p >= 0; p = t.parent[static_cast<std::size_t>(p)])
    if (ka_key_of(events[static_cast<std::size_t>(p)], group_by_shapes) == k) return true;
  return false;
}

// Group. A name nested in itself adds its inclusive times once (outermost instance only).
inline ka_groups ka_group(const std::vector<torch_event>& events, const ka_event_times& t, bool group_by_shapes) {
  ka_groups groups;
  for (std::size_t i = 0; i < events.size(); ++i) {
    const torch_event& e = events[i];
    if (e.kind == torch_event_kind::other && e.name.empty()) continue;
    const ka_key k = ka_key_of(e, group_by_shapes);
    torch_table_row& row = groups[k];
    if (row.calls == 0) {
      row.kind = e.kind;
      row.name = e.name;
      row.shapes = std::get<2>(k);
      row.host = t.host[i];
    }
    ++row.calls;
    const bool nested_in_same = ka_nested_in_same(events, t, i, k, group_by_shapes);
    if (t.host[i]) {
      row.self_cpu_ns += t.self_cpu[i];
      if (!nested_in_same) row.cpu_total_ns += e.duration_ns;
    }
    row.self_cuda_ns += t.self_cuda[i];
    if (!nested_in_same) row.cuda_total_ns += t.cuda_total[i];
  }
  return groups;
}

// Overhead events that share a host operator's id: torch's key_averages() hands them its kernels.
inline void ka_mark_shared_ids(const std::vector<torch_event>& events, const ka_event_times& t, ka_groups& groups,
                               bool group_by_shapes) {
  std::unordered_map<std::uint64_t, const torch_event*> host_by_id;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (t.host[i] && events[i].kind == torch_event_kind::op && events[i].correlation != 0)
      host_by_id.emplace(events[i].correlation, &events[i]);
  for (const torch_event& e : events) {
    if (e.kind != torch_event_kind::overhead || e.correlation == 0) continue;
    auto it = host_by_id.find(e.correlation);
    if (it != host_by_id.end()) groups[ka_key_of(e, group_by_shapes)].shares_id_with = it->second->name;
  }
}

// The rows, repeat marks set, sorted by CUDA total, then CPU total, then name.
inline std::vector<torch_table_row> ka_sorted_rows(ka_groups groups) {
  std::vector<torch_table_row> rows;
  rows.reserve(groups.size());
  for (auto& entry : groups) {
    torch_table_row& r = entry.second;
    r.repeats_device_work = (r.host && r.cuda_total_ns > 0) || r.kind == torch_event_kind::gpu_user_annotation;
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const torch_table_row& a, const torch_table_row& b) {
    if (a.cuda_total_ns != b.cuda_total_ns) return a.cuda_total_ns > b.cuda_total_ns;
    if (a.cpu_total_ns != b.cpu_total_ns) return a.cpu_total_ns > b.cpu_total_ns;
    return a.name < b.name;
  });
  return rows;
}

/// Key averages: one row per (kind, name[, input shapes]), sorted by CUDA total then CPU total.
inline std::vector<torch_table_row> key_averages(const std::vector<torch_event>& events, bool group_by_shapes) {
  const ka_event_times t = ka_times(events);
  ka_groups groups = ka_group(events, t, group_by_shapes);
  ka_mark_shared_ids(events, t, groups, group_by_shapes);
  return ka_sorted_rows(std::move(groups));
}

// ---- The text: evidence paragraph, table, sums and legend ----

// The paragraph for missing CUDA activity (cuda.missing()).
inline std::string ka_missing_cuda_text(const torch_cuda_evidence& cuda) {
  std::string s =
      "CUDA activity is MISSING from this session: CUDA activity was requested, but no kernel, copy or GPU "
      "annotation record arrived";
  if (cuda.launch_calls > 0)
    s += " although " + std::to_string(cuda.launch_calls) + " launch/copy calls were recorded on the host";
  else if (cuda.cupti_probe == 1)
    s += ", and CUPTI already had another subscriber when the session started";
  if (cuda.held_by_scopeprof)
    return s + ".\n"
               "Cause: scopeprof's own CUPTI collector (scopeprof::set_cupti(true) or SCOPEPROF_CUPTI=1) was "
               "collecting when the session started, and CUPTI allows one subscriber per process.\n"
               "What to do: call scopeprof::set_cupti(false) before starting the session (scopeprof's kernel "
               "columns for the scopes it collected stay valid). The torch profiler then keeps CUPTI for the rest "
               "of the process, and scopeprof's collector reports itself withheld. The CUDA columns of this "
               "session are left out: they would read as zero, which is not what the GPU did.\n";
  return s + ".\n"
             "Likely cause: CUPTI (which the torch profiler uses for CUDA activity) is held by another tool in this "
             "process: Nsight Systems or Nsight Compute, compute-sanitizer, cuda-gdb, another profiler, or a CUPTI "
             "collector started first. Only one CUPTI subscriber is allowed per process.\n"
             "What to do: run the torch profiler standalone (no other profiling tool attached, no other CUPTI "
             "collector in the program) for the CUDA columns, and take Nsight data from the wrapped run. The CUDA "
             "columns of this session are left out: they would read as zero, which is not what the GPU did.\n";
}

/// The evidence paragraph about CUDA: empty when CUDA data is there or was not asked for.
inline std::string cuda_evidence_text(const torch_cuda_evidence& cuda) {
  if (cuda.missing()) return ka_missing_cuda_text(cuda);
  if (cuda.absent_unexplained())
    return "No CUDA activity was recorded although CUDA activity was requested and torch has a CUDA device. If "
           "the profiled code ran CUDA work, CUPTI was probably held by another tool (Nsight, compute-sanitizer, "
           "another profiler or CUPTI collector): run the torch profiler standalone for CUDA data.\n";
  return {};
}

/// Which marks the printed rows used: their legend lines follow the table.
struct ka_marks {
  bool repeat = false, span = false, shared = false;
};

// The Note cell of a row.
inline std::string ka_note(const torch_table_row& r, bool cuda_columns, ka_marks& marks) {
  std::string note;
  if (cuda_columns && r.kind == torch_event_kind::gpu_user_annotation) {
    note = "[span] covers kernel rows";
    marks.span = true;
  } else if (cuda_columns && r.repeats_device_work) {
    note = "[repeat] same kernels as kernel rows";
    marks.repeat = true;
  }
  if (!r.shares_id_with.empty()) {
    if (!note.empty()) note += "; ";
    note += "[id] shares an id with " + r.shares_id_with;
    marks.shared = true;
  }
  return note;
}

inline std::vector<std::string> ka_cells(const torch_table_row& r, bool cuda_columns, bool shapes, ka_marks& marks) {
  std::vector<std::string> c;
  c.push_back(to_string(r.kind));
  c.push_back(display_name(r.name.size() > 60 ? r.name.substr(0, 57) + "..." : r.name));
  c.push_back(std::to_string(r.calls));
  c.push_back(r.host ? format_duration_ns(static_cast<double>(r.self_cpu_ns)) : "-");
  c.push_back(r.host ? format_duration_ns(static_cast<double>(r.cpu_total_ns)) : "-");
  if (cuda_columns) {
    const bool span = r.kind == torch_event_kind::gpu_user_annotation;
    c.push_back(span ? "-" : format_duration_ns(static_cast<double>(r.self_cuda_ns)));
    c.push_back(format_duration_ns(static_cast<double>(r.cuda_total_ns)));
  }
  if (shapes) c.push_back(r.shapes);
  c.push_back(ka_note(r, cuda_columns, marks));
  return c;
}

// The first `shown` rows as a text_table: Kind and Name left-aligned, times right-aligned, then the
// optional Input shapes and the Note, left-aligned.
inline text_table ka_text_table(const std::vector<torch_table_row>& rows, std::size_t shown, bool cuda_columns,
                                bool shapes, ka_marks& marks) {
  text_table t{{"Kind", "Name", "Calls", "Self CPU", "CPU total"}, {true, true, false, false, false}, {}};
  if (cuda_columns) {
    t.header.insert(t.header.end(), {"Self CUDA", "CUDA total"});
    t.left.insert(t.left.end(), {false, false});
  }
  if (shapes) {
    t.header.push_back("Input shapes");
    t.left.push_back(true);
  }
  t.header.push_back("Note");
  t.left.push_back(true);
  for (std::size_t i = 0; i < shown; ++i) t.rows.push_back(ka_cells(rows[i], cuda_columns, shapes, marks));
  return t;
}

// The sums that can be added (each counted once), then the legend of the marks used.
inline std::string ka_sums_and_legend(const std::vector<torch_table_row>& rows, bool cuda_columns,
                                      const ka_marks& marks) {
  std::int64_t host_self_sum = 0, device_sum = 0;
  for (const torch_table_row& r : rows) {
    if (r.host) host_self_sum += r.self_cpu_ns;
    if (is_device_work(r.kind)) device_sum += r.self_cuda_ns;
  }
  std::string out = "\nSums that can be added: Self CPU over host rows = " +
                    format_duration_ns(static_cast<double>(host_self_sum)) + " (recorded host time, once)";
  if (cuda_columns)
    out += "; device work (kernel, memcpy, memset rows) = " + format_duration_ns(static_cast<double>(device_sum)) +
           " (overlapping streams count twice)";
  out += ".\n";
  if (marks.repeat)
    out += "[repeat] An operator's or annotation's CUDA columns are the kernels it launched (Self: directly; "
           "total: nested too). The kernel rows count the same device work: add device time over kernel rows "
           "only.\n";
  if (marks.span)
    out += "[span] A gpu annotation row is the device span of a user annotation (first kernel start to last "
           "kernel end, gaps included), over the same kernels again.\n";
  if (marks.shared)
    out += "[id] A profiler overhead row shares its correlation id with an operator: torch's key_averages() "
           "shows that operator's kernels under it too. Here overhead rows carry no device time.\n";
  return out;
}

// The first line: how many events, and what became of CUDA activity.
inline std::string ka_summary_line(std::size_t event_count, const torch_cuda_evidence& cuda, bool cuda_columns) {
  std::string out = "torch profiler session: " + std::to_string(event_count) + " events; CPU activity; CUDA activity: ";
  if (!cuda.requested) out += "not recorded (not requested, or torch has no CUDA device)";
  else if (cuda_columns) out += "recorded";
  else if (cuda.missing()) out += "MISSING (see below)";
  else out += "none recorded (see below)";
  return out + "\n";
}

/// The key-averages table as text, with its kinds, its repeat marks and its evidence notes. `shapes`: group
/// by input shapes (only meaningful when they were recorded); max_rows 0: every row.
inline std::string key_averages_text(const std::vector<torch_event>& events, const torch_cuda_evidence& cuda,
                                     bool shapes, std::size_t max_rows) {
  const bool cuda_columns = cuda.requested && cuda.device_events;
  std::string out = ka_summary_line(events.size(), cuda, cuda_columns) + cuda_evidence_text(cuda);

  const std::vector<torch_table_row> rows = key_averages(events, shapes);
  std::size_t shown = rows.size();
  if (max_rows != 0 && shown > max_rows) shown = max_rows;
  ka_marks marks;
  std::ostringstream table;
  ka_text_table(rows, shown, cuda_columns, shapes, marks).print(table);

  out += "\nKey averages (grouped by kind and name" + std::string(shapes ? " and input shapes" : "") +
         "; totals are inclusive: never add them down the rows):\n";
  out += table.str();
  if (shown < rows.size()) out += "(" + std::to_string(rows.size() - shown) + " more rows not shown)\n";
  return out + ka_sums_and_legend(rows, cuda_columns, marks);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
