// Pooling for inference (Backend::pool2d_forward_inference, which predict and evaluate take):
// the training op's output bit for bit without the state its backward needs, on every CPU path
// and through the Backend default; and a custom loop that runs its backward after a forward
// with training = false still gets the training forward's gradients.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "bit_equal.hpp"
#include "full_mantissa_tensor.hpp"
#include "kerascpp/kerascpp.hpp"
#include "pool_cases.hpp"

namespace K = kerascpp;
using kerascpp_test::bit_equal;

TEST_CASE("pool2d_forward_inference gives the training op's output bit for bit, with and without the ReLU" *
          doctest::test_suite("16-bit activations")) {
  auto be = K::make_cpu_backend(2);
  kerascpp_test::for_each_run(*be, [&](const kerascpp_test::PoolCase& c, K::DType dtype, bool nan_input) {
    // z: a ReLU's input (negatives, ties at 0, a -0 and with nan_input a NaN).
    const K::Tensor z = kerascpp_test::relu_pair(*be, c, dtype, nan_input).z;
    K::Tensor trained, workspace, inferred, fallback;
    be->pool2d_forward(z, c.g, trained, workspace);
    be->pool2d_forward_inference(z, c.g, inferred);
    be->K::Backend::pool2d_forward_inference(z, c.g, fallback);
    CHECK(bit_equal(inferred, trained));
    CHECK(bit_equal(fallback, trained));

    K::Tensor y;
    if (c.g.kind != K::PoolKind::max) {  // only max pooling commutes with the ReLU
      CHECK_THROWS_AS(be->pool2d_forward_inference(z, c.g, y, true), K::ValueError);
      CHECK_THROWS_AS(be->K::Backend::pool2d_forward_inference(z, c.g, y, true), K::ValueError);
      return;
    }
    K::Tensor trained_relu, relu_workspace, inferred_relu, fallback_relu;
    be->pool2d_forward_relu(z, c.g, trained_relu, relu_workspace);
    be->pool2d_forward_inference(z, c.g, inferred_relu, true);
    be->K::Backend::pool2d_forward_inference(z, c.g, fallback_relu, true);
    CHECK(bit_equal(inferred_relu, trained_relu));
    CHECK(bit_equal(fallback_relu, trained_relu));
  });
}

TEST_CASE(
    "a pooling network predicts the training forward's bits and trains the same from a forward without training") {
  const K::Tensor x = kerascpp_test::full_mantissa_tensor({8, 12, 12, 2}, 9);
  // Conv2D(relu) into disjoint max pooling (its ReLU moved into the pooling), into an overlapping
  // padded one (oneDNN's), an average pooling and a global max pooling.
  auto build = [] {
    auto in = K::Input({12, 12, 2});
    auto h = K::layers::Conv2D(4, 3, {.padding = K::Padding::same, .activation = "relu"})(in);
    h = K::layers::MaxPooling2D(2)(h);
    h = K::layers::Conv2D(6, 3, {.padding = K::Padding::same, .activation = "relu"})(h);
    h = K::layers::MaxPooling2D(3, {.strides = 2, .padding = K::Padding::same})(h);
    h = K::layers::AveragePooling2D(2, {.strides = 1})(h);
    return K::Model(in, K::layers::Dense(3)(K::layers::GlobalMaxPooling2D()(h)));
  };
  for (int replicas : {1, 2}) {
    CAPTURE(replicas);
    K::set_random_seed(5);
    K::Model with_training = build();
    K::Model without = build();
    without.set_weights(with_training.get_weights());
    for (K::Model* m : {&with_training, &without})
      m->compile({.optimizer = K::optimizers::SGD(0.1),
                  .loss = "mse",
                  .distribute = K::distribute::MirroredStrategy<>(replicas)});

    std::vector<K::Tensor> trained_outputs(static_cast<std::size_t>(replicas));
    const K::Tensor grad = kerascpp_test::full_mantissa_tensor({8 / replicas, 3}, 4);
    auto step = [&](K::Model& m, bool training) {
      m.distribute_strategy().run([&](K::ReplicaContext& ctx) {
        const K::Tensor out = m.forward(ctx, m.distribute_strategy().shard(ctx, x), training);
        if (training) trained_outputs[static_cast<std::size_t>(ctx.replica_id)] = out.clone();
        m.backward(ctx, grad);
        m.apply_gradients(ctx);
      });
      m.optimizer().finish_step();
    };
    const K::Tensor predicted = with_training.predict_on_batch(x);
    const std::vector<K::Tensor> initial = with_training.get_weights();
    step(with_training, true);
    step(without, false);
    // The training forward's rows, replica by replica, are predict's.
    std::vector<float> t;
    for (const K::Tensor& out : trained_outputs) {
      const std::vector<float> v = out.to_vector();
      t.insert(t.end(), v.begin(), v.end());
    }
    REQUIRE(static_cast<std::int64_t>(t.size()) == predicted.numel());
    CHECK(bit_equal(K::Tensor::from_vector(predicted.shape(), t), predicted));
    // The weights after a step from each forward.
    const auto a = with_training.get_weights(), b = without.get_weights();
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(bit_equal(a[i], b[i]));
    CHECK_FALSE(bit_equal(a[0], initial[0]));  // the step changed them
  }
}
