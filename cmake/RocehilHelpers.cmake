# Shared build settings and helpers for every module.

add_library(rocehil_warnings INTERFACE)
target_compile_options(rocehil_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                                  -Wno-sign-conversion)

if(ROCEHIL_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

if(ROCEHIL_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ROCEHIL_FUZZ needs clang (libFuzzer); use the 'asan' preset")
  endif()
  # Instrument every library for coverage so the fuzzer can steer into the decoders.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# rocehil_add_gtest(NAME LABEL source...) — one GoogleTest binary, registered per test case.
function(rocehil_add_gtest name label)
  if(NOT ROCEHIL_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main rocehil_warnings)
  # The tests' own code unoptimized: it halves their compile time (gtest and JSON templates),
  # and the libraries they test keep the build type's optimization.
  target_compile_options(${name} PRIVATE -O0)
  include(GoogleTest)
  gtest_discover_tests(${name} PROPERTIES LABELS ${label} DISCOVERY_TIMEOUT 30)
endfunction()

# rocehil_add_fuzzer(NAME source...) — a libFuzzer target, run for a bounded time under ctest -L fuzz.
function(rocehil_add_fuzzer name)
  if(NOT ROCEHIL_FUZZ)
    return()
  endif()
  add_executable(${name} ${ARGN})
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  set(corpus ${CMAKE_CURRENT_BINARY_DIR}/${name}-corpus)
  set(seeds ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/${name})
  set(ROCEHIL_FUZZ_SECONDS 20 CACHE STRING "Seconds each fuzzer runs under ctest")
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1
                   $<TARGET_FILE:${name}> -max_total_time=${ROCEHIL_FUZZ_SECONDS} -max_len=4096
                   -print_final_stats=1 ${corpus} ${seeds})
  set_tests_properties(${name} PROPERTIES LABELS fuzz TIMEOUT 300
                       FIXTURES_REQUIRED ${name}-corpus)
  add_test(NAME ${name}-corpus-dir COMMAND ${CMAKE_COMMAND} -E make_directory ${corpus})
  set_tests_properties(${name}-corpus-dir PROPERTIES LABELS fuzz FIXTURES_SETUP ${name}-corpus)
endfunction()
