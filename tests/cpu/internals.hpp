// Tests of internals: <scopeprof.hpp>, plus the internal headers when the cold code is compiled elsewhere
// (scopeprof::scopeprof). In header-only builds (the single-header suite) the umbrella has them all.
#pragma once

#include <scopeprof.hpp>

#if !SCOPEPROF_DETAIL_DEFINE_COLD
#include <scopeprof/backends/cuda_device.hpp>
#include <scopeprof/backends/cupti/collect.hpp>
#include <scopeprof/detail/activity.hpp>
#include <scopeprof/detail/demangle.hpp>
#include <scopeprof/detail/drain.hpp>
#include <scopeprof/detail/env.hpp>
#include <scopeprof/detail/gzip_sink.hpp>
#include <scopeprof/detail/intervals.hpp>
#include <scopeprof/detail/output_path.hpp>
#include <scopeprof/detail/process_identity.hpp>
#include <scopeprof/detail/raw_snapshot.hpp>
#include <scopeprof/detail/report_builder.hpp>
#include <scopeprof/detail/sink.hpp>
#include <scopeprof/detail/snapshot.hpp>
#include <scopeprof/detail/text.hpp>
#include <scopeprof/format/chrome_trace.hpp>
#include <scopeprof/format/csv.hpp>
#include <scopeprof/format/json.hpp>
#include <scopeprof/format/speedscope.hpp>
#include <scopeprof/format/table.hpp>
#endif
