// Configure-time check: do the CUPTI headers found have what the collector reads (CUPTI from CUDA 11.0
// or newer: the Kernel5 / Memcpy4 / Memset3 record layouts and external correlation)? Compiled, not run.
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_version.h>

#if CUPTI_API_VERSION < 13
#error "CUPTI older than CUDA 11.0"
#endif

int scopeprof_cupti_check() {
  CUpti_ActivityKernel5 k{};
  CUpti_ActivityMemcpy4 c{};
  CUpti_ActivityMemset3 s{};
  CUpti_ActivityExternalCorrelation x{};
  return static_cast<int>(k.graphId + c.graphId + s.graphId + x.correlationId) +
         static_cast<int>(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
}
