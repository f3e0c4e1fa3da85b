"""Models of tests/cli/bisect_optimizers.sh, built with onnx's helper (Debian's python3-onnx).
make_bisect_models.py OUT_DIR writes:
  ln_gelu.onnx     LayerNorm written out (ReduceMean, Sub, Pow, ..., Add), MatMul+Add, erf-GELU
                   written out, MatMul+Add, float32[128, 64]: ONNX Runtime's extended level fuses
                   the LayerNorm, which moves outputs by about 1e-6
  double_qdq.onnx  a QDQ Conv (per-channel int8 weights) followed by a second Q -> DQ of another
                   scale: ONNX Runtime's QDQ transformers fold the pairs, moving most outputs by
                   a quantization step
  relu.onnx        y = Relu(x): every level agrees
  custom.onnx      an op of a custom domain ONNX Runtime does not have
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

out = sys.argv[1]


def save(nodes, name, inputs, outputs, inits, domains=()):
    g = h.make_graph(nodes, name, inputs, outputs, inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)] +
                     [h.make_opsetid(d, 1) for d in domains])
    m.ir_version = 8
    onnx.save(m, f"{out}/{name}.onnx")


rng = np.random.default_rng(1)
D, H = 64, 256
f32 = lambda a: np.asarray(a, np.float32)
inits = [nh.from_array(f32(rng.random(D) + 0.5), "gamma"), nh.from_array(f32(rng.random(D) - 0.5), "beta"),
         nh.from_array(f32(1e-5), "eps"), nh.from_array(f32(2.0), "two"),
         nh.from_array(f32(rng.standard_normal((D, H)) * 0.2), "w1"), nh.from_array(f32(rng.standard_normal(H) * 0.1), "b1"),
         nh.from_array(f32(rng.standard_normal((H, D)) * 0.1), "w2"), nh.from_array(f32(rng.standard_normal(D) * 0.1), "b2"),
         nh.from_array(f32(np.sqrt(2.0)), "sqrt2"), nh.from_array(f32(1.0), "one"), nh.from_array(f32(0.5), "half")]
steps = [("ReduceMean", ["x"], "mean", "ln_mean", {"axes": [-1]}), ("Sub", ["x", "mean"], "xc", "ln_sub", {}),
         ("Pow", ["xc", "two"], "sq", "ln_pow", {}), ("ReduceMean", ["sq"], "var", "ln_var", {"axes": [-1]}),
         ("Add", ["var", "eps"], "ve", "ln_add_eps", {}), ("Sqrt", ["ve"], "sd", "ln_sqrt", {}),
         ("Div", ["xc", "sd"], "xn", "ln_div", {}), ("Mul", ["xn", "gamma"], "xg", "ln_mul", {}),
         ("Add", ["xg", "beta"], "ln", "ln_add", {}), ("MatMul", ["ln", "w1"], "m1", "fc1", {}),
         ("Add", ["m1", "b1"], "a1", "fc1_bias", {}), ("Div", ["a1", "sqrt2"], "gd", "gelu_div", {}),
         ("Erf", ["gd"], "ge", "gelu_erf", {}), ("Add", ["ge", "one"], "ga", "gelu_add", {}),
         ("Mul", ["a1", "ga"], "gm", "gelu_mul", {}), ("Mul", ["gm", "half"], "g", "gelu_half", {}),
         ("MatMul", ["g", "w2"], "m2", "fc2", {}), ("Add", ["m2", "b2"], "y", "fc2_bias", {})]
save([h.make_node(op, i, [o], name=n, **a) for op, i, o, n, a in steps], "ln_gelu",
     [h.make_tensor_value_info("x", T.FLOAT, [128, D])], [h.make_tensor_value_info("y", T.FLOAT, [128, D])], inits)

rng = np.random.default_rng(0)
C, O = 8, 16
ws = f32(rng.random(O) * 0.01 + 0.001)
inits = [nh.from_array(f32(0.02), "xs"), nh.from_array(np.array(128, np.uint8), "xz"),
         nh.from_array(rng.integers(-127, 127, (O, C, 3, 3)).astype(np.int8), "W"), nh.from_array(ws, "ws"),
         nh.from_array(np.zeros(O, np.int8), "wz"), nh.from_array(rng.integers(-1000, 1000, O).astype(np.int32), "B"),
         nh.from_array(f32(0.02 * ws), "bs"), nh.from_array(np.zeros(O, np.int32), "bz"),
         nh.from_array(f32(0.013), "ys"), nh.from_array(np.array(0, np.uint8), "yz"), nh.from_array(f32(0.03), "y2s")]
nodes = [h.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="q_in"),
         h.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="dq_in"),
         h.make_node("DequantizeLinear", ["W", "ws", "wz"], ["wd"], name="dq_w", axis=0),
         h.make_node("DequantizeLinear", ["B", "bs", "bz"], ["bd"], name="dq_b", axis=0),
         h.make_node("Conv", ["xd", "wd", "bd"], ["c"], name="conv", pads=[1, 1, 1, 1]),
         h.make_node("Relu", ["c"], ["r"], name="relu"),
         h.make_node("QuantizeLinear", ["r", "ys", "yz"], ["yq"], name="q_out"),
         h.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["yd"], name="dq_out"),
         h.make_node("QuantizeLinear", ["yd", "y2s", "yz"], ["yq2"], name="q_out2"),
         h.make_node("DequantizeLinear", ["yq2", "y2s", "yz"], ["y"], name="dq_out2")]
save(nodes, "double_qdq", [h.make_tensor_value_info("x", T.FLOAT, [1, C, 32, 32])],
     [h.make_tensor_value_info("y", T.FLOAT, [1, O, 32, 32])], inits)

save([h.make_node("Relu", ["x"], ["y"], name="relu")], "relu",
     [h.make_tensor_value_info("x", T.FLOAT, [2, 3])], [h.make_tensor_value_info("y", T.FLOAT, [2, 3])], [])
save([h.make_node("Mystery", ["x"], ["y"], name="mystery", domain="com.example")], "custom",
     [h.make_tensor_value_info("x", T.FLOAT, [2, 3])], [h.make_tensor_value_info("y", T.FLOAT, [2, 3])], [],
     domains=["com.example"])
