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
//
// The key-averages rows and their table are pure functions of the copied events: see
// <scopeprof/detail/key_averages.hpp>.
#pragma once

#include <scopeprof/backends/cupti.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/key_averages.hpp>
#include <scopeprof/report.hpp>
#include <scopeprof/runtime.hpp>

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/cuda.h>
#include <torch/version.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__linux__) || defined(__APPLE__)
#include <dlfcn.h>
#define SCOPEPROF_TORCH_HAVE_DLSYM 1
#else
#define SCOPEPROF_TORCH_HAVE_DLSYM 0
#endif

SCOPEPROF_NAMESPACE_BEGIN

/// @brief Options of a torch_profile session.
struct torch_profile_options {
  bool cuda = true;            ///< also CUDA activity (kernels, copies, runtime calls) when torch has a CUDA device
  bool record_shapes = false;  ///< record operators' input shapes (to group rows by them)
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
    return detail::key_averages(events_, group_by_shapes);
  }

  /// @brief The evidence paragraph about CUDA: empty when CUDA data is there or was not asked for.
  std::string cuda_evidence_text() const { return detail::cuda_evidence_text(cuda_); }

  /// @brief The key-averages table as text, with its kinds, its repeat marks and its evidence notes.
  std::string table(bool group_by_shapes = false, std::size_t max_rows = 0) const {
    if (!error_.empty()) return "torch profiler session: not recorded: " + error_ + "\n";
    return detail::key_averages_text(events_, cuda_, group_by_shapes && record_shapes_, max_rows);
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
