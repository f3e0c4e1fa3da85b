// Kernel versions: a kernel runs only the schema versions it covers ([since, through]), so an op
// version whose semantics changed (DFT-20 moved `axis` to an input) falls to its function body or
// is refused by name, never run by an older version's kernel (issue 20). Walks every schema of the
// linked libonnx and every opset ONNX 1.23 knows.
#include <gtest/gtest.h>

#include <algorithm>

#include "../test_util.h"
#include "core/onnx.h"
#include "onnx/defs/schema.h"
#include "reference/function_body.h"
#include "reference/interpreter.h"
#include "reference/kernel.h"
#include "reference/op_versions.h"

namespace onnxdbg {
namespace {

using reference::KernelDef;
using reference::KernelRegistry;
using reference::op_support;
using reference::OpSupport;
using reference::version_in_force;
using testing::expect_tensor_near;
using testing::parse_text_model;
using testing::run_reference;

Status noop_kernel(reference::KernelContext&) { return Status::ok(); }

// A model with one node of `op_type` (no inputs or outputs) at `opset` of `domain`.
onnx::ModelProto one_node_model(const std::string& domain, const std::string& op_type, int opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain(domain);
  o->set_version(opset);
  if (!domain.empty()) {
    auto* d = m.add_opset_import();
    d->set_domain("");
    d->set_version(17);
  }
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type(op_type);
  n->set_domain(domain);
  m.mutable_graph()->set_name("g");
  return m;
}

TEST(KernelVersions, EverySchemaRunsByKernelOrBodyOrIsRefused) {
  const KernelRegistry& r = KernelRegistry::global();
  int kernels = 0, bodies = 0, refused = 0;
  for (const onnx::OpSchema& s : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (s.domain() != "" && s.domain() != "ai.onnx.ml") continue;
    const int v = s.SinceVersion();
    SCOPED_TRACE(s.domain() + "." + s.Name() + "-" + std::to_string(v));
    ASSERT_EQ(version_in_force(s.domain(), s.Name(), v), v);
    const OpSupport support = op_support(s.domain(), s.Name(), v);
    const KernelDef* k = r.find(s.domain(), s.Name(), v);
    if (k) {
      EXPECT_EQ(support, OpSupport::kKernel);
      EXPECT_LE(k->since_version, v);
      EXPECT_GE(r.through(*k), v);
      ++kernels;
    } else if (support == OpSupport::kFunctionBody) {
      EXPECT_TRUE(s.HasFunction() || s.HasContextDependentFunction());
      ++bodies;
    } else {
      EXPECT_EQ(support, OpSupport::kNone);
      const auto missing = reference::find_missing_kernels(one_node_model(s.domain(), s.Name(), v));
      ASSERT_EQ(missing.size(), 1u);
      EXPECT_EQ(missing[0].op_type, s.Name());
      auto in = reference::Interpreter::create(one_node_model(s.domain(), s.Name(), v));
      ASSERT_FALSE(in.has_value());
      EXPECT_NE(in.status().to_string().find("no kernel or function body for " + s.Name()),
                std::string::npos)
          << in.status().to_string();
      ++refused;
    }
  }
  // Nearly every newest version of ONNX 1.12 has a kernel of its own.
  EXPECT_GT(kernels, 150) << bodies << " bodies, " << refused << " refused";
}

TEST(KernelVersions, FindNeverReturnsAKernelOutsideItsRange) {
  const KernelRegistry& r = KernelRegistry::global();
  for (const std::string domain : {"", "ai.onnx.ml", "ai.onnx.preview.training"}) {
    const int newest = reference::newest_known_opset(domain);
    ASSERT_GE(newest, 1) << domain;
    for (const std::string& op : r.op_types(domain)) {
      const auto& versions = reference::schema_versions(domain, op);
      ASSERT_FALSE(versions.empty()) << domain << "." << op << " has a kernel but no schema";
      for (const KernelDef& k : r.kernels(domain, op)) {
        // A kernel starts at a schema version and ends at one at or after it.
        EXPECT_NE(std::find(versions.begin(), versions.end(), k.since_version), versions.end())
            << op << "-" << k.since_version << " is not a schema version";
        const int through = r.through(k);
        EXPECT_GE(through, k.since_version) << op << "-" << k.since_version;
        EXPECT_NE(std::find(versions.begin(), versions.end(), through), versions.end())
            << op << "-" << k.since_version << " covers through " << through
            << ", not a schema version";
      }
      for (int opset = 1; opset <= newest + 2; ++opset) {
        const KernelDef* k = r.find(domain, op, opset);
        const int v = version_in_force(domain, op, opset);
        if (opset > newest) {
          EXPECT_EQ(k, nullptr) << op << " at opset " << opset << ", past every known opset";
          continue;
        }
        if (!k) continue;
        EXPECT_LE(k->since_version, v) << op << " at opset " << opset;
        EXPECT_LE(v, r.through(*k)) << op << " at opset " << opset;
      }
    }
  }
}

TEST(KernelVersions, UndeclaredThroughKeepsOpset17AsBefore) {
  KernelRegistry r;
  r.add("Sin", 7, noop_kernel);
  r.add("Softmax", 1, noop_kernel);
  r.add("Softmax", 13, noop_kernel);
  r.add("DFT", 17, noop_kernel);
  // Sin-7 and Softmax-13 are the newest versions at opset 17, so they cover it.
  EXPECT_EQ(r.find("", "Sin", 17)->since_version, 7);
  EXPECT_EQ(r.find("", "Softmax", 12)->since_version, 1);
  EXPECT_EQ(r.find("", "Softmax", 17)->since_version, 13);
  EXPECT_EQ(r.through(*r.find("", "Softmax", 12)), 11);  // capped below the next kernel
  // Versions after 17 are not covered unless declared.
  EXPECT_EQ(r.find("", "Sin", 22), nullptr);
  EXPECT_EQ(r.find("", "DFT", 19)->since_version, 17);
  EXPECT_EQ(r.find("", "DFT", 20), nullptr);
  r.add("Cos", 7, noop_kernel).through(22);
  EXPECT_EQ(r.find("", "Cos", 22)->since_version, 7);
  EXPECT_EQ(r.find("", "Cos", 6), nullptr);  // before Cos-7
  // A kernel above 17 covers its own version only.
  r.add("Pad", 19, noop_kernel);
  EXPECT_EQ(r.through(*r.find("", "Pad", 20)), 19);
  EXPECT_EQ(r.find("", "Pad", 21), nullptr);
}

TEST(KernelVersions, OpsOnnxDoesNotDefineKeepTheSinceRule) {
  KernelRegistry r;
  r.add("Frobnicate", 2, noop_kernel, reference::HalfMode::kNative, "com.example");
  EXPECT_EQ(r.find("com.example", "Frobnicate", 1), nullptr);
  EXPECT_EQ(r.find("com.example", "Frobnicate", 2)->since_version, 2);
  EXPECT_EQ(r.find("com.example", "Frobnicate", 500)->since_version, 2);
}

TEST(KernelVersions, DftAtOpset20RunsItsOwnKernelNotDft17s) {
  const KernelRegistry& r = KernelRegistry::global();
  ASSERT_NE(r.find("", "DFT", 17), nullptr);
  EXPECT_EQ(r.find("", "DFT", 19), r.find("", "DFT", 17));
  EXPECT_EQ(version_in_force("", "DFT", 20), 20);
  // DFT-20 moved axis to input 3: the DFT-17 kernel must never run it.
  ASSERT_NE(r.find("", "DFT", 20), nullptr);
  EXPECT_EQ(r.find("", "DFT", 20)->since_version, 20);
  EXPECT_EQ(r.through(*r.find("", "DFT", 17)), 17);
}

TEST(KernelVersions, TypeOnlyVersionsAreDeclaredAndSemanticChangesAreNot) {
  const KernelRegistry& r = KernelRegistry::global();
  // Only element types were added: the kernel covers the new versions.
  for (const auto& [op, opset] : std::vector<std::pair<std::string, int>>{
           {"Sin", 22}, {"Cast", 21}, {"Reshape", 25}, {"Pad", 25}, {"Resize", 19}}) {
    const KernelDef* k = r.find("", op, opset);
    ASSERT_NE(k, nullptr) << op << " at opset " << opset;
    EXPECT_GE(r.through(*k), version_in_force("", op, opset)) << op;
  }
  // New inputs, attributes or modes: not covered.
  for (const auto& [op, opset] : std::vector<std::pair<std::string, int>>{{"DFT", 20},
                                                                          {"GridSample", 20},
                                                                          {"SpaceToDepth", 28},
                                                                          {"QuantizeLinear", 21},
                                                                          {"DequantizeLinear", 21},
                                                                          {"Mod", 28}}) {
    // Either refused or a kernel written for exactly that version, never the older one.
    const KernelDef* k = r.find("", op, opset);
    if (k) {
      EXPECT_EQ(k->since_version, version_in_force("", op, opset)) << op << " at opset " << opset;
    }
  }
  // SpaceToDepth-28 and Mod-28 have no kernel of their own: refused.
  EXPECT_EQ(r.find("", "SpaceToDepth", 28), nullptr);
  EXPECT_EQ(r.find("", "Mod", 28), nullptr);
  EXPECT_EQ(r.find("ai.onnx.ml", "LabelEncoder", 4)->since_version, 4);
  EXPECT_EQ(r.find("ai.onnx.ml", "LabelEncoder", 3)->since_version, 2);
}

}  // namespace
}  // namespace onnxdbg
