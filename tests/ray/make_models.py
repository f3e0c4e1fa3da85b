"""Writes COUNT small ONNX models into FOLDER for the batch tests (make test-ray, bench/batch.sh):
random chains of common ops (MatMul with weights, Add, Mul, Relu, Sigmoid, Tanh, Exp, Softmax,
ReduceMean, LayerNormalization, Conv) from seed i, so that each model differs; every seventh uses
Gelu at opset 17, where it is not an op yet (an error row). Each is written with onnx.save.

usage: make_models.py FOLDER COUNT"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def chain(i: int) -> onnx.ModelProto:
    """Model i: x[1, 8, 16, 16] -> Conv -> a seeded chain of 3 to 8 ops -> y."""
    rng = np.random.default_rng(i)
    inits = [numpy_helper.from_array(rng.standard_normal((8, 8, 3, 3)).astype(np.float32), "w0")]
    nodes = [helper.make_node("Conv", ["x", "w0"], ["t0"], name="conv0", pads=[1, 1, 1, 1])]
    cur, shape = "t0", [1, 8, 16, 16]
    ops = ["Relu", "Sigmoid", "Tanh", "Exp", "Add", "Mul", "Softmax", "ReduceMean", "MatMul",
           "LayerNormalization"]
    for k in range(1, int(rng.integers(3, 9))):
        op = ops[int(rng.integers(len(ops)))]
        out = f"t{k}"
        if op in ("Add", "Mul"):
            inits.append(numpy_helper.from_array(
                rng.standard_normal(shape[-1:]).astype(np.float32), f"c{k}"))
            nodes.append(helper.make_node(op, [cur, f"c{k}"], [out], name=f"{op.lower()}{k}"))
        elif op == "MatMul":
            inits.append(numpy_helper.from_array(
                (rng.standard_normal((shape[-1], 16)) / 4).astype(np.float32), f"m{k}"))
            nodes.append(helper.make_node("MatMul", [cur, f"m{k}"], [out], name=f"matmul{k}"))
            shape = shape[:-1] + [16]
        elif op == "Softmax":
            nodes.append(helper.make_node("Softmax", [cur], [out], name=f"softmax{k}", axis=-1))
        elif op == "ReduceMean":
            nodes.append(helper.make_node("ReduceMean", [cur], [out], name=f"reducemean{k}",
                                          axes=[-1], keepdims=1))
            shape = shape[:-1] + [1]
        elif op == "LayerNormalization":
            inits.append(numpy_helper.from_array(np.ones(shape[-1:], np.float32), f"g{k}"))
            nodes.append(helper.make_node("LayerNormalization", [cur, f"g{k}"], [out],
                                          name=f"layernorm{k}", axis=-1))
        elif op == "Exp":
            nodes.append(helper.make_node("Tanh", [cur], [f"{out}_b"], name=f"bound{k}"))
            nodes.append(helper.make_node("Exp", [f"{out}_b"], [out], name=f"exp{k}"))
        else:
            nodes.append(helper.make_node(op, [cur], [out], name=f"{op.lower()}{k}"))
        cur = out
    if i % 7 == 6:
        nodes.append(helper.make_node("Gelu", [cur], ["gelu"], name="gelu"))
        cur = "gelu"
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    graph = helper.make_graph(
        nodes, f"chain{i}", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None] * len(shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="onnxdbg-batch-tests")
    model.ir_version = 8
    return model


def main() -> None:
    folder, count = sys.argv[1], int(sys.argv[2])
    os.makedirs(folder, exist_ok=True)
    for i in range(count):
        onnx.save(chain(i), os.path.join(folder, f"chain{i:02d}.onnx"))


if __name__ == "__main__":
    main()
