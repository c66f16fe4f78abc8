# ISA-specific translation units of the host target: only they get ISA flags, so the library loads
# on any CPU of its architecture and picks micro-kernels at run time.
function(dga_add_host_isa_sources target)
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cpp/host/src/isa/mmad_bf16_scalar.cpp
                                   ${PROJECT_SOURCE_DIR}/cpp/host/src/isa/interleave_scalar.cpp
                                   ${PROJECT_SOURCE_DIR}/cpp/host/src/isa/mmad_dispatch.cpp)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    set(_dir ${PROJECT_SOURCE_DIR}/cpp/host/src/isa)
    # GCC 12's AVX-512 headers build masked intrinsics on _mm512_undefined_* values and then warn about them
    # (-Wmaybe-uninitialized inside avx512fintrin.h, GCC bug 105593): about the headers, not these files.
    set(_q "")
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 12
       AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      set(_q ";-Wno-maybe-uninitialized")
    endif()
    target_sources(${target} PRIVATE ${_dir}/mmad_bf16_avx2.cpp ${_dir}/mmad_bf16_avx512.cpp ${_dir}/mmad_bf16_avx512bf16.cpp ${_dir}/mmad_bf16_amx.cpp
                                     ${_dir}/widen_avx512.cpp ${_dir}/widen_avx512vbmi.cpp ${_dir}/silu_avx512.cpp ${_dir}/interleave_avx512.cpp
                                     ${_dir}/widen_avx2.cpp ${_dir}/interleave_avx2.cpp)
    set_source_files_properties(${_dir}/mmad_bf16_avx2.cpp ${_dir}/widen_avx2.cpp ${_dir}/interleave_avx2.cpp PROPERTIES
                                COMPILE_OPTIONS "-mavx2;-mfma")
    set_source_files_properties(${_dir}/mmad_bf16_avx512.cpp PROPERTIES COMPILE_OPTIONS "-mavx512f;-mfma${_q}")
    set_source_files_properties(${_dir}/mmad_bf16_avx512bf16.cpp PROPERTIES
                                COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512bf16;-mfma${_q}")
    # Every AMX CPU has AVX-512F (the AMX ISA requires it at run time): the promotion loops vectorise.
    set_source_files_properties(${_dir}/mmad_bf16_amx.cpp PROPERTIES COMPILE_OPTIONS "-mamx-tile;-mamx-bf16;-mavx512f${_q}")
    set_source_files_properties(${_dir}/widen_avx512.cpp ${_dir}/silu_avx512.cpp ${_dir}/interleave_avx512.cpp PROPERTIES
                                COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mfma${_q}")
    set_source_files_properties(${_dir}/widen_avx512vbmi.cpp PROPERTIES
                                COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512vbmi${_q}")
  endif()
endfunction()
