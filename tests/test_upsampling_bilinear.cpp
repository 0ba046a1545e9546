// UpSampling2D(interpolation="bilinear"): forward against Keras 3's resize weights written out
// here from their definition (the numpy backend's _compute_weight_mat: triangle kernel at
// half-pixel centres, renormalised where it leaves the image), backward against finite
// differences, the config, and bad arguments. Keras itself on the same input:
// tests/python/test_transformer_layers_interop.py (kind "upsample_bilinear").
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing/gradient_check.hpp"

namespace K = kerascpp;

namespace {

// w[i][o]: input i's weight in output o of an axis resized from m to n (Keras' formula).
std::vector<std::vector<double>> keras_weights(std::int64_t m, std::int64_t n) {
  const double inv_scale = double(m) / double(n);
  std::vector<std::vector<double>> w(m, std::vector<double>(n, 0.0));
  for (std::int64_t o = 0; o < n; ++o) {
    const double sample = (double(o) + 0.5) * inv_scale - 0.5;
    double total = 0;
    for (std::int64_t i = 0; i < m; ++i) total += w[i][o] = std::max(0.0, 1.0 - std::fabs(sample - double(i)));
    for (std::int64_t i = 0; i < m; ++i) w[i][o] = total > 1e-4 ? w[i][o] / total : 0.0;
    if (sample < -0.5 || sample > double(m) - 0.5)
      for (std::int64_t i = 0; i < m; ++i) w[i][o] = 0;
  }
  return w;
}

K::Tensor random_images(const K::Shape& s, std::uint64_t seed) {
  K::Rng rng(seed);
  K::Tensor x(s, K::DType::float32, K::Device{});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng.normal());
  return x;
}

}  // namespace

TEST_CASE("UpSampling2D bilinear: forward equals Keras 3's resize weights (edges, factors 1-4, one-pixel axes)") {
  struct Case {
    K::Shape in;
    std::int64_t fh, fw;
  };
  for (Case c :
       {Case{{2, 3, 4, 2}, 2, 3}, Case{{1, 1, 5, 3}, 4, 2}, Case{{1, 2, 2, 1}, 3, 1}, Case{{1, 4, 1, 2}, 1, 4}}) {
    CAPTURE(c.fh);
    CAPTURE(c.fw);
    K::Tensor x = random_images(c.in, 5);
    auto in = K::Input({c.in[1], c.in[2], c.in[3]});
    K::Model up(in, K::layers::UpSampling2D({c.fh, c.fw}, {.interpolation = "bilinear"})(in));
    K::Tensor y = up.predict_on_batch(x);
    const std::int64_t N = c.in[0], H = c.in[1], W = c.in[2], C = c.in[3], OH = H * c.fh, OW = W * c.fw;
    REQUIRE(y.shape() == K::Shape{N, OH, OW, C});
    auto wh = keras_weights(H, OH), ww = keras_weights(W, OW);
    auto xv = x.to_vector(), yv = y.to_vector();
    double worst = 0;
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t oh = 0; oh < OH; ++oh)
        for (std::int64_t ow = 0; ow < OW; ++ow)
          for (std::int64_t ch = 0; ch < C; ++ch) {
            double ref = 0;
            for (std::int64_t h = 0; h < H; ++h)
              for (std::int64_t w = 0; w < W; ++w) ref += wh[h][oh] * ww[w][ow] * xv[((n * H + h) * W + w) * C + ch];
            worst = std::max(worst, std::fabs(ref - yv[((n * OH + oh) * OW + ow) * C + ch]));
          }
    CHECK(worst < 1e-5);
  }
}

TEST_CASE("UpSampling2D bilinear: gradients against finite differences") {
  for (K::Shape s : {K::Shape{2, 3, 4, 2}, K::Shape{1, 2, 2, 3}, K::Shape{1, 1, 3, 2}}) {
    K::LayerRef up = K::layers::UpSampling2D({2, 3}, {.interpolation = "bilinear"});
    auto r = K::testing::check_layer_gradients(up, {random_images(s, 9)}, {.max_elements = 1000});
    CHECK_MESSAGE(r.passed(), r.summary());
    CHECK(r.checked == s[0] * s[1] * s[2] * s[3]);
  }
  K::LayerRef odd = K::layers::UpSampling2D({3, 4}, {.interpolation = "bilinear"});
  auto r = K::testing::check_layer_gradients(odd, {random_images({1, 3, 3, 1}, 4)}, {.max_elements = 1000});
  CHECK_MESSAGE(r.passed(), r.summary());
}

TEST_CASE("UpSampling2D bilinear: config names the interpolation; unknown ones are refused") {
  auto in = K::Input({2, 2, 1});
  K::Model m(in, K::layers::UpSampling2D(2, {.interpolation = "bilinear", .name = "up"})(in));
  const std::string json = m.to_json();
  CHECK(json.find("\"interpolation\":\"bilinear\"") != std::string::npos);
  K::Model n(in, K::layers::UpSampling2D(2)(in));
  CHECK(n.to_json().find("\"interpolation\":\"nearest\"") != std::string::npos);
  CHECK_THROWS_WITH_AS(K::layers::UpSampling2D(2, {.interpolation = "bicubic"}),
                       doctest::Contains("use \"nearest\" or \"bilinear\""), K::ValueError);
}

TEST_CASE("upsample_linear backend op: the same bits on 1 and 2 threads; bad arguments name the op") {
  auto one = K::make_cpu_backend(1), two = K::make_cpu_backend(2);
  K::Tensor x = random_images({3, 17, 9, 40}, 21), dy = random_images({3, 17, 27, 40}, 22);
  K::Tensor y1, y2, dx1, dx2;
  one->upsample_linear(x, 2, 3, y1);
  two->upsample_linear(x, 2, 3, y2);
  one->upsample_linear_backward(dy, 2, 3, dx1);
  two->upsample_linear_backward(dy, 2, 3, dx2);
  CHECK(y1.shape() == K::Shape{3, 17, 27, 40});
  CHECK(dx1.shape() == x.shape());
  CHECK(y1.to_vector() == y2.to_vector());
  CHECK(dx1.to_vector() == dx2.to_vector());

  K::Tensor wrong({3, 17, 18, 40}, K::DType::float32, K::Device{});
  CHECK_THROWS_WITH_AS(one->upsample_linear(x, 2, 3, wrong), doctest::Contains("upsampled 3 times along axis 2"),
                       K::ShapeError);
  K::Tensor out;
  CHECK_THROWS_WITH_AS(one->upsample_linear(x, 4, 2, out), doctest::Contains("need 0 <= axis < rank"), K::ValueError);
  K::Tensor ids({1, 2, 2, 1}, K::DType::int32, K::Device{}), ids_out;
  CHECK_THROWS_WITH_AS(one->upsample_linear(ids, 1, 2, ids_out), doctest::Contains("must be float32"), K::ValueError);
}
