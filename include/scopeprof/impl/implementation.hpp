// scopeprof: every cold definition, in one place. Included by <scopeprof.hpp> in header-only builds and
// in the translation unit that defines SCOPEPROF_IMPLEMENTATION; never by anything else.
#pragma once

#include <scopeprof/config.hpp>

#if !SCOPEPROF_DETAIL_DEFINE_COLD
#error "<scopeprof/impl/implementation.hpp> is the cold code: include <scopeprof.hpp> instead (see config.hpp)"
#endif

#include <scopeprof/impl/recorder.hpp>
#include <scopeprof/impl/work.hpp>
#include <scopeprof/impl/drain.hpp>
#include <scopeprof/impl/cuda_events.hpp>
#include <scopeprof/impl/cuda_peak.hpp>
#include <scopeprof/impl/cupti.hpp>
#include <scopeprof/impl/report.hpp>
#include <scopeprof/impl/writers.hpp>
#include <scopeprof/impl/runtime.hpp>
