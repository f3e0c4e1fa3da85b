# cmake -DLAYERS=FILE -DSRC=DIR -DMODULES="a;b" -P check_layers.cmake
# Fails when a file of src/<module>/ includes "<other>/..." for a module <other> that <module> does
# not depend on (LAYERS, written by onnxdbg_write_layers), or includes the public API headers
# ("onnxdbg/...") from below the api module (but for the public vocabulary headers, `vocabulary`
# below, the bottom layer every module builds on), or a file of the Python binding (python/_core/)
# includes a module other than core, or a file of the CLI (src/cli/) one other than api and core.
# Prints every offending include, then fails.
cmake_policy(VERSION 3.25)
# The public vocabulary headers (include/onnxdbg/<name>.h): the option schema's defaults
# (options), Status and Expected (status), enum names (enum_names), element types (dtype,
# narrow_types), Tensor and TensorMap (tensor), Value and ValueMap (value), BackendSpec and the
# backends' documentation (backend_spec), the Model handle (model), and the types the API's
# options and results are made of, which the modules fill in: tolerances and tensor comparison
# (compare), generated inputs (input_gen), golden-value fitting (golden), sessions
# (session_info), the comparison of a run (run_report), the layerwise pass (layerwise_report),
# lint findings (findings), a model diff (model_diff), inspect's summary (model_summary), the
# viewer's overlays (viewer_overlays), a conformance case (conformance_case), model surgery
# (surgeon_options) and a reduction (reduce_options). They include only one another.
set(vocabulary
    options
    status
    enum_names
    dtype
    narrow_types
    tensor
    value
    backend_spec
    model
    compare
    input_gen
    golden
    session_info
    run_report
    layerwise_report
    findings
    model_diff
    model_summary
    viewer_overlays
    conformance_case
    surgeon_options
    reduce_options)
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
      # A vocabulary header: the bottom layer.
      string(REGEX REPLACE "^#include \"onnxdbg/([a-z_0-9]+)\\.h\".*" "\\1" header "${inc}")
      if(inc MATCHES "^#include \"onnxdbg/" AND header IN_LIST vocabulary)
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
# The public headers (include/onnxdbg/) are what users of the C++ API compile against, and all
# `cmake --install` copies: each may include other public headers and the standard library, never
# a header of src/ (a vocabulary header only vocabulary headers).
file(GLOB public_headers "${SRC}/../include/onnxdbg/*.h")
foreach(f ${public_headers})
  get_filename_component(name "${f}" NAME_WE)
  file(STRINGS "${f}" includes REGEX "^#include \"[a-z_0-9]+/")
  foreach(inc ${includes})
    string(REGEX REPLACE "^#include \"onnxdbg/([a-z_0-9]+)\\..*" "\\1" target "${inc}")
    file(RELATIVE_PATH rel "${SRC}/.." "${f}")
    if(NOT inc MATCHES "^#include \"onnxdbg/")
      string(APPEND bad "  ${rel}: ${inc} (a public header may include only public headers)\n")
    elseif(name IN_LIST vocabulary AND NOT target IN_LIST vocabulary)
      string(APPEND bad "  ${rel}: ${inc} (a vocabulary header may include only vocabulary "
                        "headers: the modules below api include it)\n")
    endif()
  endforeach()
endforeach()
if(bad)
  message(FATAL_ERROR "onnxdbg: includes that go up the module layers "
                      "(docs/ARCHITECTURE.md lists them):\n${bad}")
endif()
