# Bifröst's out-of-process custom steps: Arrow Flight (the system's, otherwise the
# libarrow_flight the pyarrow wheel ships beside libarrow) and wasmtime's C library (the
# one the wasmtime wheel in .venv ships, declared by the headers in third_party/wasmtime).
add_library(bifrost_transform_deps INTERFACE)
find_package(ArrowFlight CONFIG QUIET)
if(Arrow_FOUND AND ArrowFlight_FOUND)
  target_link_libraries(bifrost_transform_deps INTERFACE ArrowFlight::arrow_flight_shared)
else()
  file(GLOB ARROW_FLIGHT_LIB "${PYARROW_DIR}/libarrow_flight.so.[0-9]*")
  if(NOT ARROW_FLIGHT_LIB)
    message(FATAL_ERROR "no libarrow_flight beside libarrow in '${PYARROW_DIR}': run scripts/setup.sh")
  endif()
  target_link_libraries(bifrost_transform_deps INTERFACE ${ARROW_FLIGHT_LIB})
endif()

set(SKADE_PYTHON "${CMAKE_SOURCE_DIR}/.venv/bin/python" CACHE FILEPATH "python with pyarrow")
execute_process(
  COMMAND ${SKADE_PYTHON} -c "import wasmtime, os; print(os.path.dirname(wasmtime.__file__))"
  OUTPUT_VARIABLE WASMTIME_DIR RESULT_VARIABLE WASMTIME_RC OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
file(GLOB WASMTIME_LIB "${WASMTIME_DIR}/*/_libwasmtime.so")
if(NOT WASMTIME_RC EQUAL 0 OR NOT WASMTIME_LIB)
  message(FATAL_ERROR "no wasmtime wheel (with _libwasmtime.so) in ${SKADE_PYTHON}: run scripts/setup.sh")
endif()
message(STATUS "wasmtime: ${WASMTIME_LIB}")
# The features the wheel's library was built with (checked against its symbols); GC
# changes the layout of wasmtime_val_t, so it must match.
foreach(feature GC WAT CRANELIFT WASI THREADS PROFILING CACHE PARALLEL_COMPILATION)
  set(WASMTIME_FEATURE_${feature} ON)
endforeach()
configure_file(${CMAKE_SOURCE_DIR}/third_party/wasmtime/include/wasmtime/conf.h.in
               ${CMAKE_BINARY_DIR}/wasmtime/include/wasmtime/conf.h)
get_filename_component(WASMTIME_LIB_DIR "${WASMTIME_LIB}" DIRECTORY)
target_include_directories(bifrost_transform_deps SYSTEM INTERFACE
                           ${CMAKE_BINARY_DIR}/wasmtime/include
                           ${CMAKE_SOURCE_DIR}/third_party/wasmtime/include)
# The library has no soname: link it by name so the binaries find it through their rpath.
target_link_options(bifrost_transform_deps INTERFACE "-L${WASMTIME_LIB_DIR}" "-Wl,-rpath,${WASMTIME_LIB_DIR}")
target_link_libraries(bifrost_transform_deps INTERFACE -l:_libwasmtime.so)
