// scopeprof: kernel names as people read them. CUPTI reports a kernel by its symbol, which for C++ kernels is
// the Itanium ABI mangling (_ZN13scopeprof_gpu11spin_kernelEyPy). These helpers give the three forms that
// Nsight Systems offers for kernels, and the clipping its console tables apply:
//
//   mangled    the symbol exactly as CUPTI gives it. Nsight shows it with the ":mangled" option of its kernel
//              reports (cuda_gpu_kern_sum[:nvtx-name][:base|:mangled], cuda_gpu_trace, ...). Tools that match
//              symbols (nm, cuobjdump, profilers' filters) need this form: keep it in machine-read outputs.
//   demangled  the default name of those reports ("the templated name"): the C++ declaration with return type
//              (templates only), template arguments and parameter types. demangle() below.
//   base       the ":base" option: the kernel function's own identifier, without return type, enclosing
//              namespaces and classes, template arguments and parameters. Nsight's SQLite export stores it
//              as CUPTI_ACTIVITY_KIND_KERNEL.shortName, "Base kernel function name"; names observed there:
//              elementwise_kernel (at::native::elementwise_kernel<...>), device_kernel (cutlass::device_kernel
//              <...>), CatArrayBatchedCopy (at::native::(anonymous namespace)::CatArrayBatchedCopy<...>).
//              base_name() below.
//
// Clipping. Nsight's "column" and "table" formatters (the console output of nsys stats and --stats=true) size
// each column to its widest value but at most 100 characters ("nolimit" lifts the limit); a longer value is
// cut on the right and its last visible character replaced by U+2026 HORIZONTAL ELLIPSIS, so a clipped cell is
// the first 99 characters plus the ellipsis, exactly 100 wide. A value of 100 characters or fewer is shown
// whole. CSV, TSV and JSON output are never clipped. clip_to_width() below; characters are code points.
//
// Sources: NVIDIA Nsight Systems Post-Collection Analysis Guide, "Statistical Reports Shipped With Nsight
// Systems" (the base and mangled arguments) and "Report Formatters Shipped With Nsight Systems" (column/table:
// 100 character limit, an ellipsis marks clipped data, clipping always on the right), and the SQLite export schema
// (demangledName "Kernel function name w/ templates", shortName "Base kernel function name", mangledName
// "Raw C++ mangled kernel function name"). The 99 + ellipsis cut is read off real nsys stats console output;
// that exactly 100 characters stay whole follows from the guide (only data that overflows the width is clipped).
//
// Differences from Nsight, by design: the demangled text comes from the compiler runtime's demangler
// (abi::__cxa_demangle), not NVIDIA's, so template arguments read "4" where Nsight prints "(int)4" and
// parameters keep their substituted types. nvcc's prefix for internal-linkage kernels in relocatable device
// code (__nv_static_<n>__<n characters>_Z...) is dropped before demangling. Where no Itanium demangler exists
// (MSVC) or a name does not demangle, the name is returned unchanged.
#pragma once

#include <scopeprof/config.hpp>

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#ifndef SCOPEPROF_HAVE_CXXABI
#if (defined(__GNUC__) || defined(__clang__)) && defined(__has_include)
#if __has_include(<cxxabi.h>)
#define SCOPEPROF_HAVE_CXXABI 1
#endif
#endif
#endif
#ifndef SCOPEPROF_HAVE_CXXABI
#define SCOPEPROF_HAVE_CXXABI 0
#endif
#if SCOPEPROF_HAVE_CXXABI
#include <cxxabi.h>
#endif

SCOPEPROF_NAMESPACE_BEGIN
namespace detail {

/// Whether demangle() can decode Itanium manglings here (GCC, Clang); false: names pass through unchanged.
inline constexpr bool have_itanium_demangler = SCOPEPROF_HAVE_CXXABI != 0;
/// Nsight's console column limit for automatically sized columns, in characters.
inline constexpr std::size_t nsight_column_width = 100;
/// What Nsight puts in place of the clipped rest of a value: U+2026 HORIZONTAL ELLIPSIS, in UTF-8.
inline constexpr std::string_view clip_marker = "\xE2\x80\xA6";

/// The C++ name behind an Itanium mangling ("_ZN2ns1kEi" -> "ns::k(int)"). Anything else is returned as it is:
/// C kernels ("vectorAdd"), names already demangled, malformed manglings, names holding a NUL byte, and every
/// name where no demangler is available. Nothing inside throws out of it (failures give the input back); only
/// building the returned string can run out of memory, like any function returning std::string.
inline std::string demangle(std::string_view name) {
#if SCOPEPROF_HAVE_CXXABI
  try {
    std::string_view body = name;
    // nvcc -rdc: internal kernels become __nv_static_<n>__<n characters, ending in '_'>_Z...
    constexpr std::string_view nv_static = "__nv_static_";
    if (body.substr(0, nv_static.size()) == nv_static) {
      std::size_t i = nv_static.size(), n = 0;
      while (i < body.size() && body[i] >= '0' && body[i] <= '9' && n < 4096) n = n * 10 + std::size_t(body[i++] - '0');
      if (i > nv_static.size() && body.substr(i, 2) == "__" && i + 2 + n <= body.size())
        body = body.substr(i + 2 + n);
    }
    // Only function and object encodings: the demangler would also read "i" as "int" and "3Foo" as "Foo".
    if (body.size() > 2 && body.substr(0, 2) == "_Z" && body.find('\0') == std::string_view::npos) {
      const std::string terminated(body);  // string_view need not end in NUL
      struct free_buffer {
        void operator()(char* p) const noexcept { std::free(p); }
      };
      int status = -1;
      const std::unique_ptr<char, free_buffer> out(abi::__cxa_demangle(terminated.c_str(), nullptr, nullptr, &status));
      if (status == 0 && out && out.get()[0] != '\0') return std::string(out.get());
    }
  } catch (...) {
  }
#endif
  return std::string(name);
}

/// Nsight's base kernel name: the function's identifier alone. Takes a mangled or a demangled name:
/// "void at::native::(anonymous namespace)::elementwise_kernel<4, F>(int, F)" -> "elementwise_kernel",
/// "_ZN13scopeprof_gpu11spin_kernelEyPy" -> "spin_kernel", "vectorAdd" -> "vectorAdd". Text it cannot
/// take apart (unbalanced brackets) comes back demangled but otherwise whole.
inline std::string base_name(std::string_view name) {
  const std::string full = demangle(name);
  const std::string_view s(full);
  constexpr std::string_view anonymous = "(anonymous namespace)";
  std::size_t end = std::string_view::npos;  // where the parameter list starts
  std::size_t start = 0;                     // just after the last top-level "::" or space
  std::size_t last_open = std::string_view::npos, last_close = std::string_view::npos;  // top-level <...>
  int paren = 0, brace = 0, square = 0, angle = 0;
  for (std::size_t i = 0; i < s.size() && end == std::string_view::npos; ++i) {
    const char c = s[i];
    if (paren == 0 && brace == 0 && square == 0) {
      if (angle == 0) {
        if (c == '(' && s.substr(i, anonymous.size()) == anonymous) {
          i += anonymous.size() - 1;
          continue;
        }
        if (c == '(') {
          end = i;
          continue;
        }
        if (c == ' ') start = i + 1;
        if (c == ':' && i + 1 < s.size() && s[i + 1] == ':') start = ++i + 1;
      }
      if (c == '<') {
        if (angle++ == 0) last_open = i;
        continue;
      }
      if (c == '>' && angle > 0) {
        if (--angle == 0) last_close = i;
        continue;
      }
    }
    if (c == '(') ++paren;
    else if (c == ')' && paren > 0) --paren;
    else if (c == '{') ++brace;
    else if (c == '}' && brace > 0) --brace;
    else if (c == '[') ++square;
    else if (c == ']' && square > 0) --square;
  }
  if (end == std::string_view::npos) {
    if (paren != 0 || brace != 0 || square != 0 || angle != 0) return full;
    end = s.size();
  }
  while (end > start && s[end - 1] == ' ') --end;
  if (end > start && last_open != std::string_view::npos && last_open >= start && last_close == end - 1)
    end = last_open;
  if (end <= start) return full;
  return std::string(s.substr(start, end - start));
}

/// text as Nsight's column formatter shows it in a column `width` characters wide: unchanged when it has at
/// most `width` characters, else its first width - 1 characters and clip_marker. Characters are code points (UTF-8
/// sequences are never split; pass valid UTF-8, e.g. after escaping control characters). width 0 gives "".
inline std::string clip_to_width(std::string_view text, std::size_t width = nsight_column_width) {
  if (width == 0) return std::string();
  std::size_t chars = 0, cut = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0u) == 0x80u) continue;  // continuation byte
    if (chars == width - 1) cut = i;
    if (++chars > width) {
      std::string out(text.substr(0, cut));
      out += clip_marker;
      return out;
    }
  }
  return std::string(text);
}

}  // namespace detail
SCOPEPROF_NAMESPACE_END
