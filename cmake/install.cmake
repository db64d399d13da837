# Install rules for scopeprof: headers, the compiled implementation, the exported targets
# scopeprof::scopeprof and scopeprof::header_only
# and a CMake package (scopeprofConfig.cmake + scopeprofConfigVersion.cmake).
#
# include() this from the top-level CMakeLists.txt, after target `scopeprof`
# (and everything it links) is defined, when SCOPEPROF_INSTALL is ON:
#
#   if(SCOPEPROF_INSTALL)
#     include(cmake/install.cmake)
#   endif()
#
# Optional input: SCOPEPROF_NEEDS_CUDATOOLKIT (bool). When not set, it is
# deduced from whether the target links any CUDA:: target.

if(NOT TARGET scopeprof)
  message(FATAL_ERROR "cmake/install.cmake: target 'scopeprof' must be defined before this file is included")
endif()

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(_scopeprof_root "${CMAKE_CURRENT_LIST_DIR}/..")
set(SCOPEPROF_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/scopeprof"
    CACHE STRING "Install directory (relative to the prefix) of scopeprof's CMake package files")
mark_as_advanced(SCOPEPROF_INSTALL_CMAKEDIR)

# Does the installed package need find_dependency(CUDAToolkit)?
if(NOT DEFINED SCOPEPROF_NEEDS_CUDATOOLKIT)
  get_target_property(_scopeprof_links scopeprof_header_only INTERFACE_LINK_LIBRARIES)
  if(_scopeprof_links AND "${_scopeprof_links}" MATCHES "CUDA::")
    set(SCOPEPROF_NEEDS_CUDATOOLKIT ON)
  else()
    set(SCOPEPROF_NEEDS_CUDATOOLKIT OFF)
  endif()
  unset(_scopeprof_links)
endif()
if(SCOPEPROF_NEEDS_CUDATOOLKIT)
  set(SCOPEPROF_NEEDS_CUDATOOLKIT ON)
else()
  set(SCOPEPROF_NEEDS_CUDATOOLKIT OFF)
endif()

if(DEFINED scopeprof_VERSION AND NOT "${scopeprof_VERSION}" STREQUAL "")
  set(_scopeprof_version "${scopeprof_VERSION}")
else()
  set(_scopeprof_version "${PROJECT_VERSION}")
endif()

# Headers: the whole include/ tree (umbrella + parts).
install(DIRECTORY "${_scopeprof_root}/include/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")

install(TARGETS scopeprof scopeprof_header_only EXPORT scopeprofTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")

install(EXPORT scopeprofTargets
        NAMESPACE scopeprof::
        FILE scopeprofTargets.cmake
        DESTINATION "${SCOPEPROF_INSTALL_CMAKEDIR}")

configure_package_config_file(
  "${_scopeprof_root}/cmake/scopeprofConfig.cmake.in"
  "${CMAKE_CURRENT_BINARY_DIR}/scopeprofConfig.cmake"
  INSTALL_DESTINATION "${SCOPEPROF_INSTALL_CMAKEDIR}")

write_basic_package_version_file(
  "${CMAKE_CURRENT_BINARY_DIR}/scopeprofConfigVersion.cmake"
  VERSION "${_scopeprof_version}"
  COMPATIBILITY SameMajorVersion
  ARCH_INDEPENDENT)

install(FILES
          "${CMAKE_CURRENT_BINARY_DIR}/scopeprofConfig.cmake"
          "${CMAKE_CURRENT_BINARY_DIR}/scopeprofConfigVersion.cmake"
        DESTINATION "${SCOPEPROF_INSTALL_CMAKEDIR}")

unset(_scopeprof_root)
unset(_scopeprof_version)
