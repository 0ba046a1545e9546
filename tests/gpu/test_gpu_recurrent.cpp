// LSTM, GRU, SimpleRNN, Bidirectional and TimeDistributed on the CUDA backend. The layers add no Backend ops of their
// own (they compose matmul, split/concat, activations, multiply, scale_rows, masked_fill and transpose, each compared
// with the CPU in test_gpu_backend_ops.cpp), so this checks the composition: the same model trained a few steps on
// gpu:0 and on the CPU, with Embedding(mask_zero) padding, return_sequences and go_backwards, ends with the same
// weights and predictions.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "kerascpp/kerascpp.hpp"

using namespace gputest;
namespace D = kerascpp::distribute;

namespace {

K::Model recurrent_model() {
  auto in = K::Input({7}, K::DType::int32);
  auto x = K::layers::Embedding(6, 5, {.mask_zero = true, .seed = 1})(in);
  x = K::layers::Bidirectional(K::layers::SimpleRNN(3, {.return_sequences = true, .seed = 5}))(x);
  x = K::layers::TimeDistributed(K::layers::Dense(4, {.activation = "tanh", .seed = 6}))(x);
  x = K::layers::LSTM(8, {.return_sequences = true, .seed = 2})(x);
  x = K::layers::GRU(4, {.go_backwards = true, .seed = 3})(x);
  return K::Model(in, K::layers::Dense(3, {.seed = 4})(x));
}

struct Data {
  K::Tensor ids, target;
};

Data make_data(std::int64_t n) {
  std::vector<std::int32_t> ids(static_cast<std::size_t>(n * 7));
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>((i * 5 + i / 7) % 6);  // 0 = padding
  return {K::Tensor::from_vector({n, 7}, ids), random_tensor({n, 3}, 99)};
}

std::vector<K::Tensor> train(const D::Strategy& strategy, const std::vector<K::Tensor>& init, K::Tensor& prediction) {
  K::Model model = recurrent_model();
  model.set_weights(init);
  model.compile({.optimizer = K::optimizers::SGD(0.1), .loss = "mse", .distribute = strategy});
  Data d = make_data(48);
  auto ds = K::Dataset::from_tensor_slices(d.ids, d.target).batch(16);
  model.fit(ds, {.epochs = 1, .verbose = 0});
  prediction = model.predict(K::Dataset::from_tensor_slices(d.ids).batch(16), {.verbose = 0});
  std::vector<K::Tensor> weights;
  for (const auto& w : model.get_weights()) weights.push_back(on_host(w));
  return weights;
}

}  // namespace

TEST_CASE(
    "gpu recurrent: LSTM, GRU, Bidirectional(SimpleRNN), TimeDistributed (masked, go_backwards) train on gpu:0 as on "
    "the CPU (3 steps)") {
  const auto init = recurrent_model().get_weights();
  K::Tensor pc, pg;
  auto cpu = train(D::OneDeviceStrategy("cpu:0"), init, pc);
  auto gpu0 = train(D::OneDeviceStrategy("gpu:0"), init, pg);
  CHECK(max_abs_diff(init, cpu) > 1e-4);  // training moved the weights
  const double err = max_rel_error(gpu0, cpu);
  MESSAGE("gpu:0 vs cpu:0 after 3 steps: rel_error " << err);
  CHECK(err <= 1e-4);
  REQUIRE(pg.shape() == pc.shape());
  CHECK(rel_error(on_host(pg).to_vector(), pc.to_vector()) <= 1e-4);
}
