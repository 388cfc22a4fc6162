# Shared build settings and helpers for every module.

add_library(rocehil_warnings INTERFACE)
target_compile_options(rocehil_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                                  -Wno-sign-conversion)

if(ROCEHIL_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

# Debian's hardening (dpkg-buildflags' defaults; lintian checks the installed binary for them):
# fortified libc calls and a stack protector in optimized builds, and relocations resolved and
# made read-only at start. Not under the sanitizers, which bring checks of their own.
if(NOT ROCEHIL_SANITIZE AND NOT ROCEHIL_FUZZ)
  add_compile_options($<$<NOT:$<CONFIG:Debug>>:-D_FORTIFY_SOURCE=2> -fstack-protector-strong)
  add_link_options(-Wl,-z,relro -Wl,-z,now)
endif()

if(ROCEHIL_FUZZ AND NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "ROCEHIL_FUZZ needs clang (libFuzzer); use the 'asan' preset")
endif()

# rocehil_library(NAME [COLD] [FUZZED] SOURCES src... [ALONE src...] [PUBLIC lib...]
#                 [PRIVATE lib...] [PUBLIC_INCLUDE dir...] [PRIVATE_INCLUDE dir...])
# A module's library: rocehil_NAME, its alias rocehil::NAME, headers under PUBLIC_INCLUDE
# (default: include), and the warnings every module builds with.
# COLD: nothing of it runs per packet, per work request or per frame, and no benchmark in bench/
# measures it (options, suites, grading, reports, the agent's control loop): a Release build
# compiles it at -O1, which halves its compile time (bench/RESULTS.md, issue 47) and costs
# nothing a user could measure. The per-packet libraries keep the build type's -O3.
# FUZZED: a fuzzer links it, directly or through another library. Under ROCEHIL_FUZZ it is
# instrumented for coverage (-fsanitize=fuzzer-no-link), so the fuzzers can steer into it, and
# under the sanitizers it keeps the build type's optimization (in a fuzzer's bounded time the
# executions it manages are its coverage). Every other library, and every test, is compiled
# without either there: -O0 takes 40% off a file, no coverage instrumentation a further quarter
# (bench/RESULTS.md).
# ALONE: sources left out of the unity batches: their implementation struct holds types of their
# own anonymous namespace, which gcc accepts only in the file it was asked to compile (included
# into a batch, it takes them for a header's and warns, -Wsubobject-linkage).
function(rocehil_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "COLD;FUZZED" ""
                        "SOURCES;ALONE;PUBLIC;PRIVATE;PUBLIC_INCLUDE;PRIVATE_INCLUDE")
  if(NOT arg_PUBLIC_INCLUDE)
    set(arg_PUBLIC_INCLUDE include)
  endif()
  add_library(rocehil_${name} ${arg_SOURCES} ${arg_ALONE})
  if(arg_ALONE)
    set_source_files_properties(${arg_ALONE} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
  endif()
  add_library(rocehil::${name} ALIAS rocehil_${name})
  target_include_directories(rocehil_${name} PUBLIC ${arg_PUBLIC_INCLUDE})
  if(arg_PRIVATE_INCLUDE)
    target_include_directories(rocehil_${name} PRIVATE ${arg_PRIVATE_INCLUDE})
  endif()
  target_link_libraries(rocehil_${name} PUBLIC ${arg_PUBLIC} PRIVATE rocehil_warnings ${arg_PRIVATE})
  # A library's sources compiled a batch at a time (ROCEHIL_UNITY_BUILD): the third-party headers
  # are parsed, and the templates they instantiate compiled, once a batch instead of once a file.
  set_target_properties(rocehil_${name} PROPERTIES UNITY_BUILD ${ROCEHIL_UNITY_BUILD}
                                                   UNITY_BUILD_BATCH_SIZE 16)
  if(arg_COLD)
    rocehil_compile_cold(rocehil_${name})
  endif()
  if(ROCEHIL_SANITIZE AND NOT arg_FUZZED)
    target_compile_options(rocehil_${name} PRIVATE -O0)
  endif()
  if(ROCEHIL_FUZZ AND arg_FUZZED)
    target_compile_options(rocehil_${name} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

# Release's -O3 lowered to -O1 for `target` (see COLD above); later flags win over
# CMAKE_CXX_FLAGS_RELEASE. Other build types keep theirs.
function(rocehil_compile_cold target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>)
endfunction()

# rocehil_add_gtest(NAME LABEL source... [LINK lib...] [INCLUDE dir...] [DEFINES def...]
#                   [ENVIRONMENT VAR=value...])
# One GoogleTest binary, registered per test case (or whole: ROCEHIL_TEST_EACH_CASE).
function(rocehil_add_gtest name label)
  if(NOT ROCEHIL_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "LINK;INCLUDE;DEFINES;ENVIRONMENT")
  add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main rocehil_warnings ${arg_LINK})
  if(arg_INCLUDE)
    target_include_directories(${name} PRIVATE ${arg_INCLUDE})
  endif()
  if(arg_DEFINES)
    target_compile_definitions(${name} PRIVATE ${arg_DEFINES})
  endif()
  # The tests' own code unoptimized: it halves their compile time (gtest and JSON templates),
  # and the libraries they test keep the build type's optimization.
  target_compile_options(${name} PRIVATE -O0 -U_FORTIFY_SOURCE)
  # In batches too (ROCEHIL_UNITY_BUILD): GoogleTest's and JSON's headers are most of a test
  # file's compile time.
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${ROCEHIL_UNITY_BUILD}
                                           UNITY_BUILD_BATCH_SIZE 16)
  if(label STREQUAL "unit")
    set_property(GLOBAL APPEND PROPERTY ROCEHIL_UNIT_AND_FUZZ_TARGETS ${name})
  endif()
  # One test case at a time however many jobs ctest runs (tests share loopback ports, the
  # soft provider's UDP port and capture interfaces): only the fuzzers, which touch nothing
  # outside their process, run beside them (make test-asan runs ctest -j2).
  if(NOT ROCEHIL_TEST_EACH_CASE)
    # The binary whole, one ctest test: --gtest_brief prints only the cases that fail.
    add_test(NAME ${name} COMMAND ${name} --gtest_brief=1)
    set_tests_properties(${name} PROPERTIES LABELS ${label} RESOURCE_LOCK rocehil-test-cases)
    if(arg_ENVIRONMENT)
      set_tests_properties(${name} PROPERTIES ENVIRONMENT "${arg_ENVIRONMENT}")
    endif()
    return()
  endif()
  include(GoogleTest)
  if(arg_ENVIRONMENT)
    gtest_discover_tests(${name} PROPERTIES LABELS ${label} RESOURCE_LOCK rocehil-test-cases
                         ENVIRONMENT "${arg_ENVIRONMENT}" DISCOVERY_TIMEOUT 30)
  else()
    gtest_discover_tests(${name} PROPERTIES LABELS ${label} RESOURCE_LOCK rocehil-test-cases
                         DISCOVERY_TIMEOUT 30)
  endif()
endfunction()

# rocehil_add_system_test(NAME SCRIPT [TIMEOUT s] [SERIAL] [SKIP_RETURN_CODE c] [ARGS arg...])
# A Python system test run by the Debian interpreter (scapy lives there); ARGS default to the
# rocehil binary.
function(rocehil_add_system_test name script)
  if(NOT ROCEHIL_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 2 arg "SERIAL" "TIMEOUT;SKIP_RETURN_CODE" "ARGS")
  if(NOT arg_ARGS)
    set(arg_ARGS $<TARGET_FILE:rocehil>)
  endif()
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 300)
  endif()
  add_test(NAME ${name} COMMAND ${ROCEHIL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/${script} ${arg_ARGS})
  set_tests_properties(${name} PROPERTIES LABELS system TIMEOUT ${arg_TIMEOUT})
  if(arg_SERIAL)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL ON)
  endif()
  if(arg_SKIP_RETURN_CODE)
    set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE ${arg_SKIP_RETURN_CODE})
  endif()
endfunction()

# rocehil_add_fuzzer(NAME source... [LINK lib...]) — a libFuzzer target, run for a bounded time
# under ctest -L fuzz.
function(rocehil_add_fuzzer name)
  if(NOT ROCEHIL_FUZZ)
    return()
  endif()
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "LINK;INCLUDE")
  add_executable(${name} ${arg_UNPARSED_ARGUMENTS})
  target_link_libraries(${name} PRIVATE ${arg_LINK})
  if(arg_INCLUDE)
    target_include_directories(${name} PRIVATE ${arg_INCLUDE})
  endif()
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer-no-link)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  set_property(GLOBAL APPEND PROPERTY ROCEHIL_UNIT_AND_FUZZ_TARGETS ${name})
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
