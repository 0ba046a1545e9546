// The layers of issue 50's first batch (Masking, Permute, RepeatVector, Maximum, padding,
// cropping, upsampling, 1-D/3-D and global pooling, UnitNormalization, RMSNormalization) and its
// convolutions (SeparableConv1D/2D, DepthwiseConv1D, Conv1DTranspose, GroupNormalization) under
// MirroredStrategy: 2 CPU replicas train a model of them to the weights one device gives.
#include <doctest/doctest.h>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"

namespace K = kerascpp;

namespace {

K::Model sequence_model() {
  K::set_random_seed(11);
  auto in = K::Input({8, 3});
  auto x = K::layers::Masking({.mask_value = 0.f})(in);
  x = K::layers::Dense(4, {.activation = "tanh"})(x);
  auto a = K::layers::MaxPooling1D(2)(K::layers::Cropping1D({0, 1})(K::layers::ZeroPadding1D(1)(x)));
  auto b = K::layers::AveragePooling1D(2)(K::layers::UpSampling1D(2)(K::layers::AveragePooling1D(2)(x)));
  x = K::layers::Maximum()({a, b});   // (4, 4)
  x = K::layers::Permute({2, 1})(x);  // (4, 4): features x steps
  x = K::layers::RMSNormalization()(K::layers::UnitNormalization()(K::layers::Dense(3)(x)));  // (4, 3)
  x = K::layers::GlobalAveragePooling1D()(x);                                                 // (3)
  x = K::layers::Flatten()(K::layers::RepeatVector(2)(x));                                    // (6)
  auto out = K::layers::Dense(3, {.activation = "softmax"})(x);
  return K::Model(in, out);
}

K::Model convolution_model() {
  K::set_random_seed(12);
  auto in = K::Input({6, 6, 3});
  auto x = K::layers::SeparableConv2D(
      4, 3, {.strides = 2, .padding = K::Padding::same, .depth_multiplier = 2, .activation = "tanh"})(in);
  x = K::layers::GroupNormalization({.groups = 2})(x);  // (3, 3, 4)
  x = K::layers::Reshape({9, 4})(x);
  x = K::layers::DepthwiseConv1D(2, {.depth_multiplier = 2})(x);                  // (8, 8)
  x = K::layers::SeparableConv1D(3, 3, {.strides = 2, .activation = "tanh"})(x);  // (3, 3)
  x = K::layers::Conv1DTranspose(2, 2, {.strides = 2})(x);                        // (6, 2)
  auto out = K::layers::Dense(3, {.activation = "softmax"})(K::layers::Flatten()(x));
  return K::Model(in, out);
}

// x [32, example_shape...] normal with every fourth run of 3 values zero (a step of
// sequence_model's 3 features: masked; a pixel of convolution_model's 3 channels).
std::vector<K::Tensor> train(K::Model (*make)(), const K::Shape& example_shape, K::distribute::Strategy strategy) {
  K::Model model = make();
  model.compile(
      {.optimizer = K::optimizers::SGD(0.1), .loss = "sparse_categorical_crossentropy", .distribute = strategy});
  K::Rng rng(5);
  K::Shape shape{32};
  shape.insert(shape.end(), example_shape.begin(), example_shape.end());
  K::Tensor x(shape, K::DType::float32, K::Device{});
  K::Tensor y({32}, K::DType::int32, K::Device{});
  for (std::int64_t i = 0; i < x.numel(); ++i)
    x.data<float>()[i] = (i / 3) % 4 == 3 ? 0.f : static_cast<float>(rng.normal());
  for (std::int64_t i = 0; i < 32; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 3);
  model.fit(K::Dataset::from_tensor_slices(x, y).batch(8), {.epochs = 2, .verbose = 0});
  return model.get_weights();
}

}  // namespace

TEST_CASE("mirrored: 2 CPU replicas train a model of the new layers to one device's weights") {
  const auto one = train(sequence_model, {8, 3}, K::distribute::OneDeviceStrategy("cpu:0"));
  const auto two = train(sequence_model, {8, 3}, K::distribute::MirroredStrategy<>(2));
  const double diff = mirrored_fixture::max_abs_diff(one, two);
  MESSAGE("max|dw| = " << diff);
  CHECK(diff <= 1e-5);
}

TEST_CASE("mirrored: 2 CPU replicas train a model of the new convolutions to one device's weights") {
  const auto one = train(convolution_model, {6, 6, 3}, K::distribute::OneDeviceStrategy("cpu:0"));
  const auto two = train(convolution_model, {6, 6, 3}, K::distribute::MirroredStrategy<>(2));
  const double diff = mirrored_fixture::max_abs_diff(one, two);
  MESSAGE("max|dw| = " << diff);
  CHECK(diff <= 1e-5);
}
