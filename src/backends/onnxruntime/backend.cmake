# The onnxruntime backend's library (ONNX Runtime's prebuilt release, imported in CMakeLists.txt),
# linked into onnxdbg-worker alone; included by CMakeLists.txt for each isolated backend.
target_link_libraries(onnxdbg_worker_backends PUBLIC onnxruntime)
set_property(TARGET onnxdbg-worker APPEND PROPERTY BUILD_RPATH "${ONNXDBG_THIRD_PARTY}/onnxruntime/lib")
