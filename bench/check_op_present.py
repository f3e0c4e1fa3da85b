#!/usr/bin/python3
"""The external check of the reduce benchmarks, in the same cost class as Polygraphy's (a Python
start plus loading the candidate with the onnx package from Debian's python3-onnx): exits 1
("still failing") when the model at argv[1] holds a node of op type argv[2], in its graph or in
any If/Loop/Scan body, else 0. With a file as argv[3], appends one line to it per call, so that a
benchmark can count the oracle calls of a tool that does not report them (Polygraphy)."""
import sys

import onnx


def has_op(graph: onnx.GraphProto, op_type: str) -> bool:
    for node in graph.node:
        if node.op_type == op_type:
            return True
        for attr in node.attribute:
            subgraphs = [attr.g] if attr.HasField("g") else list(attr.graphs)
            if any(has_op(g, op_type) for g in subgraphs):
                return True
    return False


if len(sys.argv) > 3:
    with open(sys.argv[3], "a", encoding="utf-8") as f:
        f.write("1\n")
model = onnx.load(sys.argv[1])
sys.exit(1 if has_op(model.graph, sys.argv[2]) else 0)
