// kerascpp/testing.hpp and kerascpp/testing/doctest.hpp: what a user's own tests of a model use
// (comparisons and their messages, tensor literals, toy datasets, the scoped session, weights in
// memory, doctest printing).
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>

#include "kerascpp/kerascpp.hpp"
#include "kerascpp/testing.hpp"
#include "kerascpp/testing/doctest.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace KT = kerascpp::testing;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const K::Error& e) { return e.what(); }
  return "";
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// Fraction of rows whose nearest class mean (over the features) is their own class's.
double nearest_mean_accuracy(const KT::ToyData& data, int classes) {
  const auto n = data.x.dim(0), f = data.x.dim(1);
  const float* x = data.x.data<float>();
  const std::int32_t* y = data.y.data<std::int32_t>();
  std::vector<double> mean(static_cast<std::size_t>(classes * f), 0.0);
  std::vector<double> count(static_cast<std::size_t>(classes), 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    count[y[i]] += 1;
    for (std::int64_t c = 0; c < f; ++c) mean[y[i] * f + c] += x[i * f + c];
  }
  for (int k = 0; k < classes; ++k)
    for (std::int64_t c = 0; c < f; ++c) mean[k * f + c] /= std::max(count[k], 1.0);
  std::int64_t right = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    int best = 0;
    double best_d = std::numeric_limits<double>::infinity();
    for (int k = 0; k < classes; ++k) {
      double d = 0;
      for (std::int64_t c = 0; c < f; ++c) d += (x[i * f + c] - mean[k * f + c]) * (x[i * f + c] - mean[k * f + c]);
      if (d < best_d) best_d = d, best = k;
    }
    right += best == y[i] ? 1 : 0;
  }
  return static_cast<double>(right) / static_cast<double>(n);
}

K::Model small_classifier(int features, int classes, const std::string& name = "") {
  auto in = K::Input({features});
  auto h = K::layers::Dense(8, {.activation = "relu"})(in);
  auto out = K::layers::Dense(classes, {.activation = "softmax"})(h);
  return K::Model(in, out, name);
}

void compile_adam(K::Model& model) {
  model.compile({.optimizer = K::optimizers::Adam(0.05), .loss = "sparse_categorical_crossentropy"});
}

}  // namespace

// ---- allclose / equal ----

TEST_CASE("testing: allclose passes within the tolerance and says so") {
  auto a = KT::tensor({{1, 2}, {3, 4}});
  auto r = KT::allclose(a, KT::tensor({{1, 2}, {3, 4.00001}}), 1e-5, 1e-8);
  CHECK(static_cast<bool>(r));
  CHECK(r.message() == "allclose: 4 elements match (rtol 1e-05, atol 1e-08)");
  CHECK_ALLCLOSE(a, KT::tensor({{1.01, 2}, {3, 4}}), 0.0, 0.02);
  CHECK_FALSE(KT::allclose(a, KT::tensor({{1.03, 2}, {3, 4}}), 0.0, 0.02));
}

TEST_CASE("testing: allclose names the worst element, both values, the tolerance and the count") {
  auto actual = KT::tensor({{1, 2}, {3.5, 4.1}});
  auto expected = KT::tensor({{1, 2}, {3.25, 4}});
  auto r = KT::allclose(actual, expected);
  REQUIRE_FALSE(r);
  const std::string& m = r.message();
  INFO(m);
  CHECK(contains(m, "allclose: 2 of 4 elements differ (rtol 1e-05, atol 1e-08)"));
  CHECK(contains(m, "worst at [1, 0]: actual 3.5, expected 3.25"));
  CHECK(contains(m, "|actual - expected| 0.25 > tolerance 3.251e-05"));
  // operator<< prints the same message (what doctest shows for CHECK(allclose(...))).
  std::ostringstream out;
  out << r;
  CHECK(out.str() == m);
}

TEST_CASE("testing: allclose and equal refuse other shapes, dtypes and undefined tensors with the reason") {
  auto r = KT::allclose(KT::tensor({1, 2, 3, 4}), KT::tensor({{1, 2}, {3, 4}}));
  CHECK_FALSE(r);
  CHECK(r.message() == "allclose: shapes differ: actual (4,) vs expected (2, 2)");
  auto d = KT::equal(KT::int_tensor({1, 2}), KT::tensor({1, 2}));
  CHECK_FALSE(d);
  CHECK(contains(d.message(), "dtypes differ: actual int32 vs expected float32"));
  auto u = KT::allclose(K::Tensor(), KT::tensor({1}));
  CHECK_FALSE(u);
  CHECK(contains(u.message(), "actual is an undefined (default-constructed) Tensor"));
  CHECK_FALSE(KT::equal(K::Tensor(), K::Tensor()));
  CHECK(contains(error_of([] { KT::allclose(KT::tensor({1}), KT::tensor({1}), -1.0); }), "rtol (-1)"));
}

TEST_CASE("testing: allclose treats NaN and infinities like numpy") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  auto a = KT::tensor({nan, inf, 1});
  CHECK_FALSE(KT::allclose(a, a));
  CHECK(KT::allclose(a, a, 1e-5, 1e-8, /*equal_nan=*/true));
  auto r = KT::allclose(KT::tensor({1, inf}), KT::tensor({1, -inf}));
  CHECK_FALSE(r);
  CHECK(contains(r.message(), "1 of 2 elements differ"));
  CHECK(contains(r.message(), "worst at [1]: actual inf, expected -inf"));
}

TEST_CASE("testing: equal is exact and reports the largest difference") {
  CHECK(KT::equal(KT::int_tensor({{1, 2}, {3, 4}}), KT::int_tensor({{1, 2}, {3, 4}})));
  CHECK(KT::equal(KT::tensor({0.0f}), KT::tensor({-0.0f})));
  auto r = KT::equal(KT::int_tensor({{1, 2}, {3, 4}}), KT::int_tensor({{1, 5}, {3, 2}}));
  REQUIRE_FALSE(r);
  CHECK(r.message() == "equal: 2 of 4 elements differ; worst at [0, 1]: actual 2, expected 5, |actual - expected| 3");
  CHECK_FALSE(KT::equal(KT::tensor({1}), KT::tensor({1.0000001f})));
}

// ---- literals ----

TEST_CASE("testing: tensor literals take their shape from the nesting") {
  auto t1 = KT::tensor({1, 2, 3});
  CHECK(t1.shape() == K::Shape{3});
  CHECK(t1.dtype() == K::DType::float32);
  auto t2 = KT::tensor({{1, 2, 3}, {4, 5, 6}});
  CHECK(t2.shape() == K::Shape{2, 3});
  CHECK(t2.to_vector() == std::vector<float>{1, 2, 3, 4, 5, 6});
  auto t3 = KT::tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}, {{9, 10}, {11, 12}}});
  CHECK(t3.shape() == K::Shape{3, 2, 2});
  CHECK(t3.to_vector()[7] == 8.f);
  auto t4 = KT::tensor({{{{0.5, 1.5}, {2.5, 3.5}}}});
  CHECK(t4.shape() == K::Shape{1, 1, 2, 2});
  CHECK(t4.to_vector() == std::vector<float>{0.5f, 1.5f, 2.5f, 3.5f});
  auto column = KT::tensor({2, 1}, {1, 2});
  CHECK(column.shape() == K::Shape{2, 1});
  auto labels = KT::int_tensor({{0, 1}, {2, 3}});
  CHECK(labels.dtype() == K::DType::int32);
  CHECK(labels.shape() == K::Shape{2, 2});
  CHECK(labels.data<std::int32_t>()[2] == 2);
  CHECK(KT::int_tensor({3}, {7, 8, 9}).data<std::int32_t>()[1] == 8);
  CHECK(KT::tensor({2, 0}, {}).shape() == K::Shape{2, 0});
}

TEST_CASE("testing: ragged literals and wrong value counts are refused") {
  CHECK(contains(error_of([] { KT::tensor({{1, 2}, {3}}); }),
                 "a list at depth 1 has 1 elements but the first one there has 2"));
  CHECK_THROWS_AS(KT::int_tensor({{{1}, {2, 3}}}), K::ShapeError);
  CHECK(contains(error_of([] { KT::tensor({2, 2}, {1, 2, 3}); }),
                 "tensor: shape (2, 2) holds 4 values but 3 were given"));
}

// ---- toy datasets ----

TEST_CASE("testing: make_blobs is deterministic, balanced and separable") {
  auto a = KT::make_blobs(100, 3, 2, 7);
  CHECK(a.x.shape() == K::Shape{100, 2});
  CHECK(a.x.dtype() == K::DType::float32);
  CHECK(a.y.shape() == K::Shape{100});
  CHECK(a.y.dtype() == K::DType::int32);
  auto b = KT::make_blobs(100, 3, 2, 7);
  CHECK(KT::equal(a.x, b.x));
  CHECK(KT::equal(a.y, b.y));
  CHECK_FALSE(KT::equal(a.x, KT::make_blobs(100, 3, 2, 8).x));
  std::vector<int> per_class(3, 0);
  for (std::int32_t label : std::vector<std::int32_t>(a.y.data<std::int32_t>(), a.y.data<std::int32_t>() + 100))
    per_class.at(static_cast<std::size_t>(label))++;
  CHECK(per_class == std::vector<int>{34, 33, 33});  // scikit-learn's split: the first centres get the rest
  // Rows are shuffled: the labels are not sorted.
  CHECK_FALSE(std::is_sorted(a.y.data<std::int32_t>(), a.y.data<std::int32_t>() + 100));
  CHECK(nearest_mean_accuracy(a, 3) >= 0.95);
  // A tight spread is separable for every seed tried.
  for (std::uint64_t seed = 0; seed < 5; ++seed)
    CHECK(nearest_mean_accuracy(KT::make_blobs(90, 3, 4, seed, 0.5), 3) == 1.0);
  auto ds = a.dataset().batch(32);
  CHECK(ds.cardinality() == 4);
  CHECK_THROWS_AS(KT::make_blobs(10, 0, 2, 1), K::ValueError);
}

TEST_CASE("testing: make_classification is deterministic and its informative features carry the classes") {
  auto a = KT::make_classification(300, 6, 3, 11, {.n_informative = 2, .n_clusters_per_class = 1, .class_sep = 2.0});
  CHECK(a.x.shape() == K::Shape{300, 6});
  CHECK(a.y.shape() == K::Shape{300});
  CHECK(KT::equal(a.x, KT::make_classification(300, 6, 3, 11, {2, 1, 2.0}).x));
  std::vector<int> per_class(3, 0);
  for (std::int64_t i = 0; i < 300; ++i) per_class.at(static_cast<std::size_t>(a.y.data<std::int32_t>()[i]))++;
  for (int c : per_class) CHECK(c >= 90);    // 100 each, a few flipped (flip_y 0.01)
  CHECK(nearest_mean_accuracy(a, 3) > 0.8);  // chance is 1/3
  // The defaults (two informative features, two clusters per class) as in scikit-learn.
  auto d = KT::make_classification(100, 20, 2, 3);
  CHECK(d.x.shape() == K::Shape{100, 20});
  CHECK(
      contains(error_of([] { KT::make_classification(10, 4, 3, 1, {.n_informative = 2, .n_clusters_per_class = 2}); }),
               "n_classes * n_clusters_per_class (6) must be <= 2^n_informative (4)"));
}

// ---- session ----

TEST_CASE("testing: ScopedSession fixes the seed and the thread budget and restores them") {
  const char* before = std::getenv("KERASCPP_MAX_THREADS");
  const std::optional<std::string> saved = before ? std::optional<std::string>(before) : std::nullopt;
  ::setenv("KERASCPP_MAX_THREADS", "3", 1);

  // What follows the scope depends only on the stream before it, not on how much the test drew.
  std::vector<std::uint64_t> after;
  for (int draws : {0, 1, 5}) {
    K::set_random_seed(7);
    {
      KT::ScopedSession session(42);
      std::uint64_t first = K::next_random_seed();
      K::set_random_seed(42);
      CHECK(first == K::next_random_seed());  // the scope's seed is 42
      for (int i = 0; i < draws; ++i) K::next_random_seed();
      CHECK(std::string(std::getenv("KERASCPP_MAX_THREADS")) == "1");
    }
    after.push_back(K::next_random_seed());
    CHECK(std::string(std::getenv("KERASCPP_MAX_THREADS")) == "3");
  }
  CHECK(after[0] == after[1]);
  CHECK(after[0] == after[2]);

  ::unsetenv("KERASCPP_MAX_THREADS");
  {
    KT::ScopedSession session({.seed = 1, .threads = 2});
    CHECK(std::string(std::getenv("KERASCPP_MAX_THREADS")) == "2");
    KT::ScopedSession inner({.seed = 2, .threads = 0});  // 0: leaves the budget alone
    CHECK(std::string(std::getenv("KERASCPP_MAX_THREADS")) == "2");
  }
  CHECK(std::getenv("KERASCPP_MAX_THREADS") == nullptr);
  if (saved) ::setenv("KERASCPP_MAX_THREADS", saved->c_str(), 1);
}

TEST_CASE("testing: the same ScopedSession seed builds and trains the same model") {
  auto train = [] {
    KT::ScopedSession session(5);
    auto data = KT::make_blobs(64, 3, 2, 1);
    K::Model model = small_classifier(2, 3);
    compile_adam(model);
    model.fit(data.dataset().shuffle(64).batch(16), {.epochs = 2, .verbose = 0});
    return model.get_weights();
  };
  auto a = train(), b = train();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(KT::equal(a[i], b[i]));
}

// ---- weights in memory ----

TEST_CASE("testing: save_weights_to_bytes is the file save_weights writes, and loads back") {
  kerascpp_test::TempDir tmp;
  KT::ScopedSession session(3);
  auto data = KT::make_blobs(48, 3, 2, 2);
  K::Model model = small_classifier(2, 3);
  compile_adam(model);
  model.fit(data.dataset().batch(16), {.epochs = 2, .verbose = 0});

  const auto bytes = KT::save_weights_to_bytes(model);
  const std::string path = tmp.file("model.weights.h5");
  model.save_weights(path);
  CHECK(bytes == read_file(path));

  // Into a fresh model of the same architecture: weights and optimizer state restored.
  K::Model copy = small_classifier(2, 3);
  compile_adam(copy);
  KT::load_weights_from_bytes(copy, bytes);
  auto wa = model.get_weights(), wb = copy.get_weights();
  REQUIRE(wa.size() == wb.size());
  for (std::size_t i = 0; i < wa.size(); ++i) CHECK(KT::equal(wa[i], wb[i]));
  CHECK(copy.optimizer().iterations() == model.optimizer().iterations());
  CHECK_ALLCLOSE(copy.predict_on_batch(data.x), model.predict_on_batch(data.x), 0.0, 0.0);

  // The bytes written to a file are a weights file for load_weights, and a file's contents load
  // from bytes.
  const std::string copied = tmp.file("copy.weights.h5");
  write_file(copied, bytes);
  K::Model from_file = small_classifier(2, 3);
  from_file.load_weights(copied);
  CHECK(KT::equal(from_file.get_weights()[0], wa[0]));
  K::Model from_file_bytes = small_classifier(2, 3);
  KT::load_weights_from_bytes(from_file_bytes, read_file(path));
  CHECK(KT::equal(from_file_bytes.get_weights()[2], wa[2]));
}

TEST_CASE("testing: load_weights_from_bytes refuses bad bytes and leaves the model as it was") {
  KT::ScopedSession session(4);
  K::Model model = small_classifier(2, 3);
  const auto before = model.get_weights();
  const auto unchanged = [&] {
    auto now = model.get_weights();
    for (std::size_t i = 0; i < now.size(); ++i)
      if (!KT::equal(now[i], before[i])) return false;
    return true;
  };

  std::string m = error_of([&] { KT::load_weights_from_bytes(model, {1, 2, 3, 4}); });
  CHECK(contains(m, "not an HDF5 file"));
  CHECK(unchanged());

  // Another architecture: the layout check runs before anything changes.
  K::Model other = small_classifier(2, 4);
  const auto other_bytes = KT::save_weights_to_bytes(other);
  CHECK_THROWS_AS(KT::load_weights_from_bytes(model, other_bytes), K::ShapeError);
  CHECK(unchanged());

  // Truncated bytes: refused as a damaged file.
  auto good = KT::save_weights_to_bytes(small_classifier(2, 3));
  good.resize(good.size() / 2);
  m = error_of([&] { KT::load_weights_from_bytes(model, good); });
  CHECK(contains(m, "<in-memory weights"));
  CHECK(unchanged());
}

// ---- doctest printing ----

TEST_CASE("testing: doctest prints tensors, shapes and comparisons") {
  CHECK(doctest::toString(KT::tensor({{1, 2}, {3, 4.5}})) == "Tensor(float32, shape (2, 2), [[1, 2], [3, 4.5]])");
  CHECK(doctest::toString(KT::int_tensor({7, 8})) == "Tensor(int32, shape (2,), [7, 8])");
  CHECK(doctest::toString(K::Tensor()) == "Tensor(undefined)");
  CHECK(doctest::toString(K::Shape{2, 3}) == "(2, 3)");
  CHECK(doctest::toString(KT::allclose(KT::tensor({1}), KT::tensor({2}))) ==
        "allclose: 1 of 1 elements differ (rtol 1e-05, atol 1e-08); worst at [0]: actual 1, expected 2, "
        "|actual - expected| 1 > tolerance 2.001e-05");
  // Long tensors are cut.
  CHECK(KT::to_string(K::Tensor::zeros({100}), 3) == "Tensor(float32, shape (100,), [0, 0, 0, ...])");
  CHECK(KT::to_string(K::Tensor::zeros({3, 3}), 4) == "Tensor(float32, shape (3, 3), [[0, 0, 0], [0, ...], ...])");
}

TEST_CASE("testing: ScopedSession sets the default verbosity for its scope and restores it") {
  K::reset_default_verbose();
  {
    KT::ScopedSession session({.seed = 1, .threads = 0, .verbose = 2});
    CHECK(K::default_verbose() == std::optional<int>(2));
    {
      KT::ScopedSession inner({.seed = 2, .threads = 0});  // quiet by default
      CHECK(K::default_verbose() == std::optional<int>(0));
    }
    CHECK(K::default_verbose() == std::optional<int>(2));
  }
  CHECK_FALSE(K::default_verbose().has_value());
  // A bad verbosity is refused before the scope changes anything.
  CHECK_THROWS_AS(KT::ScopedSession({.seed = 3, .threads = 0, .verbose = 7}), K::ValueError);
  CHECK_FALSE(K::default_verbose().has_value());
}
