# NPU target detection. DGA_NPU = AUTO | ON | OFF.
#   AUTO: enabled when CANN is found through ASCEND_HOME_PATH (bisheng present), else skipped with one line.
#   ON:   CANN is required; configuring without it fails.
set(DGA_NPU "AUTO" CACHE STRING "Build the Ascend NPU target: AUTO, ON or OFF")
set_property(CACHE DGA_NPU PROPERTY STRINGS AUTO ON OFF)
set(DGA_NPU_ARCHS "dav-3510" CACHE STRING "NPU architectures to compile kernels for (list)")

set(DGA_WITH_NPU OFF)
if(NOT DGA_NPU STREQUAL "OFF")
  set(_dga_cann "$ENV{ASCEND_HOME_PATH}")
  set(_dga_why "")
  if(_dga_cann STREQUAL "")
    set(_dga_why "ASCEND_HOME_PATH is not set (source CANN's set_env.sh)")
  else()
    find_program(DGA_BISHENG bisheng HINTS "${_dga_cann}/compiler/ccec_compiler/bin" "${_dga_cann}/bin" NO_CACHE)
    if(NOT DGA_BISHENG)
      set(_dga_why "bisheng was not found under ASCEND_HOME_PATH=${_dga_cann}")
    endif()
  endif()
  if(_dga_why STREQUAL "")
    set(DGA_WITH_NPU ON)
    message(STATUS "deepgemm_ascend: NPU target ON (CANN at ${_dga_cann}, bisheng ${DGA_BISHENG}, archs ${DGA_NPU_ARCHS})")
  elseif(DGA_NPU STREQUAL "ON")
    message(FATAL_ERROR "deepgemm_ascend: DGA_NPU=ON but CANN is not usable: ${_dga_why}")
  else()
    message(STATUS "deepgemm_ascend: NPU target OFF (${_dga_why})")
  endif()
endif()

# With CANN: every cpp/npu/*.asc (each kernel marks its type: __cube__, __vector__ or
# __mix__(1,2)) is compiled by bisheng into libdga_npu_kernels_<arch>.so per arch of DGA_NPU_ARCHS, next to
# the library; `target` gets the ACL runtime and the name and arch of the kernels library of the first arch
# (the arch the host plans with: heuristics::npu_arch).
function(dga_add_npu_kernels target)
  include(GNUInstallDirs)
  file(GLOB kernels CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cpp/npu/*.asc)
  file(GLOB headers CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/cpp/npu/*.hpp
       ${PROJECT_SOURCE_DIR}/cpp/include/deepgemm_ascend/*/*.hpp)
  set(cann "$ENV{ASCEND_HOME_PATH}")
  set(first "")
  set(first_arch "")
  foreach(arch IN LISTS DGA_NPU_ARCHS)
    set(out ${CMAKE_BINARY_DIR}/libdga_npu_kernels_${arch}.so)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${DGA_BISHENG} -x asc -std=c++17 -O2 -fPIC -shared --npu-arch=${arch}
              -I${PROJECT_SOURCE_DIR}/cpp/include -I${PROJECT_SOURCE_DIR}/cpp/npu ${kernels} -o ${out}
      DEPENDS ${kernels} ${headers}
      COMMENT "bisheng: NPU kernels for ${arch}"
      VERBATIM)
    add_custom_target(dga_npu_kernels_${arch} ALL DEPENDS ${out})
    add_dependencies(${target} dga_npu_kernels_${arch})
    if(DGA_BUILD_PYTHON)
      install(FILES ${out} DESTINATION deepgemm_ascend)
    else()
      install(FILES ${out} DESTINATION ${CMAKE_INSTALL_LIBDIR})
    endif()
    if(first STREQUAL "")
      set(first "libdga_npu_kernels_${arch}.so")
      set(first_arch "${arch}")
    endif()
  endforeach()
  find_library(DGA_ASCENDCL ascendcl HINTS "${cann}/lib64" "${cann}/runtime/lib64" REQUIRED)
  target_include_directories(${target} PRIVATE "${cann}/include" "${cann}/runtime/include")
  target_link_libraries(${target} PRIVATE ${DGA_ASCENDCL})
  target_compile_definitions(${target} PRIVATE DGA_NPU_KERNELS_LIB="${first}" DGA_NPU_KERNELS_ARCH="${first_arch}")
endfunction()
