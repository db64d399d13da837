// scopeprof: start-up, run-time switches, collect() and reset().
//
//   scopeprof::set_enabled(false);            // scopes cost one load and a branch from now on
//   auto r = scopeprof::collect();            // snapshot of every finished scope, all threads
//   scopeprof::reset();                       // forget what was recorded so far
//
// Environment (read once, at the first scope or the first call of this API):
//   SCOPEPROF=0|1                 start disabled / enabled (default 1)
//   SCOPEPROF_REPORT=stderr|stdout|PATH   report at normal exit: .csv CSV, .trace.json Chrome trace,
//                                 .json JSON, anything else the text tables
//   SCOPEPROF_CLOCK=auto|tsc|steady|cntvct   host clock (default auto: hardware counter where safe)
//   SCOPEPROF_MAX_RECORDS=N       cap on records held in memory (default 4194304, 24 bytes each)
//   SCOPEPROF_DEVICE=0|1          device timing from CUDA events (CUDA builds; default 1)
//   SCOPEPROF_DEVICE_SAMPLE=N     device-time every Nth entry of each call site (default 1: every entry)
//   SCOPEPROF_DEVICE_WAIT_MS=N    longest collect() waits for a stream's newest event (default 5000)
//   SCOPEPROF_CUPTI=0|1           CUPTI collector (SCOPEPROF_WITH_CUPTI builds; default 0: CUPTI untouched)
//   SCOPEPROF_CUPTI_LIBRARY=PATH  the libcupti to load (default: one already loaded, else libcupti.so.13)
#pragma once

#include <scopeprof/backends/cuda_events.hpp>
#include <scopeprof/backends/cupti.hpp>
#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/detail/log.hpp>
#include <scopeprof/detail/recorder.hpp>
#include <scopeprof/format/chrome_trace.hpp>
#include <scopeprof/format/csv.hpp>
#include <scopeprof/format/json.hpp>
#include <scopeprof/format/table.hpp>
#include <scopeprof/report.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace scopeprof {
namespace detail {

inline std::string env_string(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

inline std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return s;
}

/// The thread's device records from its reset floor up to `count` (published), in order.
inline void device_records_of(thread_buffer& b, std::uint64_t count, std::vector<device_record*>& out) {
  std::lock_guard<std::mutex> lock(b.mu);
  for (device_chunk* ch : b.device_chunks)
    for (std::uint64_t i = std::max(b.device_floor, ch->first); i < std::min<std::uint64_t>(count, ch->first + device_chunk::capacity); ++i)
      out.push_back(&ch->records[i - ch->first]);
}

/// Warnings quote the value with control characters escaped, so a value cannot forge lines.
inline std::string quoted(const std::string& value) { return "'" + display_name(value) + "'"; }

/// Parse a 0/1 style switch; a malformed value gives one warning and the default.
inline bool parse_switch(const char* name, const std::string& value, bool fallback) {
  const std::string v = lower(value);
  if (v.empty()) return fallback;
  if (v == "0" || v == "off" || v == "false" || v == "no") return false;
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  warn(std::string(name) + "=" + quoted(value) + " is not one of 0, 1, on, off, true, false; using " + (fallback ? "1" : "0"));
  return fallback;
}

/// Parse a positive integer (optional k/m/g suffix, powers of 1024); malformed: one warning, the default.
inline std::uint64_t parse_count(const char* name, const std::string& value, std::uint64_t fallback) {
  if (value.empty()) return fallback;
  std::uint64_t v = 0;
  std::size_t i = 0;
  for (; i < value.size() && value[i] >= '0' && value[i] <= '9'; ++i) {
    const auto digit = static_cast<std::uint64_t>(value[i] - '0');
    if (v > (UINT64_MAX - digit) / 10) { i = 0; break; }
    v = v * 10 + digit;
  }
  std::uint64_t mult = 1;
  if (i > 0 && i + 1 == value.size()) {
    const char s = static_cast<char>(value[i] | 0x20);
    mult = s == 'k' ? 1024u : s == 'm' ? 1024u * 1024u : s == 'g' ? 1024u * 1024u * 1024u : 0u;
    if (mult) ++i;
  }
  if (i == 0 || i != value.size() || v == 0 || mult == 0 || v > UINT64_MAX / mult) {
    warn(std::string(name) + "=" + quoted(value) + " is not a positive whole number; using " + std::to_string(fallback));
    return fallback;
  }
  return v * mult;
}

inline clock_kind parse_clock(const std::string& value) {
  const std::string v = lower(value);
  const clock_kind best = best_clock_kind();
  if (v.empty() || v == "auto") return best;
  clock_kind asked;
  if (v == "steady") asked = clock_kind::steady;
  else if (v == "tsc") asked = clock_kind::tsc;
  else if (v == "cntvct") asked = clock_kind::cntvct;
  else {
    warn("SCOPEPROF_CLOCK=" + quoted(value) + " is not one of auto, tsc, steady, cntvct; using " + to_string(best));
    return best;
  }
  if (!clock_kind_available(asked)) {
    warn(std::string("SCOPEPROF_CLOCK=") + quoted(value) + ": " + to_string(asked) + " is not available on this machine; using " +
         to_string(best));
    return best;
  }
  return asked;
}

void report_at_exit() noexcept;

inline std::once_flag& init_flag() {
  static std::once_flag f;
  return f;
}

inline void initialise() noexcept {
  try {
    std::call_once(init_flag(), [] {
      registry& r = the_registry();
      const bool on = parse_switch("SCOPEPROF", env_string("SCOPEPROF"), true);
      g_clock_kind = parse_clock(env_string("SCOPEPROF_CLOCK"));
      r.max_records.store(parse_count("SCOPEPROF_MAX_RECORDS", env_string("SCOPEPROF_MAX_RECORDS"),
                                      r.max_records.load(std::memory_order_relaxed)),
                          std::memory_order_relaxed);
      g_default_device_every.store(
          static_cast<std::uint32_t>(std::min<std::uint64_t>(
              parse_count("SCOPEPROF_DEVICE_SAMPLE", env_string("SCOPEPROF_DEVICE_SAMPLE"), 1), UINT32_MAX)),
          std::memory_order_relaxed);
      if (!parse_switch("SCOPEPROF_DEVICE", env_string("SCOPEPROF_DEVICE"), true))
        g_device_timing.store(device_timing_off, std::memory_order_relaxed);
#if SCOPEPROF_WITH_CUDA
      the_devices().wait_ms = parse_count("SCOPEPROF_DEVICE_WAIT_MS", env_string("SCOPEPROF_DEVICE_WAIT_MS"), 5000);
#endif
      r.clock_start = read_anchor();
      nvtx_initialize();
      r.report_target = env_string("SCOPEPROF_REPORT");
      if (!r.report_target.empty()) std::atexit(&report_at_exit);
      const bool cupti = parse_switch("SCOPEPROF_CUPTI", env_string("SCOPEPROF_CUPTI"), false);
#if SCOPEPROF_WITH_CUPTI
      if (cupti) cupti_start();
#else
      if (cupti) warn("SCOPEPROF_CUPTI=1: this program was built without the CUPTI collector (SCOPEPROF_WITH_CUPTI=0)");
#endif
      g_state.store(on ? state_on : state_off, std::memory_order_release);
    });
  } catch (...) {
    // call_once itself failed (out of resources): stay off rather than half-initialised.
    std::uint8_t expected = state_uninitialised;
    g_state.compare_exchange_strong(expected, state_off);
  }
}

/// Read one thread's counters as one consistent set, without stopping the owner. `recorded` and
/// `dropped` are read first (acquire): every scope they count was entered before, so the `entered` read
/// afterwards includes it, and in_flight = entered - recorded - dropped is never negative.
struct thread_counters {
  std::uint64_t entered, recorded, dropped;
};
inline thread_counters read_counters(const thread_buffer& b) noexcept {
  const std::uint64_t recorded = b.recorded.load(std::memory_order_acquire);
  const std::uint64_t dropped = b.dropped.load(std::memory_order_acquire);
  const std::uint64_t entered = b.entered.load(std::memory_order_acquire);
  return {entered, recorded, dropped};
}

}  // namespace detail

/// @brief True when scopes are being recorded now.
inline bool enabled() noexcept {
  detail::initialise();
  return detail::g_state.load(std::memory_order_acquire) == detail::state_on;
}

/// @brief Switch recording on or off at run time (scopes already open still finish and are recorded).
inline void set_enabled(bool on) noexcept {
#if SCOPEPROF_ENABLED
  detail::initialise();
  detail::g_state.store(on ? detail::state_on : detail::state_off, std::memory_order_release);
#else
  (void)on;
#endif
}

/// @brief Cap on records held in memory across all threads; past it, scopes are counted as dropped.
inline void set_max_records(std::uint64_t n) noexcept {
  detail::initialise();
  detail::registry& r = detail::the_registry();
  r.max_records.store(n, std::memory_order_relaxed);
  r.alloc_epoch.fetch_add(1, std::memory_order_acq_rel);  // threads that found the buffer full may try again
}

/// @brief Device-time every Nth entry of every call site (0: host time only, 1: every entry).
/// Applies to sites already seen and to new ones, and replaces every per-name setting. CUDA builds;
/// harmless elsewhere.
inline void set_device_sampling(std::uint32_t every_n) noexcept {
  detail::initialise();
  detail::g_default_device_every.store(every_n, std::memory_order_relaxed);
  detail::registry& r = detail::the_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.named_device_every.clear();
  for (auto& s : r.sites)
    if (!s->host_only) s->device_every.store(every_n, std::memory_order_relaxed);
}

/// @brief Device-time every Nth entry of the call sites with this name (0: host only), also of sites with
/// this name first seen later (the name overrides the global setting). Returns how many sites seen so far
/// matched.
inline std::size_t set_device_sampling(std::string_view name, std::uint32_t every_n) noexcept {
  detail::initialise();
  detail::registry& r = detail::the_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  try {
    r.named_device_every[detail::truncate_name(name)] = every_n;
  } catch (...) {
  }
  std::size_t n = 0;
  for (auto& s : r.sites)
    if (s->name == name && !s->host_only) {
      s->device_every.store(every_n, std::memory_order_relaxed);
      ++n;
    }
  return n;
}

/// @brief The host clock in use (fixed at start-up).
inline clock_kind host_clock() noexcept {
  detail::initialise();
  return detail::g_clock_kind;
}

/// @brief Name the calling thread's track in traces and reports: `scopeprof::set_thread_name("loader");`
inline void set_thread_name(std::string_view name) noexcept {
#if SCOPEPROF_ENABLED
  detail::initialise();
  detail::thread_buffer* b = detail::t_buffer;
  if (b == nullptr) b = detail::attach_thread();
  if (b == nullptr) return;
  try {
    std::lock_guard<std::mutex> lock(b->mu);
    b->name = detail::truncate_name(name);
  } catch (...) {
  }
#else
  (void)name;
#endif
}

/// @brief A snapshot of all finished scopes of all threads (running threads keep running; nothing waits
/// for them). Never throws: on failure the report is empty and its warnings() say why.
inline report collect() noexcept {
  using namespace detail;
  try {
    detail::raw_snapshot raw;
#if SCOPEPROF_ENABLED
    initialise();
    registry& r = the_registry();
    // The tick rate comes from the whole run so far; give it at least 20 ms to be accurate.
    clock_anchor end = read_anchor();
    if (g_clock_kind != clock_kind::steady && end.ns - r.clock_start.ns < 20'000'000) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(20'000'000 - (end.ns - r.clock_start.ns)));
      end = read_anchor();
    }
    const tick_converter conv = tick_converter::between(g_clock_kind, r.clock_start, end);
    raw.origin_ns = r.clock_start.ns;
    {
      char buf[160];
      if (g_clock_kind == clock_kind::steady)
        std::snprintf(buf, sizeof buf, "%s", to_string(g_clock_kind));
      else
        std::snprintf(buf, sizeof buf, "%s at %.4f GHz, calibrated against steady_clock over %.3f s",
                      to_string(g_clock_kind), 1.0 / conv.ns_per_tick, static_cast<double>(end.ns - r.clock_start.ns) / 1e9);
      raw.sources.host = buf;
    }
    std::lock_guard<std::mutex> lock(r.mu);
    // Device records: resolve what is pending (bulk, bounded wait), then attach them below.
    std::vector<std::vector<device_record*>> device_by_thread(r.threads.size());
    {
      std::vector<device_record*> all;
      for (std::size_t t = 0; t < r.threads.size(); ++t) {
        thread_buffer* b = r.threads[t];
        device_records_of(*b, b->device_recorded.load(std::memory_order_acquire), device_by_thread[t]);
        all.insert(all.end(), device_by_thread[t].begin(), device_by_thread[t].end());
      }
      resolve_device_records(all);
    }
#if SCOPEPROF_WITH_CUDA
    raw.sources.device = device_evidence(raw.sources.device_valid);
    raw.sources.torch = torch_evidence_text();
#endif
    raw.sites.reserve(r.sites.size());
    for (const auto& s : r.sites) raw.sites.push_back({s->name, s->file, s->function, s->line});
    std::vector<std::pair<std::uint64_t, std::uint64_t>> record_ranges;  // {floor, recorded} per thread
    for (std::size_t ti = 0; ti < r.threads.size(); ++ti) {
      thread_buffer* b = r.threads[ti];
      const thread_counters c = read_counters(*b);
      detail::raw_thread t;
      std::vector<const chunk*> chunks;
      {
        std::lock_guard<std::mutex> block(b->mu);
        chunks.assign(b->chunks.begin(), b->chunks.end());
        t.desc.name = b->name;
        t.desc.counts.recorded = c.recorded - b->recorded_floor;
        t.desc.counts.dropped = c.dropped - b->dropped_floor;
        t.desc.counts.entered = c.entered - b->entered_floor;
        t.desc.counts.in_flight = t.desc.counts.entered - t.desc.counts.recorded - t.desc.counts.dropped;
        const std::uint64_t from = b->recorded_floor;
        record_ranges.emplace_back(from, c.recorded);
        t.records.reserve(static_cast<std::size_t>(c.recorded - from));
        for (const chunk* ch : chunks) {
          const std::uint64_t lo = std::max(from, ch->first);
          const std::uint64_t hi = std::min<std::uint64_t>(c.recorded, ch->first + ch->capacity);
          for (std::uint64_t i = lo; i < hi; ++i) {
            const record& rec = ch->records()[i - ch->first];
            detail::raw_instance x;
            x.site = rec.site;
            x.depth = rec.depth;
            x.host_begin_ns = conv.to_ns(rec.begin_ticks);
            x.host_end_ns = conv.to_ns(rec.end_ticks);
            t.records.push_back(x);
          }
        }
      }
      for (const device_record* d : device_by_thread[ti]) {
        if (d->host_index == no_record || d->host_index < b->recorded_floor || d->host_index >= c.recorded) continue;
        detail::raw_instance& x = t.records[static_cast<std::size_t>(d->host_index - b->recorded_floor)];
        x.device_id = d->device;
        x.stream = reinterpret_cast<std::uintptr_t>(d->stream);
        switch (d->state) {
          case dev_resolved:
            x.device = device_status::ok;
            x.device_begin_ns = d->begin_ns;
            x.device_end_ns = d->end_ns;
            break;
          case dev_captured: x.device = device_status::captured; break;
          case dev_invalid: x.device = device_status::invalid; break;
          default: break;  // still running: not timed in this report
        }
      }
      t.desc.index = b->ordinal;
      t.desc.os_id = b->os_id;
      t.desc.exited = b->exited;
      raw.counts.entered += t.desc.counts.entered;
      raw.counts.recorded += t.desc.counts.recorded;
      raw.counts.dropped += t.desc.counts.dropped;
      raw.counts.in_flight += t.desc.counts.in_flight;
      raw.threads.push_back(std::move(t));
    }
    cupti_collect(raw, r.threads, record_ranges);
    const std::uint64_t unattached = r.unattached_drops.load(std::memory_order_relaxed) - r.unattached_floor;
    if (unattached) {
      raw.counts.entered += unattached;
      raw.counts.dropped += unattached;
      raw.warnings += "  warning: " + std::to_string(unattached) +
                      " scopes ran on threads without a record buffer (out of memory, or in thread exit) and were dropped\n";
    }
    if (raw.counts.dropped)
      raw.warnings += "  warning: " + std::to_string(raw.counts.dropped) +
                      " finished scopes were dropped because the record buffer was full (cap " +
                      std::to_string(r.max_records.load()) + " records; raise SCOPEPROF_MAX_RECORDS or call reset())\n";
#else
    raw.sources.host = "compiled out (SCOPEPROF_DISABLE)";
    raw.sources.device = "compiled out (SCOPEPROF_DISABLE)";
#endif
    return report::from_raw(std::move(raw));
  } catch (const std::exception& e) {
    detail::raw_snapshot raw;
    raw.warnings = std::string("  warning: collect() failed: ") + e.what() + "\n";
    try {
      return report::from_raw(std::move(raw));
    } catch (...) {
      return report();
    }
  }
}

/// @brief Forget every finished scope recorded so far (scopes open now are kept and recorded when they end)
/// and give their memory back.
inline void reset() noexcept {
#if SCOPEPROF_ENABLED
  using namespace detail;
  initialise();
  registry& r = the_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.unattached_floor = r.unattached_drops.load(std::memory_order_relaxed);
  for (thread_buffer* b : r.threads) {
    const thread_counters c = read_counters(*b);
    // Device records all belong to finished scopes, so all are discarded: resolve them first so their
    // events go back to the pool.
    const std::uint64_t device_count = b->device_recorded.load(std::memory_order_acquire);
    std::vector<device_record*> discarded;
    try {
      device_records_of(*b, device_count, discarded);
    } catch (...) {
    }
    resolve_device_records(discarded);
    std::lock_guard<std::mutex> block(b->mu);
    b->device_floor = device_count;
    {
      std::size_t n = 0;
      if (b->exited) n = b->device_chunks.size();
      else
        while (n + 1 < b->device_chunks.size() && b->device_chunks[n]->first + device_chunk::capacity <= device_count) ++n;
      for (std::size_t i = 0; i < n; ++i) {
        delete b->device_chunks[i];
        r.device_records_held.fetch_sub(device_chunk::capacity, std::memory_order_relaxed);
      }
      b->device_chunks.erase(b->device_chunks.begin(), b->device_chunks.begin() + static_cast<std::ptrdiff_t>(n));
    }
    b->recorded_floor = c.recorded;
    b->dropped_floor = c.dropped;
    b->entered_floor = c.recorded + c.dropped;  // scopes open now stay counted as entered
    // Free every chunk that holds only discarded records, except the one the owner is writing to; an
    // exited thread writes no more, so all of its chunks go.
    std::size_t n = 0;
    if (b->exited) n = b->chunks.size();
    else
      while (n + 1 < b->chunks.size() && b->chunks[n]->first + b->chunks[n]->capacity <= c.recorded) ++n;
    for (std::size_t i = 0; i < n; ++i) return_chunk(r, b->chunks[i]);
    b->chunks.erase(b->chunks.begin(), b->chunks.begin() + static_cast<std::ptrdiff_t>(n));
  }
  cupti_reset();
  r.alloc_epoch.fetch_add(1, std::memory_order_acq_rel);
#endif
}

namespace detail {

inline bool ends_with(const std::string& s, const char* suffix) {
  const std::string t(suffix);
  return s.size() >= t.size() && lower(s.substr(s.size() - t.size())) == t;
}

/// SCOPEPROF_REPORT at normal exit. Errors are printed, never raised.
inline void report_at_exit() noexcept {
  try {
    const std::string target = the_registry().report_target;
    const report rep = collect();
    if (target == "stderr") {
      rep.print(std::cerr);
      return;
    }
    if (target == "stdout") {
      rep.print(std::cout);
      std::cout.flush();
      return;
    }
    write_result res;
    if (ends_with(target, ".csv")) res = rep.write_csv(target);
    else if (ends_with(target, ".trace.json")) res = rep.write_chrome_trace(target);
    else if (ends_with(target, ".json")) res = rep.write_json(target);
    else res = detail::write_file(target, rep.to_string(), "text report");
    if (!res) {
      const std::string& m = res.message();
      warn("SCOPEPROF_REPORT: " + (m.rfind("scopeprof: ", 0) == 0 ? m.substr(11) : m));
    }
  } catch (...) {
    warn("SCOPEPROF_REPORT: the report at exit failed (out of memory)");
  }
}

}  // namespace detail
}  // namespace scopeprof
