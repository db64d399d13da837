// scopeprof benchmark: the Chrome trace writer against a plain std::to_chars writer of the same events,
// measured in the same run, the gzip writer, and what collect() costs per scope next to the hot path.
// Nothing is asserted about time.
//
//   scopeprof_bench_trace [benchmark flags]     (e.g. --benchmark_repetitions=3)
//
// The report: ~500k scope instances on 4 threads (steps of 1 + 3 + 4 nested scopes), every other one
// device-timed with a span on one of 2 streams. Rows, CPU time per iteration (the median when repeated):
//   trace_string     the writer into a string sink that reuses its buffer, as the baseline does
//   trace_new_string report::chrome_trace(): a new string each time (page faults and growth included)
//   trace_file       report::write_chrome_trace() to a file in /tmp (1 MiB chunks)
//   baseline_to_chars the same scope and device slices with the same fields and flow bindings, the writer's
//                    tables (escaped names, tracks) built beforehand,
//                    appended with std::string::append and std::to_chars into a preallocated string
//   baseline_to_file the baseline's trace, then written to the same file through stdio in 1 MiB chunks, as
//                    trace_file writes (the page-cache copy costs both the same)
//   trace_gzip       report::write_chrome_trace() to a .gz file (SCOPEPROF_WITH_ZLIB builds)
// Then, apart from Google Benchmark: 1M scopes recorded on one thread (PROF_SCOPE, host only), the time
// of the loop and of collect() per scope, three times (the median is printed), with reset() after each.

#include <scopeprof.hpp>

#include "capture_reporter.hpp"
#include "gbench_compat.hpp"

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using scopeprof::device_status;

constexpr std::uint32_t kThreads = 4;
constexpr std::uint32_t kStepsPerThread = 15625;  // 8 scopes a step: 500000 in all
const char* const kFile = "/tmp/scopeprof_bench_trace.trace.json";
const char* const kGzipFile = "/tmp/scopeprof_bench_trace.trace.json.gz";

scopeprof::detail::raw_instance scope_record(std::uint32_t site, std::uint32_t depth, std::int64_t begin,
                                             std::int64_t end, std::uint64_t n) {
  scopeprof::detail::raw_instance x;
  x.site = site;
  x.depth = depth;
  x.host_begin_ns = begin;
  x.host_end_ns = end;
  if (n % 2 == 1) {  // every other scope: a device span on one of two streams
    x.device = device_status::ok;
    x.device_id = 0;
    x.stream = (n / 2) % 2 == 0 ? 0x7f3a40001000ull : 0x7f3a40002000ull;
    x.device_begin_ns = begin + 2500;
    x.device_end_ns = end + 4100;
  }
  return x;
}

/// One thread's steps, in post-order: step { forward { layer x4 }, backward, optimizer }.
void add_steps(scopeprof::detail::raw_thread& th, std::int64_t t, std::uint64_t& n) {
  for (std::uint32_t i = 0; i < kStepsPerThread; ++i) {
    const std::int64_t step_begin = t;
    const std::int64_t fwd_begin = t + 1200;
    t = fwd_begin;
    for (std::uint32_t k = 0; k < 4; ++k) {
      th.records.push_back(scope_record(4 + k, 2, t + 300, t + 9300 + 37 * k, n++));
      t += 10000;
    }
    th.records.push_back(scope_record(1, 1, fwd_begin, t + 800, n++));
    th.records.push_back(scope_record(2, 1, t + 1000, t + 61000, n++));
    th.records.push_back(scope_record(3, 1, t + 62000, t + 70500, n++));
    th.records.push_back(scope_record(0, 0, step_begin, t + 71000, n++));
    t += 73000;
  }
}

scopeprof::report synthetic_report() {
  scopeprof::detail::raw_snapshot s;
  for (const char* name : {"train_step", "forward", "backward", "optimizer.step", "layer[0] attention",
                           "layer[1] mlp \"fused\"", "layer[2] attention", "layer[3] mlp"})
    s.sites.push_back({name, "train.cpp", "train", 1});
  s.origin_ns = 1'000'000'000;
  std::uint64_t n = 0;
  for (std::uint32_t t = 0; t < kThreads; ++t) {
    scopeprof::detail::raw_thread th;
    th.desc.index = t;
    th.desc.os_id = 41000 + t;
    th.desc.name = "worker " + std::to_string(t);
    add_steps(th, s.origin_ns + 1'000'000 + 997 * t, n);
    th.desc.counts = {th.records.size(), th.records.size(), 0, 0};
    s.counts.entered += th.records.size();
    s.counts.recorded += th.records.size();
    s.threads.push_back(std::move(th));
  }
  s.sources.device_valid = true;
  s.sources.device = "synthetic";
  return scopeprof::detail::build_report(std::move(s));
}

const scopeprof::report& the_report() {
  static const scopeprof::report r = synthetic_report();
  return r;
}

// ------------------------------------------------------------------------------------------- the baseline

void plain_uint(std::string& out, std::uint64_t v) {
  char buf[20];
  out.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

/// A time as the trace writes it (1/1024 us, exact decimals), the plain way: one to_chars and a loop.
void plain_units(std::string& out, std::int64_t units) {
  char buf[40];
  char* p = buf;
  std::uint64_t a = static_cast<std::uint64_t>(units);
  if (units < 0) {
    *p++ = '-';
    a = 0 - a;
  }
  p = std::to_chars(p, buf + 20, a >> 10).ptr;
  std::uint64_t frac = (a & 1023u) * 9765625u;  // ten decimals
  if (frac != 0) {
    char digits[10];
    for (int i = 9; i >= 0; --i, frac /= 10) digits[i] = static_cast<char>('0' + frac % 10);
    int n = 10;
    while (digits[n - 1] == '0') --n;
    *p++ = '.';
    for (int i = 0; i < n; ++i) *p++ = digits[i];
  }
  out.append(buf, p);
}

/// The trace's per-scope events (host slice, device slice, flow binding), written the plain way: names
/// escaped and tracks looked up beforehand (the writer's own tables), one append per field.
void plain_trace(const scopeprof::report& r, const scopeprof::detail::trace_tables& t, std::string& out) {
  using namespace scopeprof::detail;
  out.clear();
  out += "{\"traceEvents\":[\n{}";
  const std::int64_t origin = r.origin_ns();
  const auto& in = r.instances();
  for (std::size_t i = 0; i < in.size(); ++i) {
    const auto& s = in[i];
    const std::string& name = t.scope_names[s.site];
    out += ",\n{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":";
    out += name;
    out += t.thread_track[s.thread];
    out += ",\"ts\":";
    const std::int64_t hb = trace_units(s.host_begin_ns - origin);
    plain_units(out, hb);
    out += ",\"dur\":";
    plain_units(out, trace_units(s.host_end_ns - origin) - hb);
    if (t.plan.scope_flow_out[i]) {
      out += ",\"bind_id\":";
      plain_uint(out, trace_scope_flow + i);
      out += ",\"flow_out\":true";
    }
    out += "}";
    if (s.device != device_status::ok) continue;
    out += ",\n{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":";
    out += name;
    out += ",\"pid\":";
    plain_uint(out, static_cast<std::uint64_t>(trace_device_pid(s.device_id)));
    out += ",\"tid\":";
    plain_uint(out, t.span_tid[i]);
    out += ",\"ts\":";
    const std::int64_t db = trace_units(s.device_begin_ns - origin);
    plain_units(out, db);
    out += ",\"dur\":";
    plain_units(out, trace_units(s.device_end_ns - origin) - db);
    if (s.device_begin_ns >= s.host_begin_ns) {
      out += ",\"bind_id\":";
      plain_uint(out, trace_scope_flow + i);
      out += ",\"flow_in\":true";
    }
    out += "}";
  }
  out += "\n]}\n";
}

// ------------------------------------------------------------------------------------------- benchmarks

std::size_t g_trace_bytes = 0, g_plain_bytes = 0, g_gzip_bytes = 0;

void BM_trace_string(benchmark::State& state) {
  const scopeprof::report& r = the_report();
  std::string storage;
  {
    scopeprof::detail::string_sink warm;  // a buffer of the trace's size, touched once, as the baseline's is
    scopeprof::detail::serialize_chrome_trace(r, warm);
    storage = warm.take();
  }
  for (auto _ : state) {
    scopeprof::detail::string_sink sink(std::move(storage));
    scopeprof::detail::serialize_chrome_trace(r, sink);
    storage = sink.take();
    benchmark::DoNotOptimize(storage.data());
  }
  g_trace_bytes = storage.size();
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * storage.size()));
}

void BM_trace_new_string(benchmark::State& state) {
  const scopeprof::report& r = the_report();
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string t = r.chrome_trace();
    bytes = t.size();
    benchmark::DoNotOptimize(t.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

void BM_trace_file(benchmark::State& state) {
  const scopeprof::report& r = the_report();
  for (auto _ : state) {
    const scopeprof::write_result res = r.write_chrome_trace(kFile);
    if (!res) state.SkipWithError(res.message().c_str());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * std::filesystem::file_size(kFile)));
}

void BM_baseline_to_chars(benchmark::State& state) {
  const scopeprof::report& r = the_report();
  // The writer's own tables (names escaped, tracks, flow plan), built once outside the loop: the writer
  // builds them in each serialization, so the baseline is the faster side of that difference.
  const scopeprof::detail::trace_tables t = scopeprof::detail::trace_tables_of(r);
  std::string out;
  out.reserve(std::size_t{256} << 20);
  plain_trace(r, t, out);  // touch the memory once, as a reused buffer is
  for (auto _ : state) {
    plain_trace(r, t, out);
    benchmark::DoNotOptimize(out.data());
  }
  g_plain_bytes = out.size();
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

// The baseline's trace written to the same file the same way the writer writes (stdio, 1 MiB chunks): the
// copy into the page cache costs both sides the same, so (b) compares with this, not with (c).
void BM_baseline_to_file(benchmark::State& state) {
  const scopeprof::report& r = the_report();
  const scopeprof::detail::trace_tables t = scopeprof::detail::trace_tables_of(r);
  std::string out;
  out.reserve(std::size_t{256} << 20);
  plain_trace(r, t, out);
  for (auto _ : state) {
    plain_trace(r, t, out);
    std::FILE* f = std::fopen(kFile, "wb");
    if (f == nullptr) {
      state.SkipWithError("cannot create the file");
      break;
    }
    constexpr std::size_t chunk = std::size_t{1} << 20;
    bool ok = true;
    for (std::size_t at = 0; at < out.size() && ok; at += chunk)
      ok = std::fwrite(out.data() + at, 1, std::min(chunk, out.size() - at), f) == std::min(chunk, out.size() - at);
    ok = std::fclose(f) == 0 && ok;
    if (!ok) state.SkipWithError("write failed");
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * out.size()));
}

#if SCOPEPROF_WITH_ZLIB
void BM_trace_gzip(benchmark::State& state) {
  const scopeprof::report& r = the_report();
  for (auto _ : state) {
    const scopeprof::write_result res = r.write_chrome_trace(kGzipFile);
    if (!res) state.SkipWithError(res.message().c_str());
  }
  g_gzip_bytes = static_cast<std::size_t>(std::filesystem::file_size(kGzipFile));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * r.chrome_trace().size()));
}
#endif

// ------------------------------------------------------------------------------------ collect() per scope

struct collect_cost {
  double hot_ns = 0;      // per scope, the loop that records them
  double collect_ns = 0;  // per scope, collect()
  double instances_ns = 0;  // per scope, the report's first instances() call, which builds them
  double floor_ns = 0;    // per scope, filling a new vector of scope_instance (the report's own array)
};

/// What writing the report's instance array alone costs: a new vector of n scope_instance, each set from
/// its index, in fresh memory as collect() writes it.
double instance_array_ns(std::size_t n) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  std::vector<scopeprof::scope_instance> v;
  v.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    scopeprof::scope_instance s;
    s.host_begin_ns = static_cast<std::int64_t>(i);
    s.host_end_ns = static_cast<std::int64_t>(i) + 10;
    s.host_self_ns = 10;
    v.push_back(s);
  }
  benchmark::DoNotOptimize(v.data());
  const auto t1 = clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n);
}

collect_cost measure_collect(std::size_t n) {
  using clock = std::chrono::steady_clock;
  scopeprof::reset();
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    PROF_SCOPE("bench collect");
    benchmark::DoNotOptimize(i);
  }
  const auto t1 = clock::now();
  collect_cost c;
  {
    const auto t2 = clock::now();
    const scopeprof::report r = scopeprof::collect();
    const auto t3 = clock::now();
    benchmark::DoNotOptimize(r.instances().data());  // built on this first call
    const auto t4 = clock::now();
    if (r.instances().size() != n)
      std::printf("  warning: collect() saw %zu of %zu scopes\n", r.instances().size(), n);
    const auto per_scope = [n](clock::duration d) { return std::chrono::duration<double, std::nano>(d).count() / static_cast<double>(n); };
    c.hot_ns = per_scope(t1 - t0);
    c.collect_ns = per_scope(t3 - t2);
    c.instances_ns = per_scope(t4 - t3);
  }
  scopeprof::reset();
  c.floor_ns = instance_array_ns(n);
  return c;
}

// ------------------------------------------------------------------------------------------- summary

/// Bytes of the trace per host-only and per device-timed scope: each instance's slices and its row of the
/// scopeprofScopes table, written alone.
void bytes_per_scope(double& host_only, double& device_timed) {
  const scopeprof::report& r = the_report();
  const scopeprof::detail::trace_tables t = scopeprof::detail::trace_tables_of(r);
  std::size_t bytes[2] = {0, 0}, count[2] = {0, 0};
  scopeprof::detail::string_sink sink;
  for (std::size_t i = 0; i < r.instances().size(); ++i) {
    const auto& s = r.instances()[i];
    const std::size_t before = sink.size();
    scopeprof::detail::append_trace_scope(sink, t, s, i);
    scopeprof::detail::append_trace_scope_row(sink, t, s, false);
    const int k = s.device == device_status::ok ? 1 : 0;
    bytes[k] += sink.size() - before;
    ++count[k];
  }
  host_only = count[0] ? static_cast<double>(bytes[0]) / static_cast<double>(count[0]) : 0;
  device_timed = count[1] ? static_cast<double>(bytes[1]) / static_cast<double>(count[1]) : 0;
}

void print_writer_summary(const scopeprof_bench::results& res) {
  const scopeprof::report& r = the_report();
  std::size_t device = 0;
  for (const auto& s : r.instances()) device += s.device == device_status::ok;
  const auto mbps = [](double bytes, double ns) { return ns > 0 ? bytes / ns * 1e3 : 0.0; };  // MB/s, 1e6 bytes
  const auto ns_of = [&](const char* name) { return res.count(name) ? res.at(name) : 0.0; };
  const double base = mbps(static_cast<double>(g_plain_bytes), ns_of("baseline_to_chars"));
  const double a = mbps(static_cast<double>(g_trace_bytes), ns_of("trace_string"));
  const double fresh = mbps(static_cast<double>(g_trace_bytes), ns_of("trace_new_string"));
  const double b = mbps(static_cast<double>(g_trace_bytes), ns_of("trace_file"));
  std::printf("\nChrome trace writer: %zu scopes on %u threads (%zu device-timed, 2 streams), trace %.1f MB "
              "(baseline %.1f MB); CPU time:\n",
              r.instances().size(), kThreads, device, static_cast<double>(g_trace_bytes) / 1e6,
              static_cast<double>(g_plain_bytes) / 1e6);
  std::printf("  (a) writer -> string sink       %8.1f MB/s   (a)/(c) = %.2f\n", a, base > 0 ? a / base : 0);
  const double base_file = mbps(static_cast<double>(g_plain_bytes), ns_of("baseline_to_file"));
  std::printf("  (b) writer -> file in /tmp      %8.1f MB/s   (b)/(c') = %.2f\n", b, base_file > 0 ? b / base_file : 0);
  std::printf("  (c) baseline std::to_chars      %8.1f MB/s\n", base);
  std::printf("  (c') baseline -> file in /tmp   %8.1f MB/s   (the same bytes through stdio, as (b) writes)\n", base_file);
  std::printf("      report::chrome_trace()      %8.1f MB/s   (a new string each time) / (c) = %.2f\n", fresh,
              base > 0 ? fresh / base : 0);
  std::string trace = r.chrome_trace(), plain;
  plain_trace(r, scopeprof::detail::trace_tables_of(r), plain);
  // The scope slices: from the first slice to the end of the events (the writer then adds its table).
  const std::size_t tp = trace.find(",\n{\"ph\":\"X\""), te = trace.find("\n],\"scopeprofScopes\"");
  const std::size_t pp = plain.find(",\n{\"ph\":\"X\""), pe = plain.rfind("\n]}");
  const bool same = tp != std::string::npos && te != std::string::npos && pp != std::string::npos &&
                    trace.compare(tp, te - tp, plain, pp, pe - pp) == 0;
  std::printf("  the baseline's events are the writer's, byte for byte: %s\n", same ? "yes" : "NO");
  double host_only = 0, device_timed = 0;
  bytes_per_scope(host_only, device_timed);
  std::printf("  trace bytes per host-only scope %.1f, per device-timed scope %.1f (host slice, device slice with\n"
              "  its flow binding, and the scope's row of the scopeprofScopes table)\n", host_only, device_timed);
  if (g_gzip_bytes != 0)
    std::printf("  (d) gzip writer (zlib level %d)  %8.1f MB/s of trace, %.1f MB written, ratio %.1fx\n",
                scopeprof::detail::gzip_sink::level,
                mbps(static_cast<double>(g_trace_bytes), ns_of("trace_gzip")), static_cast<double>(g_gzip_bytes) / 1e6,
                static_cast<double>(g_trace_bytes) / static_cast<double>(g_gzip_bytes));
  else
    std::printf("  (d) gzip writer: not built (SCOPEPROF_WITH_ZLIB=0)\n");
}

void print_collect_summary() {
  constexpr std::size_t n = 1'000'000;
  std::vector<collect_cost> runs;
  for (int i = 0; i < 3; ++i) runs.push_back(measure_collect(n));
  const auto median = [&](double collect_cost::*field) {
    std::vector<double> v;
    for (const auto& c : runs) v.push_back(c.*field);
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double hot = median(&collect_cost::hot_ns), coll = median(&collect_cost::collect_ns);
  const double array_ns = median(&collect_cost::floor_ns), inst = median(&collect_cost::instances_ns);
  std::printf("\ncollect() per scope: %zu scopes on one thread (PROF_SCOPE, host only), median of 3, wall time:\n", n);
  std::printf("  collect()  %8.1f ns/scope\n  hot path   %8.1f ns/scope\n  collect/hot = %.1fx\n", coll, hot,
              hot > 0 ? coll / hot : 0);
  std::printf("  then the first instances() call, which builds them: %.1f ns/scope; collect() and it together "
              "%.1fx the hot path\n", inst, hot > 0 ? (coll + inst) / hot : 0);
  std::printf("  a new vector of scope_instance (%zu B each), filled: %.1f ns/scope = %.1fx the hot path\n",
              sizeof(scopeprof::scope_instance), array_ns, hot > 0 ? array_ns / hot : 0);
}

}  // namespace

int main(int argc, char** argv) {
  if (!scopeprof_bench::initialize(argc, argv)) return 1;

  benchmark::DoNotOptimize(the_report().instances().data());  // built, instances too, before any timing
  benchmark::RegisterBenchmark("baseline_to_chars", BM_baseline_to_chars)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("trace_string", BM_trace_string)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("trace_new_string", BM_trace_new_string)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("trace_file", BM_trace_file)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("baseline_to_file", BM_baseline_to_file)->Unit(benchmark::kMillisecond);
#if SCOPEPROF_WITH_ZLIB
  benchmark::RegisterBenchmark("trace_gzip", BM_trace_gzip)->Unit(benchmark::kMillisecond);
#endif

  scopeprof_bench::results res;
  scopeprof_bench::capture_reporter reporter(res, "", isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_Defaults
                                                                           : benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  std::error_code ec;
  std::filesystem::remove(kFile, ec);
  std::filesystem::remove(kGzipFile, ec);
  std::fflush(stdout);
  print_writer_summary(res);
  print_collect_summary();
  return 0;
}
