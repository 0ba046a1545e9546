// The official models' Keras ResNet v1 builders, shared by examples/resnet.cpp, bench/ and the
// GPU suite (tests/gpu) so that all three train the same networks:
//  - cifar_resnet(depth): ResNet-20/32/56 for 32x32x3 (official/benchmark/models/resnet_cifar_model.py);
//  - resnet50(): ResNet-50 v1.5 for 224x224x3 (official/legacy/image_classification/resnet/resnet_model.py).
#pragma once
#include <kerascpp/kerascpp.hpp>

#include <cmath>
#include <cstdint>
#include <string>

namespace examples::resnet {

namespace K = kerascpp;

// The per-model conv and BatchNormalization settings. CIFAR: momentum 0.997
// (resnet_cifar_model.BATCH_NORM_DECAY), convs with biases; ResNet-50: momentum 0.9
// (resnet_model.resnet50's batch_norm_decay), no conv biases. epsilon is 1e-5 in both.
struct Config {
  float momentum;
  bool conv_bias;
  float l2;  // resnet_cifar_model.L2_WEIGHT_DECAY 2e-4, resnet_model.L2_WEIGHT_DECAY 1e-4
  float epsilon = 1e-5f;
};

// Conv2D (he_normal, L2 on the kernel and, where there is one, the bias) then BatchNormalization.
inline K::KerasTensor conv_bn(K::KerasTensor x, std::int64_t filters, std::int64_t kernel, std::int64_t stride,
                              K::Padding padding, const std::string& conv_name, const std::string& bn_name,
                              const Config& c) {
  x = K::layers::Conv2D(filters, kernel,
                        {.strides = stride,
                         .padding = padding,
                         .use_bias = c.conv_bias,
                         .kernel_initializer = "he_normal",
                         .kernel_regularizer = K::regularizers::L2(c.l2),
                         .bias_regularizer = c.conv_bias ? K::regularizers::L2(c.l2) : K::regularizers::Regularizer(),
                         .name = conv_name})(x);
  return K::layers::BatchNormalization({.momentum = c.momentum, .epsilon = c.epsilon, .name = bn_name})(x);
}

inline K::KerasTensor conv_bn(K::KerasTensor x, std::int64_t filters, std::int64_t kernel, std::int64_t stride,
                              const std::string& conv_name, const std::string& bn_name, const Config& c) {
  return conv_bn(x, filters, kernel, stride, kernel == 1 ? K::Padding::valid : K::Padding::same, conv_name, bn_name, c);
}

inline K::KerasTensor relu(K::KerasTensor x) { return K::layers::Activation("relu")(x); }

// The final Dense layer with L2 on its kernel and bias. ResNet-50's kernel starts
// RandomNormal(stddev=0.01) (kerascpp's named initializers have no plain normal, so it is filled
// here, seeded by set_random_seed); CIFAR's starts he_normal.
inline K::KerasTensor classifier(K::KerasTensor x, int num_classes, const std::string& activation,
                                 const std::string& name, float l2, bool random_normal) {
  K::LayerRef dense = K::layers::Dense(num_classes, {.activation = activation,
                                                     .kernel_initializer = "he_normal",
                                                     .kernel_regularizer = K::regularizers::L2(l2),
                                                     .bias_regularizer = K::regularizers::L2(l2),
                                                     .name = name});
  x = dense(x);
  if (!random_normal) return x;
  K::Variable& kernel = static_cast<K::layers::DenseLayer&>(*dense).kernel();
  K::Tensor init(kernel.shape(), K::DType::float32);
  K::Rng rng(K::next_random_seed());
  float* p = init.data<float>();
  for (std::int64_t i = 0, n = init.numel(); i < n; ++i) p[i] = static_cast<float>(0.01 * rng.normal());
  kernel.assign(init);
  return x;
}

// Two 3x3 convs; the first block of a stage (`projection`) has a strided 1x1 conv + BN shortcut.
inline K::KerasTensor basic_block(K::KerasTensor x, std::int64_t filters, std::int64_t stride, bool projection,
                                  const std::string& name, const Config& c) {
  K::KerasTensor shortcut = x;
  if (projection) shortcut = conv_bn(x, filters, 1, stride, "res" + name + "_branch1", "bn" + name + "_branch1", c);
  K::KerasTensor y = relu(conv_bn(x, filters, 3, stride, "res" + name + "_branch2a", "bn" + name + "_branch2a", c));
  y = conv_bn(y, filters, 3, 1, "res" + name + "_branch2b", "bn" + name + "_branch2b", c);
  return relu(K::layers::Add()({y, shortcut}));
}

// 1x1 (filters) -> 3x3 (filters, strided) -> 1x1 (4*filters); projection shortcut as above.
inline K::KerasTensor bottleneck_block(K::KerasTensor x, std::int64_t filters, std::int64_t stride, bool projection,
                                       const std::string& name, const Config& c) {
  K::KerasTensor shortcut = x;
  if (projection) shortcut = conv_bn(x, 4 * filters, 1, stride, "res" + name + "_branch1", "bn" + name + "_branch1", c);
  K::KerasTensor y = relu(conv_bn(x, filters, 1, 1, "res" + name + "_branch2a", "bn" + name + "_branch2a", c));
  y = relu(conv_bn(y, filters, 3, stride, "res" + name + "_branch2b", "bn" + name + "_branch2b", c));
  y = conv_bn(y, 4 * filters, 1, 1, "res" + name + "_branch2c", "bn" + name + "_branch2c", c);
  return relu(K::layers::Add()({y, shortcut}));
}

// ResNet-(6n+2) for 32x32 images: ZeroPadding2D(1) + "valid" 3x3 conv16, then 3 stages of n
// basic blocks with 16/32/64 filters. As in resnet_cifar_model.resnet_block, every stage opens
// with a projection block (stride 1 for the first stage, 2 for the others).
inline K::Model cifar_resnet(int depth, int num_classes) {
  const int n = (depth - 2) / 6;
  const Config c{.momentum = 0.997f, .conv_bias = true, .l2 = 2e-4f};
  auto inputs = K::Input({32, 32, 3});
  K::KerasTensor x = K::layers::ZeroPadding2D(1, {.name = "conv1_pad"})(inputs);
  x = relu(conv_bn(x, 16, 3, 1, K::Padding::valid, "conv1", "bn_conv1", c));
  const std::int64_t filters[] = {16, 32, 64};
  for (int stage = 0; stage < 3; ++stage)
    for (int block = 0; block < n; ++block)
      x = basic_block(x, filters[stage], block == 0 && stage > 0 ? 2 : 1, block == 0,
                      std::to_string(stage + 2) + "block_" + std::to_string(block), c);
  x = K::layers::GlobalAveragePooling2D({.name = "avg_pool"})(x);
  auto outputs = classifier(x, num_classes, "softmax", "fc10", c.l2, false);
  return K::Model(inputs, outputs, "resnet" + std::to_string(depth));
}

// ResNet-50 for 224x224 images: ZeroPadding2D(3) + "valid" 7x7/2 conv64, 3x3/2 max pool,
// bottleneck stages [3, 4, 6, 3].
inline K::Model resnet50(int num_classes) {
  const Config c{.momentum = 0.9f, .conv_bias = false, .l2 = 1e-4f};
  auto inputs = K::Input({224, 224, 3});
  K::KerasTensor x = K::layers::ZeroPadding2D(3, {.name = "conv1_pad"})(inputs);
  x = relu(conv_bn(x, 64, 7, 2, K::Padding::valid, "conv1", "bn_conv1", c));
  x = K::layers::MaxPooling2D(3, {.strides = 2, .padding = K::Padding::same})(x);
  const int blocks[] = {3, 4, 6, 3};
  const std::int64_t filters[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage)
    for (int block = 0; block < blocks[stage]; ++block)
      x = bottleneck_block(x, filters[stage], block == 0 && stage > 0 ? 2 : 1, block == 0,
                           std::to_string(stage + 2) + static_cast<char>('a' + block), c);
  x = K::layers::GlobalAveragePooling2D()(x);
  x = classifier(x, num_classes, "linear", "fc1000", c.l2, true);
  auto outputs = K::layers::Activation("softmax")(x);  // separate, as in the official model
  return K::Model(inputs, outputs, "resnet50");
}

// Random images (truncated normal, mean 127, stddev 60, like the official get_synth_input_fn)
// and random labels: a pool of `pool` examples, repeated forever and batched.
inline K::Dataset synthetic_data(const K::Shape& image_shape, int num_classes, std::int64_t pool,
                                 std::int64_t batch_size, std::uint64_t seed) {
  K::Shape x_shape{pool};
  x_shape.insert(x_shape.end(), image_shape.begin(), image_shape.end());
  K::Tensor x(x_shape, K::DType::float32);
  K::Tensor y({pool}, K::DType::int32);
  K::Rng rng(seed ^ 0x5E5E7u);
  float* px = x.data<float>();
  for (std::int64_t i = 0, n = x.numel(); i < n; ++i) {
    double z;
    do z = rng.normal();
    while (std::abs(z) > 2.0);
    px[i] = static_cast<float>(127.0 + 60.0 * z);
  }
  std::int32_t* py = y.data<std::int32_t>();
  for (std::int64_t i = 0; i < pool; ++i) py[i] = static_cast<std::int32_t>(rng.next_u64() % num_classes);
  return K::Dataset::from_tensor_slices(x, y).repeat().batch(batch_size, /*drop_remainder=*/true).prefetch(2);
}

}  // namespace examples::resnet
