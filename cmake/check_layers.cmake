# cmake -DLAYERS=FILE -DSRC=DIR -DMODULES="a;b" -P check_layers.cmake
# Fails when a file of src/<module>/ includes "<other>/..." for a module <other> that <module> does
# not depend on (LAYERS, written by onnxdbg_write_layers), or includes the public API headers
# ("onnxdbg/...") from below the api module (but for onnxdbg/options.h, the option schema's
# defaults, which every module may start from), or a file of the Python binding (python/_core/)
# includes a module other than core, or a file of the CLI (src/cli/) one other than api and core.
# Prints every offending include, then fails.
cmake_policy(VERSION 3.25)
file(STRINGS "${LAYERS}" lines)
set(modules "")
foreach(line ${lines})
  string(REPLACE " " ";" parts "${line}")
  list(POP_FRONT parts m)
  list(APPEND modules ${m})
  set(allowed_${m} ${parts})
endforeach()
# The CLI is a front-end: it reaches the library through the public API ("onnxdbg/...", module
# api) and core's Status and helpers, never a module's internals directly.
if("cli" IN_LIST modules)
  set(allowed_cli cli api core)
endif()
set(bad "")
foreach(m ${modules})
  file(GLOB_RECURSE files "${SRC}/${m}/*.h" "${SRC}/${m}/*.cpp")
  foreach(f ${files})
    file(STRINGS "${f}" includes REGEX "^#include \"[a-z_0-9]+/")
    foreach(inc ${includes})
      string(REGEX REPLACE "^#include \"([a-z_0-9]+)/.*" "\\1" target "${inc}")
      # The option schema's defaults (onnxdbg/options.h, a header of constants that includes
      # nothing of onnxdbg) are the bottom layer: every module starts its options from them.
      if(inc MATCHES "^#include \"onnxdbg/options\\.h\"")
        continue()
      endif()
      if(target STREQUAL "onnxdbg")
        set(target api)
      endif()
      if(NOT target IN_LIST modules)
        continue()  # a third-party header such as "onnx/onnx_pb.h"
      endif()
      if(NOT target IN_LIST allowed_${m})
        file(RELATIVE_PATH rel "${SRC}/.." "${f}")
        string(APPEND bad "  ${rel}: ${inc} (module '${m}' may not use '${target}')\n")
      endif()
    endforeach()
  endforeach()
endforeach()
# The Python binding (python/_core/) is a front-end like the CLI: it reaches the library through
# the public API ("onnxdbg/...") and core's Status and Tensor, nothing else of src/.
file(GLOB binding "${SRC}/../python/_core/*.h" "${SRC}/../python/_core/*.cpp")
foreach(f ${binding})
  file(STRINGS "${f}" includes REGEX "^#include \"[a-z_0-9]+/")
  foreach(inc ${includes})
    string(REGEX REPLACE "^#include \"([a-z_0-9]+)/.*" "\\1" target "${inc}")
    if(target IN_LIST modules AND NOT target STREQUAL "core")
      file(RELATIVE_PATH rel "${SRC}/.." "${f}")
      string(APPEND bad "  ${rel}: ${inc} (the binding may use only onnxdbg/ and core/)\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "onnxdbg: includes that go up the module layers "
                      "(docs/ARCHITECTURE.md lists them):\n${bad}")
endif()
