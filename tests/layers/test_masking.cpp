// masking: run_layer_test, the mask and zeroed steps, and the mask reaching GlobalAveragePooling1D
// in a model (the mean over the unmasked steps only, as Keras).
#include <limits>

#include "expect_layer_passes.hpp"
#include "layer_on_cpu.hpp"

TEST_CASE("layer test: Masking") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::Masking({.mask_value = 0.5f})); },
                       .input_shapes = {{3, 2}},
                       .expected_output_shape = K::Shape{3, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0});
}

namespace {
// (2 examples, 4 steps, 3 features): step t of example b equals the mask value -1 everywhere where
// (b, t) is (0, 1), (0, 3) or (1, 0); elsewhere one feature differs.
K::Tensor steps_with_masked() {
  return layer_on_cpu::tensor_of({2, 4, 3}, [](std::int64_t i) {
    const std::int64_t bt = i / 3, f = i % 3;
    const bool masked = bt == 1 || bt == 3 || bt == 4;
    return masked || f != (bt % 3) ? -1.f : 0.1f * static_cast<float>(i);
  });
}
bool is_masked(std::int64_t bt) { return bt == 1 || bt == 3 || bt == 4; }
}  // namespace

TEST_CASE("Masking: masked steps output zeros, take no gradient, and make the (batch, steps) mask") {
  using namespace layer_on_cpu;
  Replica rep(true);
  const K::Tensor x = steps_with_masked();
  K::LayerRef masking = K::layers::Masking({.mask_value = -1.f});
  K::LayerState st;
  const K::Tensor y = forward(rep, masking, {x}, st).at(0);
  const K::Tensor mask = masking->compute_output_masks(rep.ctx, {x}, {y}, st).at(0);
  REQUIRE(mask.shape() == K::Shape{2, 4});
  REQUIRE(mask.dtype() == K::DType::uint8);
  const K::Tensor dy = tensor_of(x.shape(), [](std::int64_t) { return 1.f; });
  const K::Tensor dx = masking->backward(rep.ctx, {x}, {y}, {dy}, st).at(0);
  const auto xv = x.to_vector(), yv = y.to_vector(), mv = mask.to_vector(), dxv = dx.to_vector();
  for (std::int64_t bt = 0; bt < 8; ++bt) {
    CHECK(mv[static_cast<std::size_t>(bt)] == (is_masked(bt) ? 0.f : 1.f));
    for (std::int64_t f = 0; f < 3; ++f) {
      const auto i = static_cast<std::size_t>(bt * 3 + f);
      CHECK(yv[i] == (is_masked(bt) ? 0.f : xv[i]));
      CHECK(dxv[i] == (is_masked(bt) ? 0.f : 1.f));
    }
  }
  CHECK_THROWS_AS(K::layers::Masking({.mask_value = std::numeric_limits<float>::quiet_NaN()}), K::ValueError);
}

TEST_CASE("Masking -> GlobalAveragePooling1D: the mean over the unmasked steps") {
  auto in = K::Input({4, 3});
  auto pooled = K::layers::GlobalAveragePooling1D()(K::layers::Masking({.mask_value = -1.f})(in));
  K::Model model(in, pooled);
  const K::Tensor x = steps_with_masked();
  const auto yv = model.predict_on_batch(x).to_vector();
  const auto xv = x.to_vector();
  REQUIRE(yv.size() == 6);
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t f = 0; f < 3; ++f) {
      double sum = 0;
      int kept = 0;
      for (std::int64_t t = 0; t < 4; ++t)
        if (!is_masked(b * 4 + t)) {
          sum += xv[static_cast<std::size_t>((b * 4 + t) * 3 + f)];
          ++kept;
        }
      CHECK(yv[static_cast<std::size_t>(b * 3 + f)] == doctest::Approx(sum / kept).epsilon(1e-6));
    }
}
