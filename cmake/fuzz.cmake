# The fuzz targets, tests/fuzz/<name>_fuzzer.cpp, each defining LLVMFuzzerTestOneInput.
#  - Every build: onnxdbg-fuzz-replay TARGET FILE..., all targets in one binary (each compiled with
#    its entry point renamed onnxdbg_fuzz_<name>, listed in tests/fuzz/targets.def), and one ctest
#    per target, fuzz.<name>, that runs the inputs kept in tests/fuzz/regressions/<name>/
#    (crashes the fuzzers found, fixed since, and hand-made hostile inputs).
#  - ONNXDBG_FUZZ (clang): fuzz-<name>, the libFuzzer binaries `make fuzz` runs (tests/fuzz/run.sh).
file(GLOB ONNXDBG_FUZZ_SOURCES CONFIGURE_DEPENDS tests/fuzz/*_fuzzer.cpp)
add_executable(onnxdbg-fuzz-replay tests/fuzz/replay_main.cpp)
target_compile_options(onnxdbg-fuzz-replay PRIVATE ${ONNXDBG_WARNINGS})
target_link_libraries(onnxdbg-fuzz-replay PRIVATE onnxdbg_lib)
onnxdbg_use_pthread_openblas(onnxdbg-fuzz-replay)
foreach(src ${ONNXDBG_FUZZ_SOURCES})
  get_filename_component(file ${src} NAME_WE)
  string(REGEX REPLACE "_fuzzer$" "" name ${file})
  add_library(onnxdbg_fuzz_${name} OBJECT ${src})
  target_compile_options(onnxdbg_fuzz_${name} PRIVATE ${ONNXDBG_WARNINGS})
  target_compile_definitions(onnxdbg_fuzz_${name} PRIVATE
    LLVMFuzzerTestOneInput=onnxdbg_fuzz_${name})
  target_link_libraries(onnxdbg_fuzz_${name} PRIVATE onnxdbg_lib)
  target_link_libraries(onnxdbg-fuzz-replay PRIVATE onnxdbg_fuzz_${name})
  add_test(NAME fuzz.${name}
    COMMAND bash ${CMAKE_SOURCE_DIR}/tests/fuzz/replay.sh $<TARGET_FILE:onnxdbg-fuzz-replay>
            ${name} ${CMAKE_SOURCE_DIR}/tests/fuzz/regressions/${name})
  set_tests_properties(fuzz.${name} PROPERTIES
    ENVIRONMENT "TMPDIR=${ONNXDBG_TEST_TMP}" FIXTURES_REQUIRED test_tmp)
  if(ONNXDBG_FUZZ)
    add_executable(fuzz-${name} ${src})
    target_compile_options(fuzz-${name} PRIVATE ${ONNXDBG_WARNINGS})
    target_link_libraries(fuzz-${name} PRIVATE onnxdbg_lib)
    target_link_options(fuzz-${name} PRIVATE -fsanitize=fuzzer)
    onnxdbg_use_pthread_openblas(fuzz-${name})
  endif()
endforeach()
