// Kernel names: demangling, Nsight's base kernel name and Nsight's console clipping. The mangled names are the
// kernel symbols nvcc 13.0 wrote for small kernels (nvcc -std=c++17 --extended-lambda -arch=sm_90 -cubin, read
// with readelf -s): namespaced, templated, anonymous namespace, extended __device__ lambda, __grid_constant__
// parameter, non-type template arguments, function pointer parameter, CUTLASS-like nesting, extern "C", and
// internal kernels under -rdc=true.
#include "internals.hpp"
#if __has_include(<scopeprof/detail/demangle.hpp>)
#include <scopeprof/detail/demangle.hpp>
#endif

#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <string_view>
#include "doctest_checks.hpp"  // last: doctest's CHECK, not glog's (unity build)

namespace {

using scopeprof::detail::base_name;
using scopeprof::detail::clip_to_width;
using scopeprof::detail::demangle;

// The expected C++ text is what the GNU runtime's demangler prints (GCC and Clang with libstdc++); other
// runtimes spell some types differently, so there only the base names are compared.
#if defined(__GLIBCXX__)
constexpr bool gnu_text = scopeprof::detail::have_itanium_demangler;
#else
constexpr bool gnu_text = false;
#endif

const char* const cutlass_mangled =
    "_ZN7cutlass6KernelINS_4gemm6kernel4GemmINS1_11threadblock13MmaMultistageINS_9GemmShapeILi128ELi128EL"
    "i32EEENS6_ILi64ELi64ELi32EEENS6_ILi16ELi8ELi16EEENS_14half_t_wrapperIsEENS_6layout8RowMajorESB_NSC_1"
    "1ColumnMajorENS_4arch4Sm90ELi3EEENS1_8epilogue17LinearCombinationIS8_fLi8EEENS4_30GemmIdentityThread"
    "blockSwizzleILi8EEELb0EEEEEvNT_6ParamsE";
// 969 characters; the first line is exactly 100.
const char* const cutlass_demangled =
    "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaMultistage<cutlass::"
    "GemmShape<128, 128, 32>, cutlass::GemmShape<64, 64, 32>, cutlass::GemmShape<16, 8, 16>, cutlass::hal"
    "f_t_wrapper<short>, cutlass::layout::RowMajor, cutlass::half_t_wrapper<short>, cutlass::layout::Colu"
    "mnMajor, cutlass::arch::Sm90, 3>, cutlass::gemm::epilogue::LinearCombination<cutlass::GemmShape<64, "
    "64, 32>, float, 8>, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<8>, false> >(cutlass:"
    ":gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaMultistage<cutlass::GemmShape<128, 128, 32>, cutl"
    "ass::GemmShape<64, 64, 32>, cutlass::GemmShape<16, 8, 16>, cutlass::half_t_wrapper<short>, cutlass::"
    "layout::RowMajor, cutlass::half_t_wrapper<short>, cutlass::layout::ColumnMajor, cutlass::arch::Sm90,"
    " 3>, cutlass::gemm::epilogue::LinearCombination<cutlass::GemmShape<64, 64, 32>, float, 8>, cutlass::"
    "gemm::threadblock::GemmIdentityThreadblockSwizzle<8>, false>::Params)";

std::string repeat(std::string_view s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

// demangle gives the C++ text, base_name the identifier, from the mangled and from the demangled form alike.
void check_kernel(const char* mangled, const char* demangled, const char* base) {
  if (!scopeprof::detail::have_itanium_demangler) {
    CHECK(demangle(mangled) == mangled);
    return;
  }
  if (gnu_text) CHECK(demangle(mangled) == demangled);
  CHECK(base_name(mangled) == base);
  CHECK(base_name(demangled) == base);
  CHECK(demangle(demangled) == demangled);  // demangling twice changes nothing
}

}  // namespace

TEST_CASE("demangle and base_name turn nvcc kernel symbols into Nsight's demangled and base names") {
  SUBCASE("namespaced kernel") {
    check_kernel("_ZN13scopeprof_gpu11spin_kernelEyPy",
                 "scopeprof_gpu::spin_kernel(unsigned long long, unsigned long long*)", "spin_kernel");
  }
  SUBCASE("function templates, one per instantiation") {
    check_kernel("_ZN13scopeprof_gpu5scaleIfEEvPT_S1_i", "void scopeprof_gpu::scale<float>(float*, float, int)",
                 "scale");
    check_kernel("_ZN13scopeprof_gpu5scaleIdEEvPT_S1_i", "void scopeprof_gpu::scale<double>(double*, double, int)",
                 "scale");
  }
  SUBCASE("anonymous namespace") {
    check_kernel("_ZN36_GLOBAL__N__932ef5e0_4_k_cu_c4bb472813hidden_kernelEPi",
                 "(anonymous namespace)::hidden_kernel(int*)", "hidden_kernel");
  }
  SUBCASE("extended __device__ lambda as template argument") {
    check_kernel("_Z12apply_kernelIZ13launch_lambdaPfiEUliiE_EvT_i",
                 "void apply_kernel<launch_lambda(float*, int)::{lambda(int, int)#1}>(launch_lambda(float*, int)::"
                 "{lambda(int, int)#1}, int)",
                 "apply_kernel");
    check_kernel("_ZN2at6native36_GLOBAL__N__932ef5e0_4_k_cu_c4bb472829vectorized_elementwise_kernelILi4EZNS0_11"
                 "launch_elemEPfiEUliE_EEviT0_",
                 "void at::native::(anonymous namespace)::vectorized_elementwise_kernel<4, at::native::launch_elem("
                 "float*, int)::{lambda(int)#1}>(int, at::native::launch_elem(float*, int)::{lambda(int)#1})",
                 "vectorized_elementwise_kernel");
  }
  SUBCASE("__grid_constant__ parameter") {
    check_kernel("_Z17grid_const_kernel6Params", "grid_const_kernel(Params)", "grid_const_kernel");
  }
  SUBCASE("non-type template arguments") {
    check_kernel("_Z5tiledILi128ELb1EEvPf", "void tiled<128, true>(float*)", "tiled");
  }
  SUBCASE("function pointer and nested class template parameters") {
    check_kernel("_ZN3ops12fnptr_kernelEPFviENS_5OuterIiE5InnerIfEE",
                 "ops::fnptr_kernel(void (*)(int), ops::Outer<int>::Inner<float>)", "fnptr_kernel");
  }
  SUBCASE("CUTLASS-like nested templates") {
    check_kernel(cutlass_mangled, cutlass_demangled, "Kernel");
    if (gnu_text) CHECK(demangle(cutlass_mangled).size() == 969);
  }
  SUBCASE("extern \"C\" kernel") { check_kernel("vectorAdd", "vectorAdd", "vectorAdd"); }
}

TEST_CASE("demangle drops nvcc's __nv_static_ prefix of internal kernels in relocatable device code") {
  if (!gnu_text) return;
  CHECK(demangle("__nv_static_25__06838a90_4_s_cu_2c0a7836__Z13static_kernelPi") == "static_kernel(int*)");
  CHECK(demangle("__nv_static_25__06838a90_4_s_cu_2c0a7836__ZN2ns5otherEPf") == "ns::other(float*)");
  CHECK(base_name("__nv_static_25__06838a90_4_s_cu_2c0a7836__ZN2ns5otherEPf") == "other");
  // Prefixes that do not parse are kept, with the rest of the name.
  CHECK(demangle("__nv_static___Z3fooi") == "__nv_static___Z3fooi");
  CHECK(demangle("__nv_static_99__06838a90__Z3fooi") == "__nv_static_99__06838a90__Z3fooi");
  CHECK(demangle("__nv_static_25__06838a90_4_s_cu_2c0a7836_X") == "__nv_static_25__06838a90_4_s_cu_2c0a7836_X");
}

TEST_CASE("demangle leaves names that are not C++ manglings as they are") {
  SUBCASE("C and OpenMP offload kernels") {
    CHECK(demangle("vectorAdd") == "vectorAdd");
    CHECK(demangle("nvkernel__Z8cellsXORPKiPimii_F1L18_2") == "nvkernel__Z8cellsXORPKiPimii_F1L18_2");
    CHECK(base_name("nvkernel__Z8cellsXORPKiPimii_F1L18_2") == "nvkernel__Z8cellsXORPKiPimii_F1L18_2");
  }
  SUBCASE("names the demangler would read as type encodings") {
    for (const char* name : {"i", "f", "v", "3Foo", "St", "Dv4_f", "Z"}) {
      CHECK(demangle(name) == name);
      CHECK(base_name(name) == name);
    }
  }
  SUBCASE("empty name") {
    CHECK(demangle("").empty());
    CHECK(base_name("").empty());
    CHECK(clip_to_width("").empty());
  }
}

TEST_CASE("demangle returns malformed and unusual input unchanged and never reads past the view") {
  SUBCASE("truncated and invalid manglings") {
    for (const char* name : {"_Z", "_ZN", "_ZN13scopeprof_gpu11spin_kern", "_Z3foo(", "_ZNK", "_Z99x"}) {
      CHECK(demangle(name) == name);
    }
    const std::string deep = "_Z" + std::string(10000, 'N');
    CHECK(demangle(deep) == deep);
  }
  SUBCASE("invalid UTF-8") {
    const std::string bytes = "_Z\xff\xfe\x80\xc3";
    CHECK(demangle(bytes) == bytes);
    CHECK(base_name(bytes) == bytes);
    const std::string plain = "kern\xe2\x82";  // a cut three-byte sequence
    CHECK(demangle(plain) == plain);
  }
  SUBCASE("embedded NUL") {
    // The demangler would stop at the NUL and name only the first part.
    const std::string with_nul("_Z3fooi\0_Z3bari", 15);
    CHECK(demangle(with_nul) == with_nul);
    CHECK(demangle(with_nul).size() == 15);
    const std::string plain_nul("k\0x", 3);
    CHECK(base_name(plain_nul) == plain_nul);
  }
  SUBCASE("view that is not NUL-terminated") {
    if (!gnu_text) return;
    const std::string buffer = "_Z3fooiXYZ_ZN13scopeprof_gpu11spin_kernelEyPyjunk";
    const std::string_view whole(buffer);
    CHECK(demangle(whole.substr(0, 7)) == "foo(int)");
    CHECK(demangle(whole.substr(10, 35)) == "scopeprof_gpu::spin_kernel(unsigned long long, unsigned long long*)");
    CHECK(base_name(whole.substr(10, 35)) == "spin_kernel");
    CHECK(demangle(whole.substr(0, 6)) == "foo");  // "_Z3foo" alone names an object
  }
}

TEST_CASE("base_name reads Nsight-style demangled text and keeps what it cannot take apart") {
  SUBCASE("names from Nsight's shortName column") {
    // The demangled text as Nsight itself prints it: (int)4 template arguments, T2-style parameters.
    CHECK(base_name("void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<float>, "
                    "std::array<char *, (unsigned long)1>>(int, T2, T3)") == "vectorized_elementwise_kernel");
    CHECK(base_name("void at::native::elementwise_kernel<(int)128, (int)2, void at::native::gpu_kernel_impl_nocast<"
                    "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance 3)]::operator "
                    "()() const::[lambda(float) (instance 1)]>(at::TensorIteratorBase &, const T1 &)::[lambda(int) "
                    "(instance 1)]>(int, T3)") == "elementwise_kernel");
    CHECK(base_name("void at::native::<unnamed>::CatArrayBatchedCopy<at::native::<unnamed>::OpaqueType<(int)4>, "
                    "unsigned int, (int)1, (int)128, (int)1>(T1 *, at::native::<unnamed>::CatArrInputTensorMetadata"
                    "<T1, T2, T4, T5>, at::native::<unnamed>::TensorSizeStride<T2, (unsigned int)4>, int, T2)") ==
          "CatArrayBatchedCopy");
    CHECK(base_name("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<int>>(T1::Params)") ==
          "device_kernel");
    CHECK(base_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<(unsigned long)4096>)") ==
          "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  }
  SUBCASE("qualifiers after the parameter list") {
    CHECK(base_name("ns::Outer<int>::run(int) const") == "run");
    CHECK(base_name("foo(int) [clone .cold]") == "foo");
  }
  SUBCASE("unbalanced brackets come back whole") {
    CHECK(base_name("void foo<int(") == "void foo<int(");
    CHECK(base_name("ns::k<1, 2") == "ns::k<1, 2");
    CHECK(base_name("{lambda(") == "{lambda(");
  }
  SUBCASE("text without an identifier comes back whole") {
    CHECK(base_name("()") == "()");
    CHECK(base_name("ns::") == "ns::");
    CHECK(base_name(" ") == " ");
  }
}

TEST_CASE("clip_to_width clips like Nsight's console columns: 100 characters, the last one an ellipsis") {
  const std::string ellipsis = "\xE2\x80\xA6";
  SUBCASE("up to 100 characters stay whole") {
    CHECK(clip_to_width(std::string(99, 'a')) == std::string(99, 'a'));
    CHECK(clip_to_width(std::string(100, 'a')) == std::string(100, 'a'));
  }
  SUBCASE("longer text keeps 99 characters and gets the ellipsis") {
    CHECK(clip_to_width(std::string(101, 'a')) == std::string(99, 'a') + ellipsis);
    CHECK(clip_to_width(std::string(5000, 'a')) == std::string(99, 'a') + ellipsis);
  }
  SUBCASE("a 108-character kernel name as nsys stats prints it") {
    CHECK(clip_to_width("generate_particles_in_rect_kernel(Particle *, int, int, double, double, double, double, "
                        "double, double, int)") ==
          "generate_particles_in_rect_kernel(Particle *, int, int, double, double, double, double, double, dou" +
              ellipsis);
  }
  SUBCASE("the CUTLASS-like kernel") {
    CHECK(clip_to_width(cutlass_demangled) ==
          "void cutlass::Kernel<cutlass::gemm::kernel::Gemm<cutlass::gemm::threadblock::MmaMultistage<cutlass:" +
              ellipsis);
    if (gnu_text) CHECK(clip_to_width(demangle(cutlass_mangled)) == clip_to_width(cutlass_demangled));
  }
  SUBCASE("characters, not bytes, and never half a character") {
    CHECK(clip_to_width(repeat("\xC3\xA9", 100)) == repeat("\xC3\xA9", 100));
    CHECK(clip_to_width(repeat("\xC3\xA9", 150)) == repeat("\xC3\xA9", 99) + ellipsis);
    CHECK(clip_to_width(std::string(98, 'a') + repeat("\xE2\x82\xAC", 3)) ==
          std::string(98, 'a') + "\xE2\x82\xAC" + ellipsis);
    CHECK(clip_to_width(std::string(99, 'a') + "\xF0\x9F\x98\x80" + "b") == std::string(99, 'a') + ellipsis);
  }
  SUBCASE("other widths") {
    CHECK(clip_to_width("abcdef", 0).empty());
    CHECK(clip_to_width("abcdef", 1) == ellipsis);
    CHECK(clip_to_width("a", 1) == "a");
    CHECK(clip_to_width("abcdef", 3) == "ab" + ellipsis);
    CHECK(clip_to_width("abcdef", 6) == "abcdef");
  }
  SUBCASE("invalid UTF-8 does not break it") {
    CHECK(clip_to_width(std::string(200, '\xff')) == std::string(99, '\xff') + ellipsis);
    CHECK(clip_to_width(std::string(200, '\x80')) == std::string(200, '\x80'));  // no lead bytes: width 0
    CHECK(clip_to_width(std::string("\x80\x80", 2) + std::string(120, 'x')) ==
          std::string("\x80\x80", 2) + std::string(99, 'x') + ellipsis);
  }
}
