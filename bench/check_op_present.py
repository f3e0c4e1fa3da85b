#!/usr/bin/python3
"""The external check of the reduce benchmark, in the same cost class as Polygraphy's (a Python
start plus loading the candidate with the onnx package from Debian's python3-onnx): exits 1
("still failing") when the model at argv[1] holds a node of op type argv[2], else 0."""
import sys

import onnx

model = onnx.load(sys.argv[1])
sys.exit(1 if any(n.op_type == sys.argv[2] for n in model.graph.node) else 0)
