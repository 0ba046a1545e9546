// Models with several Inputs (Keras' model.fit([a, b], y)): dataset elements (a, b, y), the
// *_on_batch and custom-loop calls with one tensor per input, 1 vs 2 replicas, and the errors a
// wrong element gives.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"

namespace K = kerascpp;
using mirrored_fixture::max_abs_diff;

namespace {

// ids and features in, as a recommender or a translation model takes them.
K::Model two_input_model() {
  K::set_random_seed(3);
  auto ids = K::Input({3}, K::DType::int32, "ids");
  auto features = K::Input({4}, K::DType::float32, "features");
  auto e = K::layers::Flatten()(K::layers::Embedding(10, 2)(ids));
  auto x = K::layers::Concatenate()({e, K::layers::Dense(5, {.activation = "tanh"})(features)});
  return K::Model(std::vector<K::KerasTensor>{ids, features}, {K::layers::Dense(2, {.activation = "softmax"})(x)});
}

struct Data {
  K::Tensor ids, features, y;
};

Data make_data(std::int64_t n) {
  K::Rng rng(5);
  Data d{K::Tensor({n, 3}, K::DType::int32), K::Tensor({n, 4}), K::Tensor({n}, K::DType::int32)};
  for (std::int64_t i = 0; i < n * 3; ++i)
    d.ids.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 10);
  for (std::int64_t i = 0; i < n * 4; ++i) d.features.data<float>()[i] = static_cast<float>(rng.normal());
  for (std::int64_t i = 0; i < n; ++i) d.y.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next_u64() % 2);
  return d;
}

std::vector<K::Tensor> train(K::distribute::Strategy strategy, const Data& d) {
  K::Model model = two_input_model();
  model.compile({.optimizer = K::optimizers::Adam(0.01),
                 .loss = K::losses::SparseCategoricalCrossentropy(),
                 .distribute = strategy});
  // 21 examples in batches of 4: 6 steps a epoch, the last one a single row (one empty shard).
  model.fit(K::Dataset::from_tensor_slices({d.ids, d.features, d.y}).batch(4), {.epochs = 4, .verbose = 0});
  return model.get_weights();
}

}  // namespace

TEST_CASE("multi-input: fit on (ids, features, y) elements, 2 replicas equal one device") {
  Data d = make_data(21);
  auto one = train(K::distribute::OneDeviceStrategy("cpu:0"), d);
  auto two = train(K::distribute::MirroredStrategy<>(2), d);
  CHECK(max_abs_diff(one, two) <= 1e-5);
  // Training moved the weights.
  K::Model fresh = two_input_model();
  CHECK(max_abs_diff(fresh.get_weights(), one) > 1e-3);
}

TEST_CASE("multi-input: evaluate, predict and the *_on_batch calls take one tensor per input") {
  Data d = make_data(8);
  K::Model model = two_input_model();
  model.compile({.optimizer = K::optimizers::SGD(0.1),
                 .loss = K::losses::SparseCategoricalCrossentropy(),
                 .metrics = {"accuracy"}});
  K::Tensor p = model.predict(K::Dataset::from_tensor_slices({d.ids, d.features}).batch(3), {.verbose = 0});
  CHECK(p.shape() == K::Shape{8, 2});
  K::Tensor q = model.predict_on_batch({d.ids, d.features});
  CHECK(q.to_vector() == p.to_vector());
  auto logs = model.evaluate(K::Dataset::from_tensor_slices({d.ids, d.features, d.y}).batch(8), {.verbose = 0});
  auto before = model.test_on_batch({d.ids, d.features}, d.y);
  CHECK(before.at("loss") == doctest::Approx(logs.at("loss")).epsilon(1e-6));
  model.train_on_batch({d.ids, d.features}, d.y);
  CHECK(model.test_on_batch({d.ids, d.features}, d.y).at("loss") < before.at("loss"));
}

TEST_CASE("multi-input: a wrong dataset element or batch says what the model takes") {
  Data d = make_data(4);
  K::Model model = two_input_model();
  model.compile({.optimizer = K::optimizers::SGD(0.1), .loss = K::losses::SparseCategoricalCrossentropy()});
  auto message_of = [](auto&& f) {
    try {
      f();
    } catch (const K::Error& e) { return std::string(e.what()); }
    return std::string("no error");
  };
  std::string m = message_of([&] { model.fit(K::Dataset::from_tensor_slices(d.ids, d.y).batch(2), {.verbose = 0}); });
  INFO(m);
  CHECK(m.find("2 inputs") != std::string::npos);
  CHECK(m.find("input_1, ..., input_2, y") != std::string::npos);
  // Inputs swapped: the ids Input refuses float features by name.
  m = message_of([&] { model.train_on_batch({d.features, d.ids}, d.y); });
  CHECK(m.find("ids") != std::string::npos);
  // Rows that do not line up.
  m = message_of([&] { model.train_on_batch({d.ids, d.features.slice(0, 3)}, d.y); });
  CHECK(m.find("input 1 of the batch has 3 rows") != std::string::npos);
}
