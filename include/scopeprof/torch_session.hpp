// scopeprof: a torch profiler (Kineto) session from C++, and a key-averages table that can be read without
// the usual traps. Needs LibTorch (link `torch`); not part of <scopeprof.hpp>: include it where you profile.
//
//   #include <scopeprof/torch_session.hpp>
//
//   scopeprof::torch_profile session;                 // starts now: CPU, plus CUDA when torch has a device
//   run_model();                                     // PROF_SCOPE blocks show up as user annotations
//   scopeprof::torch_profile_result r = session.stop();
//   r.save_chrome_trace("model_trace.json");         // open in ui.perfetto.dev
//   std::cout << r.table();                          // key averages, each row labelled with its kind
//
// The table differs from torch's key_averages() on purpose:
// - every row says what it is: user annotation, GPU span of a user annotation, operator, kernel, memcpy,
//   memset, runtime call, profiler overhead;
// - device time is attributed once, to kernel (memcpy, memset) rows; operator and annotation rows show the
//   same kernels again in their CUDA columns and are marked so; a GPU annotation span covers them a third
//   time and is marked so; overhead rows are never given an operator's kernels;
// - no footer adds inclusive totals: the only sums printed are Self CPU over host rows and device time
//   over device-work rows, each once;
// - when CUDA activity was asked for but did not arrive (CUPTI held by another tool: Nsight Systems,
//   Nsight Compute, compute-sanitizer, another profiler), the table says so in words instead of showing
//   empty CUDA columns.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/runtime.hpp>

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#if defined(__linux__) || defined(__APPLE__)
#include <dlfcn.h>
#define SCOPEPROF_TORCH_HAVE_DLSYM 1
#else
#define SCOPEPROF_TORCH_HAVE_DLSYM 0
#endif

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

/// @brief Options of a torch_profile session.
struct torch_profile_options {
  bool cuda = true;            ///< also CUDA activity (kernels, copies, runtime calls) when torch has a CUDA device
  bool record_shapes = false;  ///< record operators' input shapes (to group rows by them)
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

// KinetoEvent's accessors moved from microseconds (startUs/durationUs, torch 1.x) to nanoseconds
// (startNs/durationNs, torch 2.x): use whichever the installed torch has.
template <class E, class = void>
struct has_ns_times : std::false_type {};
template <class E>
struct has_ns_times<E, std::void_t<decltype(std::declval<const E&>().startNs()),
                                   decltype(std::declval<const E&>().durationNs())>> : std::true_type {};

template <class E>
std::int64_t kineto_start_ns(const E& e) {
  if constexpr (has_ns_times<E>::value) return static_cast<std::int64_t>(e.startNs());
  else return static_cast<std::int64_t>(e.startUs()) * 1000;
}
template <class E>
std::int64_t kineto_duration_ns(const E& e) {
  if constexpr (has_ns_times<E>::value) return static_cast<std::int64_t>(e.durationNs());
  else return static_cast<std::int64_t>(e.durationUs()) * 1000;
}

// libkineto::ActivityType values (libkineto/include/ActivityType.h; that header is not installed with every
// LibTorch, e.g. Debian's). Values 0-7 are the same in every Kineto torch has shipped; later ones are read
// only for torch 2.x, where CUDA_DRIVER is 8, PYTHON_FUNCTION 10 and OVERHEAD 11.
inline torch_event_kind kind_of_activity(std::uint8_t activity, const std::string& name) {
  switch (activity) {
    case 0: return torch_event_kind::op;
    case 1: return torch_event_kind::user_annotation;
    case 2: return torch_event_kind::gpu_user_annotation;
    case 3: return torch_event_kind::memcpy;
    case 4: return torch_event_kind::memset;
    case 5: return torch_event_kind::kernel;
    case 7: return torch_event_kind::runtime;
    default: break;
  }
#if TORCH_VERSION_MAJOR >= 2
  if (activity == 8) return torch_event_kind::runtime;
  if (activity == 10) return torch_event_kind::python;
  if (activity == 11) return torch_event_kind::overhead;
#endif
  // Overhead records Kineto cannot classify still carry these names.
  if (name == "Activity Buffer Request" || name == "Unrecognized" || name.rfind("Overhead", 0) == 0)
    return torch_event_kind::overhead;
  return torch_event_kind::other;
}

inline std::string shapes_text(const c10::ArrayRef<std::vector<int64_t>>& shapes) {
  std::string out = "[";
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (i) out += ", ";
    out += '[';
    for (std::size_t j = 0; j < shapes[i].size(); ++j) {
      if (j) out += ", ";
      out += std::to_string(shapes[i][j]);
    }
    out += ']';
  }
  out += ']';
  return out;
}

// A CUDA runtime/driver call that launches device work or copies: if these were seen and no device record
// arrived, device records are missing (not merely absent).
inline bool is_launch_call(const std::string& name) {
  static const char* const prefixes[] = {"cudaLaunch", "cuLaunch", "cudaMemcpy", "cuMemcpy", "cudaMemset",
                                         "cuMemset", "cudaGraphLaunch", "cuGraphLaunch"};
  for (const char* p : prefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

// Whether CUPTI already has a callback subscriber (a tool such as Nsight Systems or compute-sanitizer, or
// another collector), asked once per process, before Kineto's first subscription: afterwards Kineto itself
// holds it. Only when libcupti is already loaded in the process; never loads it. 1 held, 0 free, -1 unknown.
inline int probe_cupti_once() noexcept {
#if SCOPEPROF_TORCH_HAVE_DLSYM
  static const int result = []() noexcept -> int {
    using subscribe_fn = int (*)(void**, void*, void*);
    using unsubscribe_fn = int (*)(void*);
    void* sub = ::dlsym(RTLD_DEFAULT, "cuptiSubscribe");
    void* unsub = ::dlsym(RTLD_DEFAULT, "cuptiUnsubscribe");
    if (sub == nullptr || unsub == nullptr) return -1;
    void* handle = nullptr;
    auto noop = +[](void*, int, unsigned, const void*) {};
    const int rc = reinterpret_cast<subscribe_fn>(sub)(&handle, reinterpret_cast<void*>(noop), nullptr);
    if (rc == 0) {
      reinterpret_cast<unsubscribe_fn>(unsub)(handle);
      return 0;
    }
    return rc == 39 ? 1 : -1;  // 39: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
  }();
  return result;
#else
  return -1;
#endif
}

inline bool& kineto_session_started() noexcept {
  static bool started = false;
  return started;
}

inline std::string pad_right(std::string s, std::size_t w) {
  const std::size_t n = detail::display_width(s);
  if (n < w) s.append(w - n, ' ');
  return s;
}
inline std::string pad_left(const std::string& s, std::size_t w) {
  const std::size_t n = detail::display_width(s);
  return n < w ? std::string(w - n, ' ') + s : s;
}

}  // namespace detail

/// @brief The result of a torch_profile session: the events, the Chrome trace, the key-averages table.
class torch_profile_result {
 public:
  torch_profile_result() = default;

  /// @brief Why the session recorded nothing (empty when it ran).
  const std::string& error() const noexcept { return error_; }
  /// @brief The session's events, in torch's order.
  const std::vector<torch_event>& events() const noexcept { return events_; }
  /// @brief What was seen of CUDA, and whether the CUDA columns hold evidence.
  const torch_cuda_evidence& cuda() const noexcept { return cuda_; }
  /// @brief Whether input shapes were recorded.
  bool has_shapes() const noexcept { return record_shapes_; }

  /// @brief Writes torch's own Chrome trace (user_annotation, gpu_user_annotation, kernels, flows). Once
  /// per result: Kineto's save consumes the trace. Never throws.
  write_result save_chrome_trace(const std::string& path) {
    if (!result_) return write_result::failure("scopeprof: cannot write torch trace " + path + ": " +
                                               (error_.empty() ? "no profiler result" : error_));
    if (saved_) return write_result::failure("scopeprof: cannot write torch trace " + path +
                                             ": the trace was already saved (Kineto hands it out once)");
    try {
      saved_ = true;
      result_->save(path);
    } catch (const std::exception& e) {
      return write_result::failure("scopeprof: cannot write torch trace " + path + ": " + first_line(e.what()));
    } catch (...) {
      return write_result::failure("scopeprof: cannot write torch trace " + path + ": unknown error");
    }
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) return write_result::failure("scopeprof: torch wrote no trace at " + path);
    std::fclose(f);
    return {};
  }

  /// @brief Key averages: one row per (kind, name[, input shapes]), sorted by CUDA total then CPU total.
  std::vector<torch_table_row> key_averages(bool group_by_shapes = false) const {
    const std::size_t n = events_.size();
    std::vector<std::int64_t> self_cpu(n, 0), self_cuda(n, 0), cuda_total(n, 0);
    std::vector<std::ptrdiff_t> parent(n, -1);
    std::vector<bool> is_host(n, false);

    // Host nesting, per thread, by time containment.
    std::map<std::uint64_t, std::vector<std::size_t>> by_thread;
    for (std::size_t i = 0; i < n; ++i) {
      const torch_event& e = events_[i];
      if (e.on_device || e.kind == torch_event_kind::other) continue;
      is_host[i] = true;
      by_thread[e.thread].push_back(i);
    }
    for (auto& entry : by_thread) {
      std::vector<std::size_t>& ids = entry.second;
      std::stable_sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) {
        const torch_event& x = events_[a];
        const torch_event& y = events_[b];
        if (x.start_ns != y.start_ns) return x.start_ns < y.start_ns;
        return x.duration_ns > y.duration_ns;
      });
      std::vector<std::size_t> stack;
      for (std::size_t id : ids) {
        const torch_event& e = events_[id];
        while (!stack.empty()) {
          const torch_event& top = events_[stack.back()];
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
    for (std::size_t i = 0; i < n; ++i)
      if (is_host[i]) self_cpu[i] = events_[i].duration_ns;
    for (std::size_t i = 0; i < n; ++i)
      if (is_host[i] && parent[i] >= 0) self_cpu[static_cast<std::size_t>(parent[i])] -= events_[i].duration_ns;

    // Device work goes to the host operator or annotation that launched it (its correlation id), only those.
    std::unordered_map<std::uint64_t, std::size_t> launcher;
    for (std::size_t i = 0; i < n; ++i) {
      const torch_event& e = events_[i];
      if (is_host[i] && e.correlation != 0 &&
          (e.kind == torch_event_kind::op || e.kind == torch_event_kind::user_annotation))
        launcher.emplace(e.correlation, i);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const torch_event& e = events_[i];
      if (!is_device_work(e.kind)) continue;
      self_cuda[i] = cuda_total[i] = e.duration_ns;
      auto it = launcher.find(e.linked_correlation);
      if (it != launcher.end()) self_cuda[it->second] += e.duration_ns;
    }
    // Inclusive device time of host events: own launches plus nested ones (children end before parents
    // in post-order of a depth sort).
    std::vector<std::size_t> depth_order;
    std::vector<int> depth(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      if (!is_host[i]) continue;
      int d = 0;
      for (std::ptrdiff_t p = parent[i]; p >= 0; p = parent[static_cast<std::size_t>(p)]) ++d;
      depth[i] = d;
      depth_order.push_back(i);
      cuda_total[i] = self_cuda[i];
    }
    std::sort(depth_order.begin(), depth_order.end(), [&](std::size_t a, std::size_t b) { return depth[a] > depth[b]; });
    for (std::size_t i : depth_order)
      if (parent[i] >= 0) cuda_total[static_cast<std::size_t>(parent[i])] += cuda_total[i];
    for (std::size_t i = 0; i < n; ++i)
      if (events_[i].kind == torch_event_kind::gpu_user_annotation) cuda_total[i] = events_[i].duration_ns;

    // Group. A name nested in itself adds its inclusive times once (outermost instance only).
    using key_t = std::tuple<int, std::string, std::string>;
    std::map<key_t, torch_table_row> groups;
    auto key_of = [&](std::size_t i) {
      const torch_event& e = events_[i];
      return key_t{static_cast<int>(e.kind), e.name, group_by_shapes ? e.shapes : std::string()};
    };
    for (std::size_t i = 0; i < n; ++i) {
      const torch_event& e = events_[i];
      if (e.kind == torch_event_kind::other && e.name.empty()) continue;
      const key_t k = key_of(i);
      torch_table_row& row = groups[k];
      if (row.calls == 0) {
        row.kind = e.kind;
        row.name = e.name;
        row.shapes = std::get<2>(k);
        row.host = is_host[i];
      }
      ++row.calls;
      bool nested_in_same = false;
      for (std::ptrdiff_t p = parent[i]; p >= 0 && !nested_in_same; p = parent[static_cast<std::size_t>(p)])
        nested_in_same = key_of(static_cast<std::size_t>(p)) == k;
      if (is_host[i]) {
        row.self_cpu_ns += self_cpu[i];
        if (!nested_in_same) row.cpu_total_ns += e.duration_ns;
      }
      row.self_cuda_ns += self_cuda[i];
      if (!nested_in_same) row.cuda_total_ns += cuda_total[i];
    }
    // Overhead events that share a host operator's id: torch's key_averages() hands them its kernels.
    std::unordered_map<std::uint64_t, const torch_event*> host_by_id;
    for (std::size_t i = 0; i < n; ++i)
      if (is_host[i] && events_[i].kind == torch_event_kind::op && events_[i].correlation != 0)
        host_by_id.emplace(events_[i].correlation, &events_[i]);
    for (std::size_t i = 0; i < n; ++i) {
      const torch_event& e = events_[i];
      if (e.kind != torch_event_kind::overhead || e.correlation == 0) continue;
      auto it = host_by_id.find(e.correlation);
      if (it != host_by_id.end()) groups[key_of(i)].shares_id_with = it->second->name;
    }

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

  /// @brief The evidence paragraph about CUDA: empty when CUDA data is there or was not asked for.
  std::string cuda_evidence_text() const {
    if (cuda_.missing()) {
      std::string s =
          "CUDA activity is MISSING from this session: CUDA activity was requested, but no kernel, copy or GPU "
          "annotation record arrived";
      if (cuda_.launch_calls > 0)
        s += " although " + std::to_string(cuda_.launch_calls) + " launch/copy calls were recorded on the host";
      else if (cuda_.cupti_probe == 1)
        s += ", and CUPTI already had another subscriber when the session started";
      if (cuda_.held_by_scopeprof) {
        s += ".\n"
             "Cause: scopeprof's own CUPTI collector (scopeprof::set_cupti(true) or SCOPEPROF_CUPTI=1) was "
             "collecting when the session started, and CUPTI allows one subscriber per process.\n"
             "What to do: call scopeprof::set_cupti(false) before starting the session (scopeprof's kernel columns "
             "for the scopes it collected stay valid). The torch profiler then keeps CUPTI for the rest of the "
             "process, and scopeprof's collector reports itself withheld. The CUDA columns of this session are left "
             "out: they would read as zero, which is not what the GPU did.\n";
        return s;
      }
      s += ".\n"
           "Likely cause: CUPTI (which the torch profiler uses for CUDA activity) is held by another tool in this "
           "process: Nsight Systems or Nsight Compute, compute-sanitizer, cuda-gdb, another profiler, or a CUPTI "
           "collector started first. Only one CUPTI subscriber is allowed per process.\n"
           "What to do: run the torch profiler standalone (no other profiling tool attached, no other CUPTI "
           "collector in the program) for the CUDA columns, and take Nsight data from the wrapped run. The CUDA "
           "columns of this session are left out: they would read as zero, which is not what the GPU did.\n";
      return s;
    }
    if (cuda_.absent_unexplained())
      return "No CUDA activity was recorded although CUDA activity was requested and torch has a CUDA device. If "
             "the profiled code ran CUDA work, CUPTI was probably held by another tool (Nsight, compute-sanitizer, "
             "another profiler or CUPTI collector): run the torch profiler standalone for CUDA data.\n";
    return {};
  }

  /// @brief The key-averages table as text, with its kinds, its repeat marks and its evidence notes.
  std::string table(bool group_by_shapes = false, std::size_t max_rows = 0) const {
    std::string out;
    if (!error_.empty()) return "torch profiler session: not recorded: " + error_ + "\n";
    const bool cuda_columns = cuda_.requested && cuda_.device_events;
    const bool shapes = group_by_shapes && record_shapes_;
    out += "torch profiler session: " + std::to_string(events_.size()) + " events; CPU activity; CUDA activity: ";
    if (!cuda_.requested) out += "not recorded (not requested, or torch has no CUDA device)";
    else if (cuda_columns) out += "recorded";
    else if (cuda_.missing()) out += "MISSING (see below)";
    else out += "none recorded (see below)";
    out += "\n";
    const std::string evidence = cuda_evidence_text();
    if (!evidence.empty()) out += evidence;

    std::vector<torch_table_row> rows = key_averages(shapes);
    std::int64_t host_self_sum = 0, device_sum = 0;
    for (const torch_table_row& r : rows) {
      if (r.host) host_self_sum += r.self_cpu_ns;
      if (is_device_work(r.kind)) device_sum += r.self_cuda_ns;
    }
    std::size_t shown = rows.size();
    if (max_rows != 0 && shown > max_rows) shown = max_rows;

    std::vector<std::string> header = {"Kind", "Name", "Calls", "Self CPU", "CPU total"};
    if (cuda_columns) {
      header.push_back("Self CUDA");
      header.push_back("CUDA total");
    }
    if (shapes) header.push_back("Input shapes");
    header.push_back("Note");
    std::vector<std::vector<std::string>> cells;
    bool any_repeat = false, any_span = false, any_shared = false;
    for (std::size_t i = 0; i < shown; ++i) {
      const torch_table_row& r = rows[i];
      std::vector<std::string> c;
      c.push_back(to_string(r.kind));
      c.push_back(detail::display_name(r.name.size() > 60 ? r.name.substr(0, 57) + "..." : r.name));
      c.push_back(std::to_string(r.calls));
      c.push_back(r.host ? detail::format_duration_ns(static_cast<double>(r.self_cpu_ns)) : "-");
      c.push_back(r.host ? detail::format_duration_ns(static_cast<double>(r.cpu_total_ns)) : "-");
      if (cuda_columns) {
        const bool span = r.kind == torch_event_kind::gpu_user_annotation;
        c.push_back(span ? "-" : detail::format_duration_ns(static_cast<double>(r.self_cuda_ns)));
        c.push_back(detail::format_duration_ns(static_cast<double>(r.cuda_total_ns)));
      }
      if (shapes) c.push_back(r.shapes);
      std::string note;
      if (cuda_columns && r.kind == torch_event_kind::gpu_user_annotation) {
        note = "[span] covers kernel rows";
        any_span = true;
      } else if (cuda_columns && r.repeats_device_work) {
        note = "[repeat] same kernels as kernel rows";
        any_repeat = true;
      }
      if (!r.shares_id_with.empty()) {
        if (!note.empty()) note += "; ";
        note += "[id] shares an id with " + r.shares_id_with;
        any_shared = true;
      }
      c.push_back(note);
      cells.push_back(std::move(c));
    }
    std::vector<std::size_t> width(header.size(), 0);
    for (std::size_t j = 0; j < header.size(); ++j) width[j] = header[j].size();
    for (const auto& c : cells)
      for (std::size_t j = 0; j < c.size(); ++j) width[j] = (std::max)(width[j], detail::display_width(c[j]));
    auto emit = [&](const std::vector<std::string>& c) {
      std::string line;
      for (std::size_t j = 0; j < c.size(); ++j) {
        if (j) line += "  ";
        const bool left = j < 2 || header[j] == "Input shapes" || header[j] == "Note";
        line += left ? (j + 1 == c.size() ? c[j] : detail::pad_right(c[j], width[j])) : detail::pad_left(c[j], width[j]);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    };
    out += "\nKey averages (grouped by kind and name" + std::string(shapes ? " and input shapes" : "") +
           "; totals are inclusive: never add them down the rows):\n";
    emit(header);
    std::size_t rule = 0;
    for (std::size_t j = 0; j < width.size(); ++j) rule += width[j] + (j ? 2 : 0);
    out += std::string((std::min<std::size_t>)(rule, 160), '-') + "\n";
    for (const auto& c : cells) emit(c);
    if (shown < rows.size()) out += "(" + std::to_string(rows.size() - shown) + " more rows not shown)\n";

    out += "\nSums that can be added: Self CPU over host rows = " +
           detail::format_duration_ns(static_cast<double>(host_self_sum)) + " (recorded host time, once)";
    if (cuda_columns)
      out += "; device work (kernel, memcpy, memset rows) = " +
             detail::format_duration_ns(static_cast<double>(device_sum)) +
             " (overlapping streams count twice)";
    out += ".\n";
    if (any_repeat)
      out += "[repeat] An operator's or annotation's CUDA columns are the kernels it launched (Self: directly; "
             "total: nested too). The kernel rows count the same device work: add device time over kernel rows "
             "only.\n";
    if (any_span)
      out += "[span] A gpu annotation row is the device span of a user annotation (first kernel start to last "
             "kernel end, gaps included), over the same kernels again.\n";
    if (any_shared)
      out += "[id] A profiler overhead row shares its correlation id with an operator: torch's key_averages() "
             "shows that operator's kernels under it too. Here overhead rows carry no device time.\n";
    return out;
  }

  /// @brief A result built from events already at hand (tests, or events kept from an earlier run): the table
  /// and the evidence check are pure functions of the events; there is no trace to save.
  static torch_profile_result from_events(std::vector<torch_event> events, torch_cuda_evidence cuda,
                                          bool record_shapes = false) {
    torch_profile_result r;
    r.events_ = std::move(events);
    r.cuda_ = cuda;
    r.record_shapes_ = record_shapes;
    return r;
  }

  /// @brief Prints table(group_by_shapes) to a stream.
  void print(std::ostream& os, bool group_by_shapes = false) const { os << table(group_by_shapes); }

 private:
  friend class torch_profile;

  static std::string first_line(const char* what) {
    std::string s = what ? what : "";
    const std::size_t nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
  }

  void take(std::unique_ptr<torch::autograd::profiler::ProfilerResult> result) {
    result_ = std::move(result);
    if (!result_) return;
    for (const auto& k : result_->events()) {
      torch_event e;
      e.name = k.name();
      if (e.name == "[memory]" || e.name == "[OutOfMemory]") continue;
      e.kind = detail::kind_of_activity(k.activityType(), e.name);
      e.on_device = k.deviceType() != c10::DeviceType::CPU || e.kind == torch_event_kind::gpu_user_annotation ||
                    is_device_work(e.kind);
      e.thread = k.startThreadId();
      e.start_ns = detail::kineto_start_ns(k);
      e.duration_ns = detail::kineto_duration_ns(k);
      e.correlation = k.correlationId();
      e.linked_correlation = k.linkedCorrelationId();
      if (record_shapes_ && k.hasShapes()) e.shapes = detail::shapes_text(k.shapes());
      if (e.on_device && e.kind != torch_event_kind::other) cuda_.device_events = true;
      if (e.kind == torch_event_kind::runtime) {
        ++cuda_.runtime_calls;
        if (detail::is_launch_call(e.name)) ++cuda_.launch_calls;
      }
      events_.push_back(std::move(e));
    }
  }

  std::unique_ptr<torch::autograd::profiler::ProfilerResult> result_;
  std::vector<torch_event> events_;
  torch_cuda_evidence cuda_;
  bool record_shapes_ = false;
  bool saved_ = false;
  std::string error_;
};

/// @brief RAII torch profiler session on the calling thread: starts Kineto in the constructor (CPU
/// activity, plus CUDA when asked and torch has a CUDA device), stop() ends it and returns the result; a
/// session not stopped is stopped and discarded by the destructor. One session at a time per process.
///
///   scopeprof::torch_profile session({/*cuda=*/true, /*record_shapes=*/true});
///   step();
///   auto result = session.stop();
///   result.save_chrome_trace("step_trace.json");
///   result.print(std::cout, /*group_by_shapes=*/true);
class torch_profile {
 public:
  explicit torch_profile(torch_profile_options options = {}) : options_(options) { start(); }
  ~torch_profile() {
    if (running_) {
      try {
        (void)torch::autograd::profiler::disableProfiler();
      } catch (...) {
      }
      session_active().store(false);
    }
  }
  torch_profile(const torch_profile&) = delete;
  torch_profile& operator=(const torch_profile&) = delete;

  /// @brief Whether the profiler is running (false after stop() or when it could not start: see error()).
  bool running() const noexcept { return running_; }
  /// @brief Why the session did not start (empty when it did).
  const std::string& error() const noexcept { return error_; }

  /// @brief Stops the profiler and returns what it recorded. Never throws.
  torch_profile_result stop() {
    torch_profile_result r;
    r.record_shapes_ = options_.record_shapes;
    r.cuda_.requested = cuda_requested_;
    r.cuda_.cupti_probe = cupti_probe_;
    r.cuda_.held_by_scopeprof = held_by_scopeprof_;
    if (!running_) {
      r.error_ = error_.empty() ? "the session was already stopped" : error_;
      return r;
    }
    running_ = false;
    struct release {
      ~release() { session_active().store(false); }
    } released_at_return;
    try {
      r.take(torch::autograd::profiler::disableProfiler());
    } catch (const std::exception& e) {
      r.error_ = "disableProfiler failed: " + torch_profile_result::first_line(e.what());
    } catch (...) {
      r.error_ = "disableProfiler failed";
    }
    return r;
  }

 private:
  // One session per process: Kineto keeps one profiler state, and some LibTorch versions would let a
  // second enableProfiler() through and mix both sessions' events.
  static std::atomic<bool>& session_active() noexcept {
    static std::atomic<bool> active{false};
    return active;
  }

  void start() {
    namespace tap = torch::autograd::profiler;
    namespace tpi = torch::profiler::impl;
    if (session_active().exchange(true)) {
      error_ = "another scopeprof::torch_profile session is running (one at a time per process)";
      return;
    }
    try {
      std::set<tpi::ActivityType> activities{tpi::ActivityType::CPU};
      if (options_.cuda && torch_has_cuda()) {
        activities.insert(tpi::ActivityType::CUDA);
        cuda_requested_ = true;
        held_by_scopeprof_ = scopeprof::cupti_enabled();
        if (!detail::kineto_session_started()) cupti_probe_ = detail::probe_cupti_once();
      }
      const tpi::ProfilerConfig config(tpi::ProfilerState::KINETO, options_.record_shapes);
      tap::prepareProfiler(config, activities);
      tap::enableProfiler(config, activities);
      detail::kineto_session_started() = true;
      if (cuda_requested_) scopeprof::detail::g_kineto_cuda_started.store(true);
      running_ = true;
    } catch (const std::exception& e) {
      error_ = "could not start the torch profiler: " + torch_profile_result::first_line(e.what());
    } catch (...) {
      error_ = "could not start the torch profiler";
    }
    if (!running_) session_active().store(false);
  }

  static bool torch_has_cuda() noexcept {
    try {
      return torch::cuda::is_available();
    } catch (...) {
      return false;
    }
  }

  torch_profile_options options_;
  bool running_ = false;
  bool cuda_requested_ = false;
  int cupti_probe_ = -1;
  bool held_by_scopeprof_ = false;
  std::string error_;
};

SCOPEPROF_NAMESPACE_END
