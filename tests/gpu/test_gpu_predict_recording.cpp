// predict on a GPU replays a recorded CUDA graph from the second batch of a shape on
// (training/predict_recordings.hpp, backend/cuda/recorded_work.cpp). Replays must give what the op-by-op
// forward gives, bit for bit on the same backend, for a new input every batch; follow the weights
// when set_weights or training changes them; keep batch sizes apart; and KERASCPP_GPU_GRAPHS=0
// must record nothing.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "../../examples/fashion_mnist_models.hpp"
#include "backend/cuda/cuda_backend.hpp"
#include "gpu_test_util.hpp"
#include "kerascpp/kerascpp.hpp"

using namespace gputest;
namespace D = kerascpp::distribute;

namespace {

K::Tensor images(std::int64_t n, std::uint32_t seed) { return random_tensor({n, 28, 28, 1}, seed, 0.f, 1.f); }

K::Model compiled_cnn(const D::Strategy& strategy) {
  K::set_random_seed(21);
  K::Model m = examples::fashion_mnist_model("small_cnn");
  m.compile({.optimizer = K::optimizers::SGD(0.05f),
             .loss = K::losses::SparseCategoricalCrossentropy(),
             .distribute = strategy});
  return m;
}

// The CPU's predictions with the GPU model's current weights.
K::Tensor cpu_predictions(K::Model& gpu_model, const K::Tensor& x) {
  K::Model cpu = compiled_cnn(D::OneDeviceStrategy("cpu:0"));
  cpu.set_weights(gpu_model.get_weights());
  return cpu.predict_on_batch(x);
}

}  // namespace

TEST_CASE("gpu predict: recorded forwards replay the op-by-op predictions and follow the weights") {
  K::Model model = compiled_cnn(D::OneDeviceStrategy("gpu:0"));
  const K::Tensor a = images(1, 1), b = images(1, 2), c = images(1, 3);
  const std::size_t before = kerascpp::cuda::recordings_made();

  const K::Tensor eager_a = model.predict_on_batch(a);   // first batch of the shape: op by op
  const K::Tensor replay_b = model.predict_on_batch(b);  // recorded, then replayed
  CHECK(kerascpp::cuda::recordings_made() == before + 1);
  const K::Tensor replay_a = model.predict_on_batch(a);  // replayed with new input
  const K::Tensor replay_c = model.predict_on_batch(c);
  CHECK(kerascpp::cuda::recordings_made() == before + 1);  // still the one recording
  CHECK_MESSAGE(bit_equal(replay_a, eager_a), "the replay differs from the op-by-op forward on the same input");
  CHECK_FALSE(bit_equal(replay_a, replay_c));  // the input buffer was refilled
  check_close(on_gpu(replay_b), cpu_predictions(model, b), "replayed batch b against the CPU");
  check_close(on_gpu(replay_c), cpu_predictions(model, c), "replayed batch c against the CPU");

  // New weights, written in place: the recording reads them.
  std::vector<K::Tensor> w = model.get_weights();
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = random_tensor(w[i].shape(), 100 + static_cast<std::uint32_t>(i));
  model.set_weights(w);
  const K::Tensor after_set = model.predict_on_batch(a);
  CHECK_FALSE(bit_equal(after_set, replay_a));
  check_close(on_gpu(after_set), cpu_predictions(model, a), "after set_weights against the CPU");

  // Training between predicts: its steps free blocks the recording may use, so it records anew
  // where needed, and predicts with the trained weights.
  K::Tensor labels({8}, K::DType::int32, K::Device{});
  for (std::int64_t i = 0; i < 8; ++i) labels.data<std::int32_t>()[i] = static_cast<std::int32_t>(i % 10);
  model.train_on_batch(images(8, 7), labels);
  const K::Tensor after_training = model.predict_on_batch(a);
  check_close(on_gpu(after_training), cpu_predictions(model, a), "after a training step against the CPU");
  const K::Tensor again = model.predict_on_batch(a);
  CHECK(bit_equal(again, after_training));

  // Another batch size is another recording; both keep working.
  const K::Tensor four = images(4, 9);
  model.predict_on_batch(four);
  const K::Tensor four_replayed = model.predict_on_batch(four);
  check_close(on_gpu(four_replayed), cpu_predictions(model, four), "batch 4 against the CPU");
  CHECK(bit_equal(model.predict_on_batch(a), again));
  MESSAGE("recordings made: " << kerascpp::cuda::recordings_made() - before);
}

TEST_CASE("gpu predict: KERASCPP_GPU_GRAPHS=0 runs every predict op by op") {
  std::optional<std::string> previous;
  if (const char* v = std::getenv("KERASCPP_GPU_GRAPHS")) previous = v;
  ::setenv("KERASCPP_GPU_GRAPHS", "0", 1);
  K::Model model = compiled_cnn(D::OneDeviceStrategy("gpu:0"));
  const std::size_t before = kerascpp::cuda::recordings_made();
  const K::Tensor x = images(1, 4);
  const K::Tensor first = model.predict_on_batch(x);
  for (int i = 0; i < 3; ++i) CHECK(bit_equal(model.predict_on_batch(x), first));
  CHECK(kerascpp::cuda::recordings_made() == before);
  if (previous) ::setenv("KERASCPP_GPU_GRAPHS", previous->c_str(), 1);
  else ::unsetenv("KERASCPP_GPU_GRAPHS");
}
