# The npu-model backend: the NPU launchers compiled with the host compiler against the AscendC
# devkit headers in CPU-debug mode (C++17, as the devkit's headers need), the devkit's permissive instruction
# stub regenerated without the instructions the model implements, and the model (deepgemm_ascend::npu_model)
# behind them, in libdga_npu_model.so next to libdeepgemm_ascend (which loads it for DGA_BACKEND=npu-model).
# Built when the devkit is beside the checkout (CI) or named by DGA_ASC_DEVKIT, unless DGA_NPU_MODEL is OFF.
set(DGA_ASC_DEVKIT "${PROJECT_SOURCE_DIR}/../shared/third_party/asc-devkit" CACHE PATH "AscendC devkit headers")
option(DGA_NPU_MODEL "Build the npu-model backend when the AscendC devkit is found" ON)
set(DGA_WITH_NPU_MODEL OFF)
if(NOT DGA_NPU_MODEL)
  message(STATUS "deepgemm_ascend: npu-model backend OFF (DGA_NPU_MODEL=OFF)")
elseif(EXISTS "${DGA_ASC_DEVKIT}/stub/funcs.txt")
  set(DGA_WITH_NPU_MODEL ON)
  message(STATUS "deepgemm_ascend: npu-model backend ON (AscendC devkit at ${DGA_ASC_DEVKIT})")
else()
  message(STATUS "deepgemm_ascend: npu-model backend OFF (no AscendC devkit at ${DGA_ASC_DEVKIT})")
endif()

# Compiles `sources` of `target` as kernel code against the devkit (cube core, CPU-debug mode).
function(dga_npu_model_sources target)
  set(model_dir ${PROJECT_SOURCE_DIR}/cpp/npu_model/shim)
  set(devkit_dirs . include include/basic_api include/basic_api/reg_compute include/simt_api include/simt_api/cpp
      include/c_api include/utils impl impl/basic_api impl/basic_api/reg_compute impl/simt_api impl/c_api impl/utils
      cpudebug/include stub cpudebug/utils cpudebug/utils/include)
  list(TRANSFORM devkit_dirs PREPEND "${DGA_ASC_DEVKIT}/")
  set_target_properties(${target} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_compile_definitions(${target} PRIVATE ASCENDC_CPU_DEBUG=1 __NPU_ARCH__=3510 __DAV_C310__)
  # The devkit's headers are third-party: no warnings from them (they are system includes).
  target_include_directories(${target} SYSTEM BEFORE PRIVATE ${CMAKE_BINARY_DIR}/npu_model_stub ${model_dir}
                             ${devkit_dirs})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cpp/include ${PROJECT_SOURCE_DIR}/cpp/npu
                                               ${PROJECT_SOURCE_DIR}/cpp/npu_model/include)
  target_compile_options(${target} PRIVATE -w)
endfunction()

function(dga_add_npu_model)
  find_package(Python3 COMPONENTS Interpreter REQUIRED)
  set(model_dir ${PROJECT_SOURCE_DIR}/cpp/npu_model/shim)
  set(stub_dir ${CMAKE_BINARY_DIR}/npu_model_stub)
  set(modelled set_mte2_nz_para copy_gm_to_cbuf_multi_nd2nz copy_gm_to_cbuf_multi_dn2nz load_cbuf_to_ca
      load_cbuf_to_cb load_cbuf_to_ca_s4 load_cbuf_to_cb_s4 load_cbuf_to_ca_mx load_cbuf_to_cb_mx mad mad_mx
      copy_matrix_cc_to_gm copy_matrix_cc_to_ub set_atomic_none set_atomic_add set_flag wait_flag pipe_barrier
      ffts_cross_core_sync wait_flag_dev set_intra_block wait_intra_block pset_b32 pset_b16 plt_b32 plt_b16 vlds vsts vdup vaxpy vcvt
      copy_ubuf_to_gm_align_v2 set_loop_size_ubtoout set_loop1_stride_ubtoout set_loop2_stride_ubtoout set_atomic_f32
      set_atomic_bf16 get_ctrl set_ctrl set_loop3_para set_st_atomic_cfg vadd vsub vmul vcadd copy_gm_to_ubuf_align_v2
      set_loop_size_outtoub set_loop1_stride_outtoub set_loop2_stride_outtoub vrelu vmuls vadds vci vcmps_eq vcmps_ne
      vcmps_gt vcmps_ge vcmps_lt vcmps_le vsel pand por pnot vexp vabs vdiv vmaxs vmins vcmax vsldb create_cbuf_matrix
      create_cbuf_matrix_bf16 copy_gm_to_cbuf_align_v2)
  add_custom_command(
    OUTPUT ${stub_dir}/stub_fun.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${stub_dir}
    COMMAND Python3::Interpreter ${model_dir}/gen_stub.py ${DGA_ASC_DEVKIT} ${stub_dir}/stub_fun.h
            model_instructions.h ${modelled}
    DEPENDS ${model_dir}/gen_stub.py ${DGA_ASC_DEVKIT}/stub/funcs.txt ${DGA_ASC_DEVKIT}/stub/enums.txt
    COMMENT "instruction stub for the NPU model")
  # The kernels (one translation unit per launcher family table, model_entries.hpp), the launch entry point
  # and the closed runtime pieces.
  add_library(dga_npu_model_kernels OBJECT ${model_dir}/entries_gemm.cpp ${model_dir}/entries_mqa.cpp
              ${model_dir}/entries_mega_moe.cpp ${model_dir}/entries_vector.cpp ${model_dir}/entries_probes.cpp
              ${model_dir}/model_entries.cpp ${model_dir}/cpu_debug_runtime.cpp
              ${DGA_ASC_DEVKIT}/cpudebug/src/acl_stub/kernel_fp16.cpp ${stub_dir}/stub_fun.h)
  dga_npu_model_sources(dga_npu_model_kernels)
  # The devkit's headers (most of each launcher's compile) parsed once for the family translation units.
  target_precompile_headers(dga_npu_model_kernels PRIVATE <kernel_operator.h>)
  set_source_files_properties(${model_dir}/cpu_debug_runtime.cpp ${DGA_ASC_DEVKIT}/cpudebug/src/acl_stub/kernel_fp16.cpp
                              TARGET_DIRECTORY dga_npu_model_kernels PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
  add_library(dga_npu_model SHARED ${model_dir}/model_glue.cpp ${model_dir}/model_group.cpp ${model_dir}/model_lockstep.cpp
              ${model_dir}/model_reached.cpp ${model_dir}/model_timing.cpp ${model_dir}/model_vector.cpp
              $<TARGET_OBJECTS:dga_npu_model_kernels> $<TARGET_OBJECTS:dga_layer_npu_model>)
  target_include_directories(dga_npu_model PRIVATE ${model_dir} ${PROJECT_SOURCE_DIR}/cpp/npu_model/include)
  target_compile_options(dga_npu_model PRIVATE -Wall -Wextra)
  target_link_libraries(dga_npu_model PRIVATE deepgemm_ascend)
  target_link_options(dga_npu_model PRIVATE -Wl,--no-undefined)  # a closed devkit symbol would fail at load
  # Beside libdeepgemm_ascend (runtime/npu_model.cpp looks there), in the build tree and installed.
  set_target_properties(dga_npu_model PROPERTIES LIBRARY_OUTPUT_DIRECTORY $<TARGET_FILE_DIR:deepgemm_ascend>
                                                 INSTALL_RPATH "$ORIGIN")
  install(TARGETS dga_npu_model LIBRARY DESTINATION ${DGA_INSTALL_LIBDIR})
endfunction()
