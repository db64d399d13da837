// scopeprof: NVTX backend. Every scope pushes and pops a range in the "scopeprof" NVTX domain, with its
// name registered once per call site and a colour that depends only on the name, so Nsight Systems shows
// the same colour for the same block in every run. Compiles to nothing when SCOPEPROF_WITH_NVTX is 0.
#pragma once

#include <scopeprof/config.hpp>
#include <scopeprof/detail/text.hpp>

#include <cstdint>
#include <string_view>

#if SCOPEPROF_WITH_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// A stable ARGB colour for a name, from a palette chosen to stay readable on light and dark timelines.
inline std::uint32_t colour_for_name(std::string_view name) noexcept {
  static constexpr std::uint32_t palette[] = {
      0xFF4E79A7u, 0xFFF28E2Bu, 0xFFE15759u, 0xFF76B7B2u, 0xFF59A14Fu, 0xFFEDC948u, 0xFFB07AA1u, 0xFFFF9DA7u,
      0xFF9C755Fu, 0xFFBAB0ACu, 0xFF1F77B4u, 0xFF2CA02Cu, 0xFFD62728u, 0xFF9467BDu, 0xFF17BECFu, 0xFFBCBD22u,
  };
  return palette[fnv1a(name) % (sizeof palette / sizeof palette[0])];
}

#if SCOPEPROF_WITH_NVTX

/// The per-call-site NVTX data: built once when the site registers, read on every push.
struct nvtx_site {
  nvtxEventAttributes_t attributes{};
};

inline nvtxDomainHandle_t& nvtx_domain_slot() noexcept {
  static nvtxDomainHandle_t domain = nullptr;
  return domain;
}

/// Called once at start-up, before any site registers; loads an attached NVTX tool if there is one.
inline void nvtx_initialize() noexcept { nvtx_domain_slot() = nvtxDomainCreateA("scopeprof"); }

inline void nvtx_register_site(nvtx_site& site, const char* name, std::uint32_t argb) noexcept {
  nvtxEventAttributes_t& a = site.attributes;
  a = nvtxEventAttributes_t{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = argb;
  nvtxStringHandle_t handle = nvtxDomainRegisterStringA(nvtx_domain_slot(), name);
  if (handle != nullptr) {
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = handle;
  } else {  // no tool attached (or it does not register strings): the plain text still works
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
  }
}

SCOPEPROF_ALWAYS_INLINE void nvtx_push(const nvtx_site& site) noexcept {
  nvtxDomainRangePushEx(nvtx_domain_slot(), &site.attributes);
}
SCOPEPROF_ALWAYS_INLINE void nvtx_pop() noexcept { nvtxDomainRangePop(nvtx_domain_slot()); }

#else

struct nvtx_site {};
inline void nvtx_initialize() noexcept {}
inline void nvtx_register_site(nvtx_site&, const char*, std::uint32_t) noexcept {}
SCOPEPROF_ALWAYS_INLINE void nvtx_push(const nvtx_site&) noexcept {}
SCOPEPROF_ALWAYS_INLINE void nvtx_pop() noexcept {}

#endif

}  // namespace detail
SCOPEPROF_NAMESPACE_END
