# The Python package (python/): the pybind11 extension onnxdbg._core (python/_core/, a thin
# binding of include/onnxdbg/) and the pure-Python files, laid out in <build>/python/onnxdbg so
# that PYTHONPATH=<build>/python imports it. Built when pybind11 and Python's headers are found.
# `pip install .` (pyproject.toml, scikit-build-core) builds the targets _core, onnxdbg and
# onnxdbg-worker and installs component "python": the package with the CLI and the worker in
# onnxdbg/bin (the `onnxdbg` console command runs the CLI) and ONNX Runtime's library in
# onnxdbg/lib.
option(ONNXDBG_PYTHON "build the Python package (needs pybind11 and Python 3 headers)" ON)
if(NOT ONNXDBG_PYTHON)
  return()
endif()
set(PYBIND11_FINDPYTHON ON)
find_package(Python3 COMPONENTS Interpreter Development.Module)
# PyPI's pybind11 as install-deps.sh unpacks it (the release pyproject.toml pins for the wheel)
# in place of Debian's 2.10, also in a build folder configured before it was there; without it,
# whichever find_package finds (a `pip install .` build environment's, or Debian's).
set(ONNXDBG_PYBIND11_DIR "${PROJECT_SOURCE_DIR}/third_party/pybind11/pybind11/share/cmake/pybind11")
if(EXISTS "${ONNXDBG_PYBIND11_DIR}/pybind11Config.cmake")
  set(pybind11_DIR "${ONNXDBG_PYBIND11_DIR}" CACHE PATH "pybind11's CMake package" FORCE)
endif()
find_package(pybind11 CONFIG QUIET)
if(NOT pybind11_FOUND OR NOT Python3_FOUND)
  message(WARNING "pybind11 or Python 3 headers not found (apt-get install pybind11-dev "
                  "python3-dev): the Python package is not built")
  return()
endif()

set(ONNXDBG_PYTHON_DIR "${CMAKE_BINARY_DIR}/python/onnxdbg")
file(GLOB ONNXDBG_PYTHON_SOURCES CONFIGURE_DEPENDS python/_core/*.cpp)
# NO_EXTRAS: no link-time optimization (GCC's -fno-fat-lto-objects, which clang-tidy refuses, and
# a serial LTO link for nothing measurable: the work is in the library).
pybind11_add_module(_core MODULE NO_EXTRAS ${ONNXDBG_PYTHON_SOURCES})
target_compile_options(_core PRIVATE ${ONNXDBG_WARNINGS})
target_compile_definitions(_core PRIVATE ONNXDBG_VERSION="${PROJECT_VERSION}")
# Every reference count a binding changes checks that its thread holds the GIL (pybind11 2.11 and
# on; by default only without NDEBUG): a Python object (an oracle, a callback, a kept array)
# touched from one of the library's threads is a clear RuntimeError instead of a data race.
if(pybind11_VERSION VERSION_GREATER_EQUAL 2.11)
  target_compile_definitions(_core PRIVATE PYBIND11_ASSERT_GIL_HELD_INCREF_DECREF)
else()
  message(WARNING "pybind11 ${pybind11_VERSION} cannot check that bindings hold the GIL "
                  "(2.11 and on can; scripts/install-deps.sh unpacks 3.1.0)")
endif()
target_link_libraries(_core PRIVATE onnxdbg_lib)
set_target_properties(_core PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ONNXDBG_PYTHON_DIR}")
add_dependencies(_core onnxdbg-worker)
onnxdbg_use_pthread_openblas(_core)

# The pure-Python files, copied beside the extension at every build.
file(GLOB ONNXDBG_PYTHON_FILES CONFIGURE_DEPENDS python/onnxdbg/*.py)
set(ONNXDBG_PYTHON_COPIES "")
foreach(f ${ONNXDBG_PYTHON_FILES})
  get_filename_component(n ${f} NAME)
  add_custom_command(OUTPUT "${ONNXDBG_PYTHON_DIR}/${n}"
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${f} "${ONNXDBG_PYTHON_DIR}/${n}"
    DEPENDS ${f} VERBATIM)
  list(APPEND ONNXDBG_PYTHON_COPIES "${ONNXDBG_PYTHON_DIR}/${n}")
endforeach()
add_custom_target(onnxdbg_python_files ALL DEPENDS ${ONNXDBG_PYTHON_COPIES})
add_dependencies(_core onnxdbg_python_files)

install(TARGETS _core LIBRARY DESTINATION onnxdbg COMPONENT python)
install(TARGETS onnxdbg onnxdbg-worker RUNTIME DESTINATION onnxdbg/bin COMPONENT python)
install(FILES "${ONNXDBG_THIRD_PARTY}/onnxruntime/lib/libonnxruntime.so.1"
        DESTINATION onnxdbg/lib COMPONENT python)
if(SKBUILD)
  # In the wheel the worker finds ONNX Runtime's library in ../lib.
  set_target_properties(onnxdbg onnxdbg-worker PROPERTIES INSTALL_RPATH "$ORIGIN/../lib")
endif()
