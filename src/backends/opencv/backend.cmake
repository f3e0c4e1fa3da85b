# The opencv backend's library (Debian's OpenCV DNN, imported in CMakeLists.txt), linked into
# onnxdbg-worker alone; included by CMakeLists.txt for each isolated backend.
target_link_libraries(onnxdbg_worker_backends PUBLIC opencv_dnn_debian)
