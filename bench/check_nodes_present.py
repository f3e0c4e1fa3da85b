#!/usr/bin/python3
"""An external check for the reduce benchmarks, in the cost class of check_op_present.py: exits 1
("still failing") when the model at argv[1] holds a node named argv[2] and one named argv[3] (a
failure that needs two distant nodes at once), in its graph or in any If/Loop/Scan body, else 0.
With a file as argv[4], appends one line to it per call (oracle calls of a tool that does not
report them)."""
import sys

import onnx


def names(graph: onnx.GraphProto, out: set) -> set:
    for node in graph.node:
        out.add(node.name)
        for attr in node.attribute:
            for g in [attr.g] if attr.HasField("g") else list(attr.graphs):
                names(g, out)
    return out


if len(sys.argv) > 4:
    with open(sys.argv[4], "a", encoding="utf-8") as f:
        f.write("1\n")
present = names(onnx.load(sys.argv[1]).graph, set())
sys.exit(1 if sys.argv[2] in present and sys.argv[3] in present else 0)
