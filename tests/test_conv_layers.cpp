// Conv1D, DepthwiseConv2D and Conv2DTranspose: backward against finite differences (the
// public gradient checker), forward against naive loops written from Keras' definitions, and
// the errors bad inputs give. Python Keras itself is compared in
// tests/python/test_transformer_layers_interop.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace K = kerascpp;

namespace {

K::Tensor random_tensor(const K::Shape& shape, std::uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(K::shape_numel(shape)));
  for (auto& x : v) x = dist(gen);
  return K::Tensor::from_vector(shape, v);
}

K::Shape batched(std::int64_t n, K::Shape s) {
  s.insert(s.begin(), n);
  return s;
}

void require_gradients_ok(const K::LayerRef& layer, const K::Tensor& x, bool relu = false) {
  K::testing::GradientCheckOptions o;
  o.relu_outputs = relu;
  auto r = K::testing::check_layer_gradients(layer, {x}, o);
  CHECK_MESSAGE(r.passed(), r.summary());
}

// Every trainable variable gets random values (the bias too, so that it is not all zeros).
void randomize(const K::LayerRef& layer, std::uint32_t seed) {
  for (auto* v : layer->trainable_variables()) v->assign(random_tensor(v->shape(), seed++, -0.5f, 0.5f));
}

std::vector<float> predict(const K::LayerRef& layer, const K::Shape& in_shape, const K::Tensor& x) {
  auto in = K::Input(in_shape);
  K::Model model(in, layer(in));
  return model.predict(K::Dataset::from_tensor_slices(x).batch(x.dim(0)), {.verbose = 0}).to_vector();
}

void check_close(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-4).scale(1.0));
  }
}

}  // namespace

TEST_CASE("Conv1D: shapes, gradients against finite differences") {
  struct Case {
    const char* what;
    K::Shape input;
    std::int64_t filters, kernel;
    K::layers::Conv1DOptions options;
    K::Shape expected;
  };
  std::vector<Case> cases = {
      {"valid", {7, 3}, 4, 3, {.seed = 1}, {5, 4}},
      {"same, stride 2", {7, 2}, 3, 3, {.strides = 2, .padding = K::Padding::same, .seed = 2}, {4, 3}},
      {"causal", {6, 2}, 3, 3, {.padding = K::Padding::causal, .seed = 3}, {6, 3}},
      {"causal, stride 2, tanh",
       {7, 2},
       2,
       4,
       {.strides = 2, .padding = K::Padding::causal, .activation = "tanh", .seed = 4},
       {4, 2}},
      {"valid, stride 2, no bias", {8, 3}, 2, 2, {.strides = 2, .use_bias = false, .seed = 5}, {4, 2}},
  };
  std::uint32_t seed = 10;
  for (auto& c : cases) {
    CAPTURE(c.what);
    K::LayerRef conv = K::layers::Conv1D(c.filters, c.kernel, c.options);
    CHECK(conv(K::Input(c.input)).shape() == c.expected);
    CHECK(conv->trainable_variables()[0]->shape() == K::Shape{c.kernel, c.input[1], c.filters});
    randomize(conv, seed);
    require_gradients_ok(conv, random_tensor(batched(2, c.input), seed++));
  }
}

TEST_CASE("Conv1D: causal forward matches a naive loop (no output sees a later step)") {
  const std::int64_t steps = 6, cin = 2, filters = 3, k = 3, stride = 2;
  K::LayerRef conv = K::layers::Conv1D(filters, k, {.strides = stride, .padding = K::Padding::causal});
  (void)conv(K::Input({steps, cin}));
  randomize(conv, 3);
  K::Tensor x = random_tensor({2, steps, cin}, 4);
  auto xv = x.to_vector(), wv = conv->trainable_variables()[0]->value().to_vector(),
       bv = conv->trainable_variables()[1]->value().to_vector();
  const std::int64_t out_steps = (steps - 1) / stride + 1;
  std::vector<double> want;
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t o = 0; o < out_steps; ++o)
      for (std::int64_t f = 0; f < filters; ++f) {
        double acc = bv[f];
        for (std::int64_t t = 0; t < k; ++t) {
          const std::int64_t i = o * stride + t - (k - 1);  // k - 1 zeros in front
          if (i < 0) continue;
          for (std::int64_t c = 0; c < cin; ++c) acc += xv[(n * steps + i) * cin + c] * wv[(t * cin + c) * filters + f];
        }
        want.push_back(acc);
      }
  check_close(predict(conv, {steps, cin}, x), want);
}

TEST_CASE("DepthwiseConv2D: shapes, gradients against finite differences") {
  struct Case {
    const char* what;
    K::Shape input;
    K::Size2D kernel;
    K::layers::DepthwiseConv2DOptions options;
    K::Shape expected;
  };
  std::vector<Case> cases = {
      {"valid", {5, 6, 3}, 3, {.seed = 1}, {3, 4, 3}},
      {"same, stride 2, multiplier 2",
       {6, 5, 2},
       3,
       {.strides = 2, .padding = K::Padding::same, .depth_multiplier = 2, .seed = 2},
       {3, 3, 4}},
      {"valid, 2x3 kernel, strides 2x1, relu, multiplier 3",
       {6, 6, 2},
       {2, 3},
       {.strides = {2, 1}, .depth_multiplier = 3, .activation = "relu", .seed = 3},
       {3, 4, 6}},
      {"same, even kernel, no bias",
       {4, 5, 3},
       2,
       {.padding = K::Padding::same, .use_bias = false, .seed = 4},
       {4, 5, 3}},
  };
  std::uint32_t seed = 20;
  for (auto& c : cases) {
    CAPTURE(c.what);
    K::LayerRef conv = K::layers::DepthwiseConv2D(c.kernel, c.options);
    CHECK(conv(K::Input(c.input)).shape() == c.expected);
    CHECK(conv->trainable_variables()[0]->name() == "depthwise_kernel");
    CHECK(conv->trainable_variables()[0]->shape() ==
          K::Shape{c.kernel.height, c.kernel.width, c.input[2], c.options.depth_multiplier});
    randomize(conv, seed);
    require_gradients_ok(conv, random_tensor(batched(2, c.input), seed++), c.options.activation == "relu");
  }
}

TEST_CASE("DepthwiseConv2D: forward matches a naive loop (output channel c*M + m)") {
  const std::int64_t h = 5, w = 4, cin = 3, m = 2, k = 3;
  K::LayerRef conv = K::layers::DepthwiseConv2D(k, {.strides = 2, .padding = K::Padding::same, .depth_multiplier = m});
  (void)conv(K::Input({h, w, cin}));
  randomize(conv, 5);
  K::Tensor x = random_tensor({2, h, w, cin}, 6);
  auto xv = x.to_vector(), wv = conv->trainable_variables()[0]->value().to_vector(),
       bv = conv->trainable_variables()[1]->value().to_vector();
  // "same", stride 2: 3x2 outputs; padding 1 on top/bottom (5 rows), top 0 / bottom 1 (4 cols).
  const std::int64_t oh = 3, ow = 2, pad_top = 1, pad_left = 0;
  std::vector<double> want;
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t i = 0; i < oh; ++i)
      for (std::int64_t j = 0; j < ow; ++j)
        for (std::int64_t c = 0; c < cin; ++c)
          for (std::int64_t q = 0; q < m; ++q) {
            double acc = bv[c * m + q];
            for (std::int64_t a = 0; a < k; ++a)
              for (std::int64_t b = 0; b < k; ++b) {
                const std::int64_t y = i * 2 + a - pad_top, z = j * 2 + b - pad_left;
                if (y < 0 || y >= h || z < 0 || z >= w) continue;
                acc += xv[((n * h + y) * w + z) * cin + c] * wv[((a * k + b) * cin + c) * m + q];
              }
            want.push_back(acc);
          }
  check_close(predict(conv, {h, w, cin}, x), want);
}

TEST_CASE("Conv2DTranspose: shapes, gradients against finite differences") {
  struct Case {
    const char* what;
    K::Shape input;
    std::int64_t filters;
    K::Size2D kernel;
    K::layers::Conv2DTransposeOptions options;
    K::Shape expected;
  };
  std::vector<Case> cases = {
      {"valid, stride 1", {3, 4, 2}, 3, 3, {.seed = 1}, {5, 6, 3}},
      {"valid, stride 2", {3, 3, 2}, 2, 3, {.strides = 2, .seed = 2}, {7, 7, 2}},
      {"same, stride 2", {3, 4, 3}, 2, 3, {.strides = 2, .padding = K::Padding::same, .seed = 3}, {6, 8, 2}},
      {"same, stride 2, even kernel, tanh",
       {3, 2, 2},
       3,
       4,
       {.strides = 2, .padding = K::Padding::same, .activation = "tanh", .seed = 4},
       {6, 4, 3}},
      // Kernel smaller than the stride: rows no input reaches stay zero (plus the bias).
      {"valid, kernel 2 < stride 3", {2, 3, 2}, 2, 2, {.strides = 3, .seed = 5}, {6, 9, 2}},
      {"same, strides 2x1, 3x2 kernel, relu, no bias",
       {3, 3, 2},
       2,
       {3, 2},
       {.strides = {2, 1}, .padding = K::Padding::same, .activation = "relu", .use_bias = false, .seed = 6},
       {6, 3, 2}},
  };
  std::uint32_t seed = 30;
  for (auto& c : cases) {
    CAPTURE(c.what);
    K::LayerRef conv = K::layers::Conv2DTranspose(c.filters, c.kernel, c.options);
    CHECK(conv(K::Input(c.input)).shape() == c.expected);
    CHECK(conv->trainable_variables()[0]->shape() == K::Shape{c.kernel.height, c.kernel.width, c.filters, c.input[2]});
    randomize(conv, seed);
    require_gradients_ok(conv, random_tensor(batched(2, c.input), seed++), c.options.activation == "relu");
  }
}

// Keras (jax.lax.conv_transpose): the input dilated by the stride, padded by `left` in front
// (k - 1 for "valid", min(ceil((s + k - 2) / 2), k - 1) for "same"), correlated with the
// spatially flipped kernel at stride 1. Written directly from that definition, in 1-D per axis.
TEST_CASE("Conv2DTranspose: forward matches Keras' dilate-pad-flip definition") {
  struct Case {
    K::Size2D kernel, strides;
    K::Padding padding;
  };
  for (auto c : {Case{3, 2, K::Padding::same}, Case{{4, 3}, {2, 3}, K::Padding::same}, Case{3, 2, K::Padding::valid},
                 Case{{2, 1}, {3, 2}, K::Padding::valid}}) {
    CAPTURE(K::padding_name(c.padding));
    CAPTURE(c.kernel.height);
    CAPTURE(c.strides.height);
    const std::int64_t h = 3, w = 2, cin = 2, f = 3, kh = c.kernel.height, kw = c.kernel.width;
    const std::int64_t sh = c.strides.height, sw = c.strides.width;
    const bool same = c.padding == K::Padding::same;
    K::LayerRef conv = K::layers::Conv2DTranspose(f, c.kernel, {.strides = c.strides, .padding = c.padding});
    auto out_shape = conv(K::Input({h, w, cin})).shape();
    randomize(conv, 7);
    K::Tensor x = random_tensor({1, h, w, cin}, 8);
    auto xv = x.to_vector(), wv = conv->trainable_variables()[0]->value().to_vector(),
         bv = conv->trainable_variables()[1]->value().to_vector();
    auto left = [&](std::int64_t k, std::int64_t s) {
      return same ? std::min((s + k - 2) / 2 + (s + k - 2) % 2, k - 1) : k - 1;
    };
    const std::int64_t lh = left(kh, sh), lw = left(kw, sw);
    const std::int64_t oh = out_shape[0], ow = out_shape[1];
    CHECK(oh == (same ? h * sh : (h - 1) * sh + std::max(kh, sh)));
    CHECK(ow == (same ? w * sw : (w - 1) * sw + std::max(kw, sw)));
    // Dilated, padded input element at padded position p (or 0).
    auto dilated = [&](std::int64_t p, std::int64_t l, std::int64_t s, std::int64_t in, std::int64_t& i) {
      const std::int64_t d = p - l;
      if (d < 0 || d % s != 0 || d / s >= in) return false;
      i = d / s;
      return true;
    };
    std::vector<double> want;
    for (std::int64_t a = 0; a < oh; ++a)
      for (std::int64_t b = 0; b < ow; ++b)
        for (std::int64_t o = 0; o < f; ++o) {
          double acc = bv[o];
          for (std::int64_t u = 0; u < kh; ++u)
            for (std::int64_t v = 0; v < kw; ++v) {
              std::int64_t i = 0, j = 0;
              if (!dilated(a + u, lh, sh, h, i) || !dilated(b + v, lw, sw, w, j)) continue;
              // Flipped kernel tap (kh-1-u, kw-1-v); kernel layout (kh, kw, filters, in).
              for (std::int64_t cc = 0; cc < cin; ++cc)
                acc += xv[(i * w + j) * cin + cc] * wv[(((kh - 1 - u) * kw + (kw - 1 - v)) * f + o) * cin + cc];
            }
          want.push_back(acc);
        }
    check_close(predict(conv, {h, w, cin}, x), want);
  }
}

TEST_CASE("conv layers: bad inputs name the layer and the shape") {
  auto message_of = [](auto&& f) {
    try {
      f();
    } catch (const K::Error& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  auto has = [](const std::string& m, const std::string& part) {
    INFO(m);
    CHECK(m.find(part) != std::string::npos);
  };
  std::string m = message_of([] { K::layers::Conv1D(4, 3, {.name = "seq_conv"})(K::Input({10})); });
  has(m, "seq_conv");
  has(m, "Conv1D");
  has(m, "(None, 10)");
  m = message_of([] { K::layers::Conv1D(4, 5, {.name = "long_kernel"})(K::Input({3, 2})); });
  has(m, "long_kernel");
  has(m, "(None, 3, 2)");
  has(m, "valid");
  m = message_of([] { K::layers::DepthwiseConv2D(4, {.name = "dw"})(K::Input({3, 5, 2})); });
  has(m, "dw");
  has(m, "(None, 3, 5, 2)");
  m = message_of([] { K::layers::DepthwiseConv2D(3, {.name = "dw_rank"})(K::Input({5, 5})); });
  has(m, "dw_rank");
  has(m, "(None, 5, 5)");
  m = message_of([] { K::layers::Conv2DTranspose(2, 3, {.name = "up"})(K::Input({8, 3})); });
  has(m, "up");
  has(m, "(None, 8, 3)");
  m = message_of([] { K::layers::DepthwiseConv2D(3, {.padding = K::Padding::causal}); });
  has(m, "causal");
  m = message_of([] { K::layers::Conv2D(3, 3, {.padding = K::Padding::causal}); });
  CHECK(m != "no error");
  m = message_of([] { K::layers::DepthwiseConv2D(3, {.depth_multiplier = 0}); });
  has(m, "depth_multiplier");
  // A built layer refuses inputs with another channel count.
  K::LayerRef conv = K::layers::Conv1D(2, 3, {.name = "built_conv"});
  (void)conv(K::Input({8, 3}));
  m = message_of([&] { conv(K::Input({8, 4})); });
  has(m, "built_conv");
  has(m, "(None, 8, 4)");
}

TEST_CASE("depthwise_conv2d_backward_weights and bias_add: accumulate adds, shapes are checked") {
  auto backend = K::make_cpu_backend(1);
  const K::Conv2DGeometry g{.kernel_h = 2, .kernel_w = 2, .stride_h = 1, .stride_w = 1};
  K::Tensor x = random_tensor({2, 4, 3, 3}, 1), dy = random_tensor({2, 3, 2, 6}, 2);
  K::Tensor dw1, db1 = K::Tensor::zeros({6});
  backend->depthwise_conv2d_backward_weights(x, dy, g, dw1, db1, false);
  CHECK(dw1.shape() == K::Shape{2, 2, 3, 2});  // allocated as (kh, kw, C, M)
  K::Tensor dw2 = dw1.clone(), db2 = db1.clone();
  backend->depthwise_conv2d_backward_weights(x, dy, g, dw2, db2, true);
  auto a = dw1.to_vector(), b = dw2.to_vector();
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(b[i] == doctest::Approx(2 * a[i]).epsilon(1e-5));
  auto c = db1.to_vector(), d = db2.to_vector();
  for (std::size_t i = 0; i < c.size(); ++i) CHECK(d[i] == doctest::Approx(2 * c[i]).epsilon(1e-5));
  K::Tensor odd = random_tensor({2, 3, 2, 4}, 3), dw3;  // 4 channels are not a multiple of 3
  K::Tensor no_bias;
  CHECK_THROWS_AS(backend->depthwise_conv2d_backward_weights(x, odd, g, dw3, no_bias, false), K::ShapeError);

  K::Tensor y = K::Tensor::from_vector({2, 2}, std::vector<float>{1, 2, 3, 4});
  backend->bias_add(y, K::Tensor::from_vector({2}, std::vector<float>{10, 20}));
  CHECK(y.to_vector() == std::vector<float>{11, 22, 13, 24});
  CHECK_THROWS_AS(backend->bias_add(y, K::Tensor::zeros({3})), K::ShapeError);
}

// oneDNN 2.6.3's strided 1x1 backward-weights kernel corrupted the heap on two threads for 4..15
// input channels (a crash, or silently wrong sums); the CPU backend now gathers the strided
// pixels and runs the unstrided convolution (src/backend/cpu/conv.cpp).
TEST_CASE("conv2d_backward_weights: strided 1x1 with few channels on 2 threads equals a naive sum") {
  auto backend = K::make_cpu_backend(2);
  struct Case {
    std::int64_t n, h, w, c, o, sh, sw;
  };
  std::uint32_t seed = 40;
  for (const Case& k : {Case{2, 64, 64, 4, 8, 2, 2}, Case{2, 64, 64, 12, 8, 2, 2}, Case{2, 33, 17, 5, 3, 2, 3},
                        Case{3, 9, 9, 16, 16, 2, 2}}) {
    CAPTURE(k.h);
    CAPTURE(k.c);
    const K::Conv2DGeometry g{.kernel_h = 1, .kernel_w = 1, .stride_h = k.sh, .stride_w = k.sw};
    const std::int64_t oh = (k.h - 1) / k.sh + 1, ow = (k.w - 1) / k.sw + 1;
    K::Tensor x = random_tensor({k.n, k.h, k.w, k.c}, seed++), dy = random_tensor({k.n, oh, ow, k.o}, seed++);
    const std::vector<float> xv = x.to_vector(), dyv = dy.to_vector();
    std::vector<double> dw(static_cast<std::size_t>(k.c * k.o)), db(static_cast<std::size_t>(k.o));
    std::vector<double> dw_abs(dw.size());  // Σ|x·dy|: what bounds the rounding of 16-bit operands
    for (std::int64_t n = 0; n < k.n; ++n)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j)
          for (std::int64_t o = 0; o < k.o; ++o) {
            const double d = dyv[static_cast<std::size_t>(((n * oh + i) * ow + j) * k.o + o)];
            db[static_cast<std::size_t>(o)] += d;
            for (std::int64_t c = 0; c < k.c; ++c) {
              const double term = d * xv[static_cast<std::size_t>(((n * k.h + i * k.sh) * k.w + j * k.sw) * k.c + c)];
              dw[static_cast<std::size_t>(c * k.o + o)] += term;
              dw_abs[static_cast<std::size_t>(c * k.o + o)] += std::fabs(term);
            }
          }
    K::Tensor dwt, dbt = K::Tensor::zeros({k.o});
    backend->conv2d_backward_weights(x, dy, g, dwt, dbt, false);
    REQUIRE(dwt.shape() == K::Shape{1, 1, k.c, k.o});
    check_close(dwt.to_vector(), dw);
    check_close(dbt.to_vector(), db);
    // Accumulating adds the same sums again.
    backend->conv2d_backward_weights(x, dy, g, dwt, dbt, true);
    for (double& v : dw) v *= 2;
    for (double& v : db) v *= 2;
    check_close(dwt.to_vector(), dw);
    check_close(dbt.to_vector(), db);
    // The bfloat16 route (ReLU's gradient narrowed once for both passes, conv2d_backward) gathers
    // too: operands rounded to bf16 (relative error ≤ 2^-9 each, so ≤ ~2^-8 per product) and
    // summed in float32, so each sum is within 2^-7·Σ|x·dy| of the exact one.
    backend->set_compute_dtype(K::DType::bfloat16);
    K::Tensor y = K::Tensor::from_vector(dy.shape(), std::vector<float>(static_cast<std::size_t>(dy.numel()), 1.f));
    K::Tensor w16 = random_tensor({1, 1, k.c, k.o}, seed++), dw16, db16 = K::Tensor::zeros({k.o}),
              dx16 = K::Tensor::zeros(x.shape());
    backend->conv2d_backward(K::ActivationKind::relu, x, y, dy, w16, g, dw16, db16, false, dx16);
    backend->set_compute_dtype(K::DType::float32);
    const std::vector<float> got16 = dw16.to_vector();
    for (std::size_t i = 0; i < got16.size(); ++i) {
      CAPTURE(i);
      CHECK(std::fabs(got16[i] - dw[i] / 2) <= 0x1p-7 * dw_abs[i] + 1e-6);
    }
  }
}
