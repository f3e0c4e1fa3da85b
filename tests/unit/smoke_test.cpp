// Smoke test of the reference interpreter on an op-free graph (Identity-free pass-through).
#include "test_util.h"

namespace onnxdbg {
TEST(Float16, RoundTrip) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 1e-9f, 70000.0f}) {
    Float16 h(f);
    float back = static_cast<float>(h);
    if (f > 65520.0f)
      EXPECT_TRUE(std::isinf(back));
    else if (std::abs(f) < 2.98e-08f)
      EXPECT_EQ(back, 0.0f);
    else
      EXPECT_NEAR(back, f, std::abs(f) * 1e-3) << f;
  }
}
}  // namespace onnxdbg
