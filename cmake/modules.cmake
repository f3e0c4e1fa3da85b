# onnxdbg's modules: one static library per folder of src/, each declaring the modules it may use.
# A file may include headers of its own module and of the modules below it (transitively), never
# of one above: cmake/check_layers.cmake checks every #include at build time and fails the build
# on an upward one, naming the file and the include (docs/ARCHITECTURE.md draws the layers).

# onnxdbg_base: what every module shares (include folders, warnings, common libraries).
add_library(onnxdbg_base INTERFACE)
target_include_directories(onnxdbg_base INTERFACE
  "$<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/src>" "$<BUILD_INTERFACE:${CMAKE_SOURCE_DIR}/include>"
  "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
target_link_libraries(onnxdbg_base INTERFACE fmt::fmt nlohmann_json::nlohmann_json Threads::Threads)

# The isolated backends, as src/backends/backends.def lists them (ONNXDBG_ISOLATED_BACKEND lines):
# their runners, src/backends/<name>/*_backend.cpp, and the worker are linked into onnxdbg-worker
# alone, never into a module library (CMakeLists.txt builds them; <name>/backend.cmake, when the
# folder has one, links the backend's third-party libraries).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  "${CMAKE_SOURCE_DIR}/src/backends/backends.def")
file(STRINGS "${CMAKE_SOURCE_DIR}/src/backends/backends.def" _isolated_lines
  REGEX "^ONNXDBG_ISOLATED_BACKEND\\(")
set(ONNXDBG_ISOLATED_BACKENDS "")
foreach(line ${_isolated_lines})
  string(REGEX REPLACE "^ONNXDBG_ISOLATED_BACKEND\\(([a-z0-9_]+),.*" "\\1" backend "${line}")
  list(APPEND ONNXDBG_ISOLATED_BACKENDS ${backend})
endforeach()
string(REPLACE ";" "|" ONNXDBG_ISOLATED_BACKENDS_REGEX "${ONNXDBG_ISOLATED_BACKENDS}")

set(ONNXDBG_MODULES "")
set(ONNXDBG_LIBRARY_MODULES "")

# onnxdbg_unity_build(TARGET): compile TARGET's sources in unity batches (ONNXDBG_UNITY_BUILD,
# ONNXDBG_UNITY_BATCH; CMakeLists.txt says why).
function(onnxdbg_unity_build target)
  set_target_properties(${target} PROPERTIES UNITY_BUILD ${ONNXDBG_UNITY_BUILD}
    UNITY_BUILD_BATCH_SIZE ${ONNXDBG_UNITY_BATCH})
endfunction()

# onnxdbg_module(NAME [DEPENDS module...] [LIBS library...] [SOURCES file...])
# Makes the static library onnxdbg_NAME from src/NAME/*.cpp (and src/NAME/*/*.cpp) plus SOURCES,
# linked PUBLIC to the modules it DEPENDS on and to LIBS.
function(onnxdbg_module name)
  cmake_parse_arguments(M "" "" "DEPENDS;LIBS;SOURCES" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS src/${name}/*.cpp src/${name}/*/*.cpp)
  # Isolated backends' runners and the worker are linked into onnxdbg-worker alone (their
  # documentation, <name>_doc.cpp, stays in the library).
  list(FILTER srcs EXCLUDE REGEX
    "/src/backends/((${ONNXDBG_ISOLATED_BACKENDS_REGEX})/[a-z_]*_backend|worker/)")
  add_library(onnxdbg_${name} STATIC ${srcs} ${M_SOURCES})
  target_compile_options(onnxdbg_${name} PRIVATE ${ONNXDBG_WARNINGS})
  set_target_properties(onnxdbg_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  onnxdbg_unity_build(onnxdbg_${name})
  target_link_libraries(onnxdbg_${name} PUBLIC onnxdbg_base ${M_LIBS})
  foreach(d ${M_DEPENDS})
    target_link_libraries(onnxdbg_${name} PUBLIC onnxdbg_${d})
  endforeach()
  add_dependencies(onnxdbg_${name} onnxdbg_check_layers)
  set(ONNXDBG_MODULES ${ONNXDBG_MODULES} ${name} PARENT_SCOPE)
  set(ONNXDBG_LIBRARY_MODULES ${ONNXDBG_LIBRARY_MODULES} ${name} PARENT_SCOPE)
  set(ONNXDBG_DEPENDS_${name} ${M_DEPENDS} PARENT_SCOPE)
endfunction()

# onnxdbg_register_module(NAME DEPENDS module...): a folder of src/ built into an executable
# rather than a library (the CLI), checked like the modules.
function(onnxdbg_register_module name)
  cmake_parse_arguments(M "" "" "DEPENDS" ${ARGN})
  set(ONNXDBG_MODULES ${ONNXDBG_MODULES} ${name} PARENT_SCOPE)
  set(ONNXDBG_DEPENDS_${name} ${M_DEPENDS} PARENT_SCOPE)
endfunction()

# onnxdbg_write_layers(FILE): each module's allowed includes (itself and everything below it),
# one line "module allowed1 allowed2 ...", for check_layers.cmake.
function(onnxdbg_write_layers file)
  set(text "")
  foreach(m ${ONNXDBG_MODULES})
    set(allowed ${m})
    set(todo ${ONNXDBG_DEPENDS_${m}})
    while(todo)
      list(POP_FRONT todo d)
      if(NOT d IN_LIST allowed)
        list(APPEND allowed ${d})
        list(APPEND todo ${ONNXDBG_DEPENDS_${d}})
      endif()
    endwhile()
    string(REPLACE ";" " " allowed "${allowed}")
    string(APPEND text "${m} ${allowed}\n")
  endforeach()
  file(WRITE ${file} "${text}")
endfunction()
