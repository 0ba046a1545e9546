// random_flip: run_layer_test (inference for the gradient check: training draws anew each call),
// and in training every image comes out as itself or its flip for the mode, both happening, the
// same draws for the same seeds; inference leaves the batch as it is.
#include "expect_layer_passes.hpp"
#include "kerascpp/layers/random_flip.hpp"
#include "layer_on_cpu.hpp"

#include <set>
#include <string>
#include <vector>

TEST_CASE("layer test: RandomFlip") {
  expect_layer_passes({.make = [] { return K::LayerRef(K::layers::RandomFlip("horizontal", {.seed = 5})); },
                       .input_shapes = {{3, 4, 2}},
                       .expected_output_shape = K::Shape{3, 4, 2},
                       .expected_trainable_weights = 0,
                       .expected_non_trainable_weights = 0,
                       .gradient_options = {.training = false}});
}

namespace {

using namespace layer_on_cpu;

// Image n of x (N, H, W, C) flipped left-right and/or upside down, as a flat vector.
std::vector<float> image(const K::Tensor& x, std::int64_t n, bool horizontal, bool vertical) {
  const auto v = x.to_vector();
  const std::int64_t H = x.dim(1), W = x.dim(2), C = x.dim(3);
  std::vector<float> out;
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t w = 0; w < W; ++w)
      for (std::int64_t c = 0; c < C; ++c)
        out.push_back(v[static_cast<std::size_t>(
            offset(x.shape(), {n, vertical ? H - 1 - h : h, horizontal ? W - 1 - w : w, c}))]);
  return out;
}

// Which of the four images (none, horizontal, vertical, both) output image n is: -1 for none.
int which_flip(const K::Tensor& x, const K::Tensor& y, std::int64_t n) {
  const std::vector<float> got = image(y, n, false, false);
  for (int k = 0; k < 4; ++k)
    if (got == image(x, n, (k & 1) != 0, (k & 2) != 0)) return k;
  return -1;
}

}  // namespace

TEST_CASE("RandomFlip: flips of the mode in training, drawn per image and replayed by the seeds") {
  const K::Tensor x = tensor_of({24, 3, 4, 2}, [](std::int64_t i) { return static_cast<float>(i); });
  for (const std::string mode : {"horizontal", "vertical", "horizontal_and_vertical"}) {
    CAPTURE(mode);
    Replica rep(true);
    rep.ctx.rng = K::Rng(17);
    K::LayerState st;
    const K::Tensor y = forward(rep, K::layers::RandomFlip(mode, {.seed = 9}), {x}, st).at(0);
    REQUIRE(y.shape() == x.shape());
    std::set<int> kinds;
    for (std::int64_t n = 0; n < 24; ++n) kinds.insert(which_flip(x, y, n));
    const std::set<int> allowed = mode == "horizontal" ? std::set<int>{0, 1}
                                  : mode == "vertical" ? std::set<int>{0, 2}
                                                       : std::set<int>{0, 1, 2, 3};
    CHECK(kinds == allowed);  // fixed seeds; 24 images are enough for every kind to turn up
    Replica again(true);
    again.ctx.rng = K::Rng(17);
    K::LayerState st2;
    CHECK(forward(again, K::layers::RandomFlip(mode, {.seed = 9}), {x}, st2).at(0).to_vector() == y.to_vector());
    // The gradient goes back through the same flips: dy = y gives back x.
    const K::Tensor dx = K::layers::RandomFlip(mode, {.seed = 9})->backward(rep.ctx, {x}, {y}, {y}, st).at(0);
    CHECK(dx.to_vector() == x.to_vector());
  }
  Replica inference(false);
  K::LayerState st;
  CHECK(forward(inference, K::layers::RandomFlip("horizontal", {.seed = 1}), {x}, st).at(0).to_vector() ==
        x.to_vector());
  CHECK_THROWS_AS(K::layers::RandomFlip("diagonal"), K::ValueError);
}
