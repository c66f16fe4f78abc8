# ISA-specific translation units of the host target: only they get ISA flags, so the library loads
# on any CPU of its architecture and picks micro-kernels at run time.
function(dga_add_host_isa_sources target)
  target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/cpp/kernels/host/mmad_bf16_scalar.cpp
                                   ${PROJECT_SOURCE_DIR}/cpp/kernels/host/mmad_dispatch.cpp)
  if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
    set(_avx512 ${PROJECT_SOURCE_DIR}/cpp/kernels/host/mmad_bf16_avx512bf16.cpp)
    target_sources(${target} PRIVATE ${_avx512})
    set_source_files_properties(${_avx512} PROPERTIES COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512bf16;-mfma")
    target_compile_definitions(${target} PRIVATE DGA_HOST_X86=1)
  endif()
endfunction()
