"""Writes an MLP whose weights live in one external data file (ONNX IR "External Tensor Data").

    /usr/bin/python3 bench/make_big_model.py OUT.onnx [--hidden H] [--layers L] [--seed S]

The model is x[1,H] float32 -> L x (MatMul W_i[H,H] -> Add b_i -> Tanh) -> y[1,H]. Every weight
and bias is external, in OUT.onnx's folder as "<OUT name>.data", written one layer at a time, so
the script needs little memory whatever the size: hidden 4096 x 48 layers is 3.2 GB of weights.
Uses Debian's python3-onnx (any ONNX >= 1.9) and numpy.
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper


def external_tensor(name, dims, data_file, offset, length):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.FLOAT
    t.dims.extend(dims)
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", data_file), ("offset", str(offset)), ("length", str(length))):
        entry = t.external_data.add()
        entry.key = key
        entry.value = value
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=48)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    h = args.hidden
    rng = np.random.default_rng(args.seed)
    data_name = os.path.basename(args.out) + ".data"
    data_path = os.path.join(os.path.dirname(os.path.abspath(args.out)), data_name)
    nodes, inits = [], []
    offset = 0
    prev = "x"
    with open(data_path, "wb") as f:
        for i in range(args.layers):
            w = (rng.standard_normal((h, h), dtype=np.float32) / np.sqrt(h)).astype(np.float32)
            b = (rng.standard_normal((h,), dtype=np.float32) * 0.1).astype(np.float32)
            for name, arr in ((f"layer{i}.weight", w), (f"layer{i}.bias", b)):
                raw = arr.tobytes()
                f.write(raw)
                inits.append(external_tensor(name, arr.shape, data_name, offset, len(raw)))
                offset += len(raw)
                pad = (-offset) % 4096  # page-aligned, as onnx's save_model aligns large tensors
                f.write(b"\0" * pad)
                offset += pad
            mm, add, act = f"layer{i}/mm", f"layer{i}/add", f"layer{i}/act"
            nodes.append(helper.make_node("MatMul", [prev, f"layer{i}.weight"], [mm], name=f"MatMul_{i}"))
            nodes.append(helper.make_node("Add", [mm, f"layer{i}.bias"], [add], name=f"Add_{i}"))
            out = "y" if i == args.layers - 1 else act
            nodes.append(helper.make_node("Tanh", [add], [out], name=f"Tanh_{i}"))
            prev = out
    graph = helper.make_graph(
        nodes, "big_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, h])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, h])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="onnxdbg bench/make_big_model.py")
    model.ir_version = 8
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(model.SerializeToString())
    os.replace(tmp, args.out)
    print(f"{args.out}: {len(nodes)} nodes, {offset / 1e9:.2f} GB of weights in {data_name}")


if __name__ == "__main__":
    main()
