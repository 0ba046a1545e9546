// category_encoding: run_layer_test for each output mode on int32 ids; the encodings against a
// count made here per row; ids out of range and bad settings are refused.
#include "expect_layer_passes.hpp"
#include "kerascpp/layers/category_encoding.hpp"
#include "layer_on_cpu.hpp"

#include <string>
#include <vector>

TEST_CASE("layer test: CategoryEncoding, each output mode") {
  for (const std::string mode : {"one_hot", "multi_hot", "count"}) {
    CAPTURE(mode);
    expect_layer_passes({.make = [mode] { return K::layers::CategoryEncoding(6, mode); },
                         .input_shapes = {{mode == "one_hot" ? 1 : 4}},
                         .input_dtypes = {K::DType::int32},
                         .int_input_limit = 6,
                         .expected_output_shape = K::Shape{6},
                         .expected_trainable_weights = 0,
                         .expected_non_trainable_weights = 0,
                         .check_gradients = false});
  }
}

TEST_CASE("CategoryEncoding: one_hot, multi_hot and count of each row's ids") {
  using namespace layer_on_cpu;
  const std::vector<std::int32_t> ids = {3, 1, 3, 0, 0, 0, 2, 1, 4};  // 3 rows of 3 ids
  const K::Tensor x = K::Tensor::from_vector({3, 3}, ids);
  for (const std::string mode : {"multi_hot", "count"}) {
    CAPTURE(mode);
    Replica rep;
    K::LayerState st;
    auto layer = K::layers::CategoryEncoding(5, mode);
    (void)layer->call_multi({K::Input({3}, K::DType::int32)});
    const auto y = layer->forward(rep.ctx, {x}, st).at(0);
    REQUIRE(y.shape() == K::Shape{3, 5});
    std::vector<float> expected(15, 0.f);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      float& slot = expected[(i / 3) * 5 + static_cast<std::size_t>(ids[i])];
      slot = mode == "count" ? slot + 1.f : 1.f;
    }
    CHECK(y.to_vector() == expected);
  }
  // one_hot of (batch, k) ids: one row of num_tokens per id.
  Replica rep;
  K::LayerState st;
  auto one_hot = K::layers::CategoryEncoding(5, "one_hot");
  (void)one_hot->call_multi({K::Input({3}, K::DType::int32)});
  const auto y = one_hot->forward(rep.ctx, {x}, st).at(0);
  REQUIRE(y.shape() == K::Shape{3, 3, 5});
  const auto v = y.to_vector();
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::size_t t = 0; t < 5; ++t) CHECK(v[i * 5 + t] == (static_cast<std::int32_t>(t) == ids[i] ? 1.f : 0.f));
  // An id out of range names the layer.
  const K::Tensor bad = K::Tensor::from_vector({1, 3}, std::vector<std::int32_t>{0, 5, 1});
  CHECK_THROWS_WITH_AS(one_hot->forward(rep.ctx, {bad}, st), doctest::Contains("CategoryEncoding"), K::ValueError);
  CHECK_THROWS_AS(K::layers::CategoryEncoding(0), K::ValueError);
  CHECK_THROWS_AS(K::layers::CategoryEncoding(4, "tf_idf"), K::ValueError);
}
