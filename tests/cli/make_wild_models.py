"""Models of tests/cli/wild.sh, built with onnx's helper (Debian's python3-onnx): shapes of
failures met in published models. make_wild_models.py OUT_DIR writes:
  out_of_order_fp16.onnx  a float16 chain of 100 nodes, 79 of them listed before the nodes
                          producing their inputs (as a published float16 model lists them)
  reshape_mismatch.onnx   a Reshape whose target cannot hold its input: every backend fails
  dynamic_no_shape.onnx   a symbolic batch dim and an output without a shape (OpenCV's importer
                          refuses it)
  ir10.onnx               IR version 10 (which the linked ONNX 1.23 knows)
  ir15.onnx               IR version 15 (newer than the linked ONNX 1.23 knows)
  mul.onnx                y = x * 2 over float32[1, 4], and t = Relu(x) on the way
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(graph, name, opset=13, ir=8):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    onnx.save(m, f"{out}/{name}")


# 100 float16 nodes in a chain, listed as n0, n80, n79, ..., n1, n81, ..., n99: n80 to n2 each
# come before the node producing their input, 79 nodes as in the published model.
nodes = []
prev = "x"
for i in range(100):
    op = ["Add", "Mul", "Relu", "Tanh"][i % 4]
    o = f"t{i}" if i < 99 else "y"
    inputs = [prev, "k"] if op in ("Add", "Mul") else [prev]
    nodes.append(helper.make_node(op, inputs, [o], name=f"n{i}"))
    prev = o
order = [nodes[0]] + nodes[80:0:-1] + nodes[81:]
pos = {n.output[0]: p for p, n in enumerate(order)}
assert sum(any(pos.get(i, -1) > p for i in n.input) for p, n in enumerate(order)) == 79
k = numpy_helper.from_array(np.array([0.5], dtype=np.float16), "k")
g = helper.make_graph(order, "out_of_order_fp16",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [1, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [1, 16])], [k])
save(g, "out_of_order_fp16.onnx")

shape = numpy_helper.from_array(np.array([4, 4], dtype=np.int64), "shape")
g = helper.make_graph([helper.make_node("Reshape", ["x", "shape"], ["y"])], "reshape_mismatch",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [shape])
save(g, "reshape_mismatch.onnx")

# A symbolic batch dim and an output declared without a shape: OpenCV 4.6's importer refuses it
# (also once the input's dims are fixed), ONNX Runtime and the reference run it.
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "dynamic_no_shape",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
save(g, "dynamic_no_shape.onnx")

g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "ir10",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
save(g, "ir10.onnx", ir=10)
g.name = "ir15"
save(g, "ir15.onnx", ir=15)

two = numpy_helper.from_array(np.array([2.0], dtype=np.float32), "two")
g = helper.make_graph([helper.make_node("Relu", ["x"], ["t"]),
                       helper.make_node("Mul", ["t", "two"], ["y"])], "mul",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [two])
save(g, "mul.onnx")
