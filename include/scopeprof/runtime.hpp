// scopeprof: the run-time API: switches, collect() and reset() (defined in impl/runtime.hpp).
//
//   scopeprof::set_enabled(false);            // scopes cost one load and a branch from now on
//   auto r = scopeprof::collect();            // snapshot of every finished scope, all threads
//   scopeprof::reset();                       // forget what was recorded so far
//
// Environment (read once, at the first scope or the first call of this API):
//   SCOPEPROF=0|1                 start disabled / enabled (default 1)
//   SCOPEPROF_REPORT=stderr|stdout|PATH   report at normal exit: .csv CSV, .trace.json Chrome trace,
//                                 .json JSON, anything else the text tables. Paths (this one and those
//                                 below) may hold {rank} {local_rank} {world_size} {pid} {host}; in a job of
//                                 several ranks a path without {rank} or {pid} gets ".rankR" before its suffix
// Rank: from RANK/WORLD_SIZE/LOCAL_RANK (torchrun), OMPI_COMM_WORLD_*, PMI_RANK/PMI_SIZE, SLURM_PROCID/
//   SLURM_NTASKS/SLURM_LOCALID, the first set; set_rank() overrides them.
//   SCOPEPROF_CLOCK=auto|tsc|steady|cntvct   host clock (default auto: hardware counter where safe)
//   SCOPEPROF_MAX_RECORDS=N       cap on records waiting to be folded, and on an `all` timeline (default 4194304)
//   SCOPEPROF_TRACE=all|off|last:N|steps:A-B   which scopes the timeline keeps (the tables count them all)
//   SCOPEPROF_DRAIN=0|1           the background drain thread that folds scopes as the run goes (default 1)
//   SCOPEPROF_REPORT_EVERY=10s|500ms|2min|100steps   append each interval's tables as a JSON line (default off)
//   SCOPEPROF_REPORT_EVERY_PATH=PATH   where (default: beside SCOPEPROF_REPORT, NAME.intervals.jsonl)
//   SCOPEPROF_DUMP_SIGNAL=USR1|USR2|N   that signal writes dump_trace(SCOPEPROF_DUMP_PATH) (default: none)
//   SCOPEPROF_DUMP_PATH=PATTERN   where (default scopeprof-%p-%n.trace.json: %p process id, %n dump number)
//   SCOPEPROF_DEVICE=0|1          device timing from CUDA events (CUDA builds; default 1)
//   SCOPEPROF_DEVICE_SAMPLE=N     device-time every Nth entry of each call site (default 1: every entry)
//   SCOPEPROF_DEVICE_WAIT_MS=N    longest collect() waits for a stream's newest event (default 5000)
//   SCOPEPROF_CALIBRATE=0|1       measure each device's peak bandwidth and FLOP rate on its first use
//                                 (calibrate_device(); default 0: spec figures only)
//   SCOPEPROF_CUPTI=0|1           CUPTI collector (SCOPEPROF_WITH_CUPTI builds; default 0: CUPTI untouched)
//   SCOPEPROF_CUPTI_LIBRARY=PATH  the libcupti to load (default: one already loaded, else libcupti.so.13)
//   SCOPEPROF_CUPTI_API=0|1       CUPTI records of the launching API calls, for the trace (default 1)
#pragma once

#include <scopeprof/clock.hpp>
#include <scopeprof/config.hpp>
#include <scopeprof/report.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

SCOPEPROF_NAMESPACE_BEGIN

/// @brief True when scopes are being recorded now.
SCOPEPROF_API bool enabled() noexcept;

/// @brief Switch recording on or off at run time (scopes already open still finish and are recorded).
SCOPEPROF_API void set_enabled(bool on) noexcept;

/// @brief Cap on records waiting to be folded into the tables, across all threads (past it, scopes are
/// counted as dropped), and on the timeline's length under SCOPEPROF_TRACE=all (past it, scopes are in the
/// tables only).
SCOPEPROF_API void set_max_records(std::uint64_t n) noexcept;

/// @brief What the timeline keeps from now on, as SCOPEPROF_TRACE does: "all", "off", "last:N" or
/// "steps:A-B". The tables count every scope whatever it is. Scopes that ended before the call were
/// handled by the previous setting; what the previous timeline held is left out of the new one. Returns
/// false (and changes nothing) on a value it does not understand.
SCOPEPROF_API bool set_trace_policy(std::string_view policy) noexcept;

/// @brief Write the report so far, timeline included, to `path` now: collect() and write, nothing reset.
/// The format comes from the suffix as for SCOPEPROF_REPORT (.speedscope.json, .html, .csv, .json; .gz
/// after any of them), and any other path gets a Chrome trace. With SCOPEPROF_TRACE=last:N this is the
/// flight recorder's dump. SCOPEPROF_DUMP_SIGNAL=USR1 makes the program call it from outside.
SCOPEPROF_API write_result dump_trace(std::string_view path) noexcept;

/// @brief Append the tables of each interval of the run to a JSON Lines file as it goes, as
/// SCOPEPROF_REPORT_EVERY does: `every` is "10s", "500ms", "2min", "100steps" (steps of next_step()) or
/// "off"; `path` is the file ("" for the default, beside SCOPEPROF_REPORT; %p is the process id). A scope
/// is in the interval in which its outermost scope ended, so the lines add up to the run's tables. The
/// interval under way when this is called goes into the tables without a line. Returns false (and changes
/// nothing) on a value it does not understand.
SCOPEPROF_API bool set_report_every(std::string_view every, std::string_view path = {}) noexcept;

/// @brief Device-time every Nth entry of every call site (0: host time only, 1: every entry).
/// Applies to sites already seen and to new ones, and replaces every per-name setting. CUDA builds;
/// harmless elsewhere.
SCOPEPROF_API void set_device_sampling(std::uint32_t every_n) noexcept;

/// @brief Device-time every Nth entry of the call sites with this name (0: host only), also of sites with
/// this name first seen later (the name overrides the global setting). Returns how many sites seen so far
/// matched.
SCOPEPROF_API std::size_t set_device_sampling(std::string_view name, std::uint32_t every_n) noexcept;

/// @brief The host clock in use (fixed at start-up).
SCOPEPROF_API clock_kind host_clock() noexcept;

/// @brief Name the calling thread's track in traces and reports: `scopeprof::set_thread_name("loader");`
SCOPEPROF_API void set_thread_name(std::string_view name) noexcept;

/// @brief This process is rank `rank` of `world_size`: overrides what the launcher's environment says, for
/// every output from now on (reports, path templates such as {rank}). False, with a warning, when rank < 0
/// or world_size <= rank; the setting is then unchanged.
SCOPEPROF_API bool set_rank(std::int64_t rank, std::int64_t world_size) noexcept;

/// @brief Step marker, as torch.profiler's step(): ends the current step and begins the next (steps are
/// numbered from 0 across the process: ProfilerStep#N in traces). Call it once per iteration, outside any
/// scope, on the thread that drives the loop: `for (...) { PROF_STEP(); train_one(); }`. Reports give the
/// distribution of host time per step; a step is complete once the next one begins. Lock-free, no
/// allocation but once per 256 steps; a call inside open scopes is recorded and the reports say so.
SCOPEPROF_API void next_step() noexcept;

/// @brief Declare work for the innermost scope open (and recording) on the calling thread: `bytes` moved and
/// `flops` floating-point operations, added to what that scope declared already. For sizes known only
/// inside the block; PROF_SCOPE_WORK declares them at entry. Reports derive achieved GB/s, TFLOP/s and
/// FLOP/byte from it, labelled "declared". A call with no scope open, or with negative, NaN or infinite
/// values, adds nothing and is counted in the report. Lock-free; no allocation in steady state (chunks of 1024 marks are reused).
SCOPEPROF_API void add_work(double bytes, double flops = 0) noexcept;

/// @brief Measure device `device`'s peaks (-1: the calling thread's current device): a device-to-device
/// copy and an FP32 FMA kernel, each timed with CUDA events on a private stream, once per device. Reports
/// then give declared work's rates as a percentage of this "measured" peak beside the "spec" one (from
/// the device's attributes). Waits for its own work only (tens of ms), and runs beside whatever the device
/// still runs: call it while the device is idle (after a cudaDeviceSynchronize()), or its figures and the
/// program's are both disturbed. It can also disturb what is timed right after it (on an H100, tails whose
/// data sat in L2 ran about 1% slower when it came first): for the cleanest figures call it after the work
/// you time and before collect(), which reads them. SCOPEPROF_CALIBRATE=1 does it on each device's first
/// use instead. False, with a warning, where there is no device or a figure could not be measured.
SCOPEPROF_API bool calibrate_device(int device = -1) noexcept;

/// @brief A snapshot of all finished scopes of all threads (running threads keep running; nothing waits
/// for them, and no scope waits for collect()). Never throws: on failure the report is empty and its
/// warnings() say why.
SCOPEPROF_API report collect() noexcept;

/// @brief Forget every finished scope recorded so far (scopes open now are kept and recorded when they end)
/// and give their memory back; threads that have exited are forgotten altogether. Never waits for the GPU.
SCOPEPROF_API void reset() noexcept;

SCOPEPROF_NAMESPACE_END
