// make-reduce-models OUT_DIR: writes the models the reduce benchmark and tests shrink, in the
// shapes of issue 5's Polygraphy figures, each with exactly one node of a rare op type (Log,
// found nowhere else) deep inside, fed by a Sub that makes its input negative so that the Log
// also produces NaN from finite inputs (the built-in `--fail-on nan` oracle sees it):
//   resnet70.onnx        70 nodes, ResNet-18-like (Conv, Relu, Add, MaxPool, GAP, Gemm)
//   transformer611.onnx  611 nodes, 12-layer transformer encoder (decomposed LayerNorm, MHA, FFN)
//   dag1994.onnx         1,994 nodes, a DAG with skip connections
//   chain300.onnx        300 nodes, a chain (also chain50.onnx and chain2000.onnx, Log at 60%)
//   nested_if.onnx       41 main-graph nodes around an If whose then branch holds another If,
//                        whose then branch holds the Log (both conditions true for any input)
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "model/model.h"

namespace {

struct Builder {
  onnx::ModelProto model;
  onnx::GraphProto* g;
  int counter = 0;
  uint64_t rng = 88172645463325252ull;

  explicit Builder(const std::string& name, int opset) {
    model.set_ir_version(8);
    model.set_producer_name("onnxdbg make-reduce-models");
    model.add_opset_import()->set_version(opset);
    g = model.mutable_graph();
    g->set_name(name);
  }
  float next() {  // xorshift64 in [-1, 1)
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return static_cast<float>((rng >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
  }
  std::string weight(const std::vector<int64_t>& dims, float scale) {
    auto* t = g->add_initializer();
    t->set_name("w" + std::to_string(g->initializer_size()));
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) t->add_dims(d), n *= d;
    for (int64_t i = 0; i < n; ++i) t->add_float_data(next() * scale);
    return t->name();
  }
  std::string ints(const std::vector<int64_t>& v) {
    auto* t = g->add_initializer();
    t->set_name("c" + std::to_string(g->initializer_size()));
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
    return t->name();
  }
  std::string scalar(float v) {
    auto* t = g->add_initializer();
    t->set_name("s" + std::to_string(g->initializer_size()));
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
    return t->name();
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> inputs) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(counter));
    for (auto& i : inputs) n->add_input(i);
    n->add_output("t" + std::to_string(counter++));
    return n;
  }
  std::string op(const std::string& o, std::vector<std::string> inputs) {
    return node(o, std::move(inputs))->output(0);
  }
  static void attr_i(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  // The rare node: Log of a value made negative, so it yields NaN from finite inputs.
  std::string rare(const std::string& x) { return op("Log", {op("Sub", {x, scalar(10.0f)})}); }
  // The graph's input and output; the output's shape is declared when out_shape is given.
  void io(const std::string& in, const std::vector<int64_t>& in_shape, const std::string& out,
          const std::vector<int64_t>* out_shape = nullptr) {
    auto* vi = g->add_input();
    vi->set_name(in);
    auto* t = vi->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : in_shape) t->mutable_shape()->add_dim()->set_dim_value(d);
    auto* vo = g->add_output();
    vo->set_name(out);
    vo->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    if (out_shape)
      for (int64_t d : *out_shape)
        vo->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  }
  // Pads with Relu nodes on `x` until the graph has `n` nodes.
  std::string pad_to(std::string x, int n) {
    while (g->node_size() < n) x = op("Relu", {x});
    return x;
  }
};

std::string conv(Builder& b, const std::string& x, int64_t cin, int64_t cout, int64_t stride) {
  auto* n = b.node("Conv", {x, b.weight({cout, cin, 3, 3}, 0.3f), b.weight({cout}, 0.1f)});
  Builder::attr_ints(n, "pads", {1, 1, 1, 1});
  Builder::attr_ints(n, "strides", {stride, stride});
  return n->output(0);
}

onnx::ModelProto resnet70() {
  Builder b("resnet70", 13);
  std::string x = "input";
  x = b.op("Relu", {conv(b, x, 3, 8, 1)});
  auto* mp = b.node("MaxPool", {x});
  Builder::attr_ints(mp, "kernel_shape", {2, 2});
  Builder::attr_ints(mp, "strides", {2, 2});
  x = mp->output(0);
  int64_t c = 8;
  for (int block = 0; block < 8; ++block) {
    const bool down = block == 2 || block == 4 || block == 6;
    const int64_t cout = down ? c * 2 : c;
    std::string y = b.op("Relu", {conv(b, x, c, cout, down ? 2 : 1)});
    y = conv(b, y, cout, cout, 1);
    if (block == 5) y = b.rare(y);
    std::string skip = down ? conv(b, x, c, cout, 2) : x;
    x = b.op("Relu", {b.op("Add", {y, skip})});
    c = cout;
  }
  x = b.op("GlobalAveragePool", {x});
  x = b.op("Flatten", {x});
  x = b.pad_to(x, 69);
  x = b.op("Gemm", {x, b.weight({10, c}, 0.2f), b.weight({10}, 0.1f)});
  Builder::attr_i(b.g->mutable_node(b.g->node_size() - 1), "transB", 1);
  b.io("input", {1, 3, 32, 32}, x);
  return b.model;
}

std::string layer_norm(Builder& b, const std::string& x) {
  std::string mean = b.op("ReduceMean", {x});
  Builder::attr_ints(b.g->mutable_node(b.g->node_size() - 1), "axes", {-1});
  std::string d = b.op("Sub", {x, mean});
  std::string var = b.op("ReduceMean", {b.op("Pow", {d, b.scalar(2.0f)})});
  Builder::attr_ints(b.g->mutable_node(b.g->node_size() - 1), "axes", {-1});
  std::string norm = b.op("Div", {d, b.op("Sqrt", {b.op("Add", {var, b.scalar(1e-5f)})})});
  return b.op("Add", {b.op("Mul", {norm, b.weight({16}, 1.0f)}), b.weight({16}, 0.1f)});
}

onnx::ModelProto transformer611() {
  Builder b("transformer611", 13);
  const int64_t seq = 4, hidden = 16, heads = 2, dh = 8;
  std::string x = b.op("Add", {"input", b.weight({seq, hidden}, 0.1f)});  // position embedding
  for (int layer = 0; layer < 12; ++layer) {
    std::string h = layer_norm(b, x);
    std::string qkv[3];
    for (auto& t : qkv) {
      t = b.op("Add",
               {b.op("MatMul", {h, b.weight({hidden, hidden}, 0.3f)}), b.weight({hidden}, 0.1f)});
      t = b.op("Reshape", {t, b.ints({1, seq, heads, dh})});
      t = b.op("Transpose", {t});
      Builder::attr_ints(b.g->mutable_node(b.g->node_size() - 1), "perm", {0, 2, 1, 3});
    }
    std::string kt = b.op("Transpose", {qkv[1]});
    Builder::attr_ints(b.g->mutable_node(b.g->node_size() - 1), "perm", {0, 1, 3, 2});
    std::string s = b.op("Div", {b.op("MatMul", {qkv[0], kt}), b.scalar(std::sqrt(8.0f))});
    if (layer == 8) s = b.rare(s);
    auto* sm = b.node("Softmax", {s});
    Builder::attr_i(sm, "axis", -1);
    std::string a = b.op("MatMul", {sm->output(0), qkv[2]});
    a = b.op("Transpose", {a});
    Builder::attr_ints(b.g->mutable_node(b.g->node_size() - 1), "perm", {0, 2, 1, 3});
    a = b.op("Reshape", {a, b.ints({1, seq, hidden})});
    a = b.op("Add",
             {b.op("MatMul", {a, b.weight({hidden, hidden}, 0.3f)}), b.weight({hidden}, 0.1f)});
    x = b.op("Add", {x, a});
    h = layer_norm(b, x);
    std::string f =
        b.op("Add", {b.op("MatMul", {h, b.weight({hidden, 32}, 0.3f)}), b.weight({32}, 0.1f)});
    // GELU, sigmoid form: f * sigmoid(1.702 f)
    f = b.op("Mul", {f, b.op("Sigmoid", {b.op("Mul", {f, b.scalar(1.702f)})})});
    f = b.op("Add", {b.op("MatMul", {f, b.weight({32, hidden}, 0.3f)}), b.weight({hidden}, 0.1f)});
    x = b.op("Add", {x, f});
  }
  x = layer_norm(b, x);
  x = b.pad_to(x, 611);
  b.io("input", {1, seq, hidden}, x);
  return b.model;
}

onnx::ModelProto dag1994() {
  Builder b("dag1994", 13);
  std::vector<std::string> values = {"input"};
  const std::string scale = b.weight({32}, 1.0f), bias = b.weight({32}, 0.2f);
  while (b.g->node_size() < 1993) {
    const size_t k = values.size();
    std::string x;
    switch (k % 4) {
      case 0:
        x = b.op("Mul", {values[k - 1], scale});
        break;
      case 1:
        x = b.op("Add", {values[k - 1], bias});
        break;
      case 2:
        x = b.op("Tanh", {values[k - 1]});
        break;
      default:  // a skip connection from up to 16 values back
        x = b.op("Add", {values[k - 1], values[k - 1 - std::min<size_t>(k - 1, 3 + k % 13)]});
    }
    if (b.g->node_size() == 1400) x = b.rare(x);
    values.push_back(x);
  }
  std::string out = b.op("Tanh", {values.back()});
  b.io("input", {1, 32}, out);
  return b.model;
}

// A chain of n nodes alternating Mul and Tanh, the Log at 60% of it.
onnx::ModelProto chain(int n) {
  Builder b("chain" + std::to_string(n), 13);
  std::string x = "input";
  const std::string w = b.weight({16}, 1.0f);
  while (b.g->node_size() < n) {
    x = b.g->node_size() % 2 ? b.op("Tanh", {x}) : b.op("Mul", {x, w});
    if (b.g->node_size() == n * 3 / 5) x = b.rare(x);
  }
  const std::vector<int64_t> row{1, 16};
  b.io("input", row, x, &row);
  return b.model;
}

// Declares `out` (a float [1, 16] tensor) as the output of `graph`, an If branch.
void branch_output(onnx::GraphProto* graph, const std::string& out) {
  auto* vo = graph->add_output();
  vo->set_name(out);
  vo->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 16})
    vo->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
}

// An If node on `cond` with both branches empty, added to b's current graph; returns it.
onnx::NodeProto* if_node(Builder& b, const std::string& cond, const std::string& name) {
  auto* n = b.node("If", {cond});
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* a = n->add_attribute();
    a->set_name(branch);
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name(name + "_" + branch);
  }
  return n;
}

onnx::GraphProto* branch(onnx::NodeProto* n, int k) { return n->mutable_attribute(k)->mutable_g(); }

// Issue 18's nested-If case: the failing op sits two If levels down.
onnx::ModelProto nested_if() {
  Builder b("nested_if", 13);
  onnx::GraphProto* main = b.g;
  std::string x = "input";
  const std::string w = b.weight({16}, 1.0f);
  while (b.g->node_size() < 20) x = b.g->node_size() % 2 ? b.op("Tanh", {x}) : b.op("Mul", {x, w});
  // Always true: the largest element of tanh/mul values is above -1e9.
  const std::string cond = b.op("Greater", {b.op("ReduceMax", {x}), b.scalar(-1e9f)});
  onnx::NodeProto* outer = if_node(b, cond, "outer");
  const std::string outer_out = outer->output(0);
  // outer then: a = Tanh(x); inner If; outer else: Identity(x).
  b.g = branch(outer, 0);
  const std::string a = b.op("Tanh", {x});
  onnx::NodeProto* inner = if_node(b, cond, "inner");
  branch_output(b.g, inner->output(0));
  b.g = branch(inner, 0);
  branch_output(b.g, b.op("Tanh", {b.rare(b.op("Tanh", {a}))}));
  b.g = branch(inner, 1);
  branch_output(b.g, b.op("Identity", {a}));
  b.g = branch(outer, 1);
  branch_output(b.g, b.op("Identity", {x}));
  b.g = main;
  x = outer_out;
  while (b.g->node_size() < 41) x = b.g->node_size() % 2 ? b.op("Tanh", {x}) : b.op("Mul", {x, w});
  const std::vector<int64_t> row{1, 16};
  b.io("input", row, x, &row);
  return b.model;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make-reduce-models OUT_DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::pair<const char*, onnx::ModelProto> models[] = {
      {"resnet70.onnx", resnet70()},  {"transformer611.onnx", transformer611()},
      {"dag1994.onnx", dag1994()},    {"chain300.onnx", chain(300)},
      {"chain50.onnx", chain(50)},    {"chain2000.onnx", chain(2000)},
      {"nested_if.onnx", nested_if()}};
  for (const auto& [name, m] : models) {
    if (onnxdbg::Status st = onnxdbg::save_model(m, dir / name); !st) {
      std::cerr << "make-reduce-models: " << st.to_string() << "\n";
      return 1;
    }
  }
  return 0;
}
