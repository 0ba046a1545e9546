// Session behaviour that notebooks and users' unit tests rely on: the output sink, the default
// verbosity, stopping a running fit/evaluate/predict (request_stop, Ctrl-C), clear_session(), the
// memoized Fashion-MNIST load, predict without compile, get_layer, Constant initializers, and
// Tensor literals, printing and empty-tensor errors.
#include <doctest/doctest.h>

#include "temp_dir.hpp"

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>

#include "data/idx_reader.hpp"
#include "kerascpp/kerascpp.hpp"
#include "scoped_test_state.hpp"

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

using test_scopes::CerrCapture;
using test_scopes::CoutCapture;
using test_scopes::ScopedEnv;

// Leaves the sink and the default verbosity as the test found them (std::cout, Keras' defaults).
struct SessionReset {
  ~SessionReset() {
    K::reset_output();
    K::reset_default_verbose();
  }
};

// 16 examples of 4 features, 3 classes, in batches of 4.
K::Dataset toy_data(std::int64_t batch = 4) {
  std::vector<float> xs(16 * 4);
  std::vector<std::int32_t> ys(16);
  for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>((i * 37) % 11) / 11.f;
  for (std::size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<std::int32_t>(i % 3);
  return K::Dataset::from_tensor_slices(K::Tensor::from_vector({16, 4}, xs), K::Tensor::from_vector({16}, ys))
      .batch(batch);
}

K::Sequential toy_model() {
  K::set_random_seed(3);
  K::Sequential model({K::layers::InputLayer({4}), K::layers::Dense(3, {.activation = "softmax"})});
  model.compile({.optimizer = "sgd", .loss = K::losses::SparseCategoricalCrossentropy()});
  return model;
}

// A callback that runs `fn(batch)` after each training (or test / predict) batch and counts them.
struct OnBatch : K::callbacks::Callback {
  std::function<void(K::Model&, std::int64_t)> fn;
  std::shared_ptr<std::atomic<int>> batches = std::make_shared<std::atomic<int>>(0);
  void hit(std::int64_t b) {
    ++*batches;
    if (fn) fn(model(), b);
  }
  void on_train_batch_end(std::int64_t b, const K::Logs&) override { hit(b); }
  void on_test_batch_end(std::int64_t b, const K::Logs&) override { hit(b); }
  void on_predict_batch_end(std::int64_t b, const K::Logs&) override { hit(b); }
};

void write_fake_fashion_mnist(const fs::path& dir) {
  for (const char* prefix : {"train", "t10k"}) {
    std::vector<std::uint8_t> pixels(3 * 28 * 28);
    for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 5);
    K::write_idx((dir / (std::string(prefix) + "-images-idx3-ubyte")).string(),
                 K::Tensor::from_vector({3, 28, 28}, pixels), false);
    K::write_idx((dir / (std::string(prefix) + "-labels-idx1-ubyte")).string(),
                 K::Tensor::from_vector({3}, std::vector<std::uint8_t>{1, 2, 3}), false);
  }
}

// The first image of a dataset's first element (float32, made from the uint8 pixels as the
// element is made) and its label (a view into the dataset's tensor: the same storage as long as
// the dataset is the same).
K::Tensor first_image(const K::Dataset& d) {
  K::Example e;
  REQUIRE(d.make_iterator()->next(e));
  return e.at(0);
}
K::Tensor first_label(const K::Dataset& d) {
  K::Example e;
  REQUIRE(d.make_iterator()->next(e));
  return e.at(1);
}

}  // namespace

// ---- output sink ----

// A process outside any Jupyter kernel, whatever started the tests.
struct NoNotebook {
  ScopedEnv parent{"JPY_PARENT_PID", nullptr}, session{"JPY_SESSION_NAME", nullptr}, knob{"KERASCPP_PROGRESS", nullptr};
};

TEST_CASE("session: fit's progress reaches a redirected std::cout, one line per epoch") {
  SessionReset reset;
  NoNotebook plain;
  K::Sequential model = toy_model();
  CoutCapture out;
  CHECK_FALSE(K::output_is_terminal());  // std::cout no longer writes to the process' stdout
  model.fit(toy_data(), {.epochs = 2, .verbose = 1});
  const std::string text = out.text.str();
  CHECK(text.find("Epoch 1/2\n") != std::string::npos);
  CHECK(text.find("Epoch 2/2\n") != std::string::npos);
  CHECK(text.find("4/4 [") != std::string::npos);
  CHECK(text.find(" - loss: ") != std::string::npos);
  CHECK(text.find('\r') == std::string::npos);  // not a terminal: no in-place redraws
}

TEST_CASE("session: in a Jupyter kernel (or with KERASCPP_PROGRESS=live) fit redraws one line with carriage returns") {
  SessionReset reset;
  NoNotebook plain;
  for (const char* marker : {"JPY_PARENT_PID", "JPY_SESSION_NAME", "KERASCPP_PROGRESS"}) {
    CAPTURE(marker);
    ScopedEnv kernel(marker, std::string(marker) == "KERASCPP_PROGRESS" ? "live" : "4242");
    CHECK(K::progress_style() == K::ProgressStyle::notebook);
    K::Sequential model = toy_model();
    CoutCapture out;
    model.fit(toy_data(), {.epochs = 2, .verbose = 1});
    const std::string text = out.text.str();
    // The first batch is drawn at once (later ones at most every 50 ms), each epoch's last line
    // over it: '\r' and no terminal escape, and the epoch ends with a newline.
    CHECK(text.find("Epoch 1/2\n\r1/4 [") != std::string::npos);
    CHECK(text.find("\r4/4 [==============================]") != std::string::npos);
    CHECK(text.find("Epoch 2/2\n") != std::string::npos);
    CHECK(text.find('\033') == std::string::npos);
    CHECK(text.back() == '\n');
  }
}

TEST_CASE("session: KERASCPP_PROGRESS=lines keeps one line per epoch in a kernel; another value is a ValueError") {
  SessionReset reset;
  NoNotebook plain;
  ScopedEnv kernel("JPY_PARENT_PID", "4242");
  {
    ScopedEnv lines("KERASCPP_PROGRESS", "lines");
    CHECK(K::progress_style() == K::ProgressStyle::lines);
    K::Sequential model = toy_model();
    CoutCapture out;
    model.fit(toy_data(), {.epochs = 1, .verbose = 1});
    CHECK(out.text.str().find("4/4 [") != std::string::npos);
    CHECK(out.text.str().find('\r') == std::string::npos);
  }
  ScopedEnv bad("KERASCPP_PROGRESS", "yes");
  CHECK_THROWS_AS(K::progress_style(), K::ValueError);
  K::Sequential model = toy_model();
  CoutCapture out;
  CHECK_THROWS_WITH_AS(model.fit(toy_data(), {.epochs = 1, .verbose = 1}),
                       doctest::Contains("KERASCPP_PROGRESS must be live"), K::ValueError);
}

TEST_CASE("session: set_output sends progress, summaries and callback messages to a custom stream") {
  SessionReset reset;
  K::Sequential model = toy_model();
  std::ostringstream sink;
  K::set_output(sink);
  CoutCapture cout;
  model.fit(toy_data(), {.epochs = 1,
                         .callbacks = {K::callbacks::LearningRateScheduler([](int, double lr) { return lr; }, 1)},
                         .verbose = 2});
  model.summary();
  model.evaluate(toy_data());
  const std::string text = sink.str();
  CHECK(text.find("Epoch 1/1\n") != std::string::npos);
  CHECK(text.find("LearningRateScheduler setting learning rate") != std::string::npos);
  CHECK(text.find(" - loss: ") != std::string::npos);
  CHECK(text.find("Total params: 15") != std::string::npos);
  CHECK(&K::output() == &sink);
  CHECK(cout.text.str().empty());  // nothing went to std::cout
  K::reset_output();
  CHECK(&K::output() == &std::cout);
}

TEST_CASE("session: evaluate on a dataset of unknown length ends its bar on the step count, as Keras") {
  SessionReset reset;
  K::Sequential model = toy_model();
  std::ostringstream sink;
  K::set_output(sink);
  auto unknown_length = toy_data().filter([](const K::Example&) { return true; });
  REQUIRE(unknown_length.cardinality() == K::Dataset::kUnknown);
  model.evaluate(unknown_length, {.verbose = 1});
  const std::string text = sink.str();
  CHECK(text.find("4/4 [") != std::string::npos);  // Keras: the target becomes the steps seen
  CHECK(text.find("/Unknown") == std::string::npos);
}

// ---- default verbosity ----

TEST_CASE("session: set_default_verbose applies where the call leaves verbose unset") {
  SessionReset reset;
  K::Sequential model = toy_model();
  std::ostringstream sink;
  K::set_output(sink);
  CHECK_FALSE(K::default_verbose().has_value());

  model.evaluate(toy_data());  // Keras' default for evaluate: 1, a progress bar
  CHECK(sink.str().find("4/4 [") != std::string::npos);

  sink.str("");
  K::set_default_verbose(0);
  CHECK(K::default_verbose() == 0);
  model.fit(toy_data(), {.epochs = 2});
  model.evaluate(toy_data());
  model.predict(toy_data());
  CHECK(sink.str().empty());

  K::set_default_verbose(2);  // one line per epoch, no bar
  model.fit(toy_data(), {.epochs = 1});
  CHECK(sink.str().find("Epoch 1/1\n") != std::string::npos);
  CHECK(sink.str().find('[') == std::string::npos);

  sink.str("");
  model.fit(toy_data(), {.epochs = 1, .verbose = 0});  // an explicit option wins
  CHECK(sink.str().empty());

  CHECK_THROWS_AS(K::set_default_verbose(3), K::ValueError);
  CHECK_THROWS_AS(K::set_default_verbose(-1), K::ValueError);
  CHECK_THROWS_AS(model.fit(toy_data(), {.verbose = 5}), K::ValueError);
  K::reset_default_verbose();
  CHECK_FALSE(K::default_verbose().has_value());
}

// ---- stopping ----

TEST_CASE("session: request_stop from a callback ends fit after that batch, History returned") {
  K::Sequential model = toy_model();
  OnBatch cb;
  cb.fn = [](K::Model& m, std::int64_t b) {
    if (b == 1) m.request_stop();
  };
  CerrCapture err;
  K::callbacks::History h = model.fit(toy_data(), {.epochs = 5, .callbacks = {cb}, .verbose = 0});
  CHECK(*cb.batches == 2);
  CHECK(h.epoch == std::vector<int>{0});  // the stopped epoch still ends (on_epoch_end runs)
  CHECK(model.stop_training);
  CHECK(err.text.str().find("fit() stopped by request_stop() after 2 batches") != std::string::npos);

  // The next call starts afresh: the old request is forgotten.
  K::callbacks::History again = model.fit(toy_data(), {.epochs = 2, .verbose = 0});
  CHECK(again.epoch == std::vector<int>{0, 1});
  CHECK_FALSE(model.stop_requested());
}

TEST_CASE("session: request_stop from another thread stops fit at the next batch boundary") {
  K::Sequential model = toy_model();
  std::atomic<bool> go{false}, requested{false};
  std::thread stopper([&] {
    while (!go.load()) std::this_thread::yield();
    model.request_stop();
    requested.store(true);
  });
  OnBatch cb;
  cb.fn = [&](K::Model&, std::int64_t b) {
    if (b != 2) return;
    go.store(true);
    while (!requested.load()) std::this_thread::yield();  // the other thread has asked by now
  };
  CerrCapture err;
  model.fit(toy_data().repeat(), {.epochs = 3, .steps_per_epoch = 100, .callbacks = {cb}, .verbose = 0});
  stopper.join();
  CHECK(*cb.batches == 3);
}

TEST_CASE("session: evaluate and predict stop early with what they computed") {
  K::Sequential model = toy_model();
  OnBatch cb;
  cb.fn = [](K::Model& m, std::int64_t b) {
    if (b == 0) m.request_stop();
  };
  CerrCapture err;
  K::Tensor pred = model.predict(toy_data(), {.callbacks = {cb}});
  CHECK(pred.shape() == K::Shape{4, 3});  // one batch of 4 rows
  K::Logs logs = model.evaluate(toy_data(), {.callbacks = {cb}, .verbose = 0});
  CHECK(*cb.batches == 2);
  K::Logs first_batch = model.evaluate(toy_data(), {.steps = 1, .verbose = 0});
  CHECK(logs.at("loss") == first_batch.at("loss"));  // the loss of the batch it ran
  CHECK(err.text.str().find("predict() stopped by request_stop() after 1 batch") != std::string::npos);
  CHECK(err.text.str().find("evaluate() stopped") != std::string::npos);
}

TEST_CASE("session: an interrupted fit keeps BackupAndRestore's backup, and fit() again resumes where it stopped") {
  K::Sequential reference = toy_model();
  reference.fit(toy_data(), {.epochs = 2, .verbose = 0});

  kerascpp_test::TempDir dir;
  K::callbacks::BackupAndRestore backup(dir.file("backup"));
  K::Sequential model = toy_model();
  OnBatch stop_once;
  stop_once.fn = [](K::Model& m, std::int64_t b) {
    if (b == 1) m.request_stop();
  };
  CerrCapture err;
  model.fit(toy_data(), {.epochs = 2, .callbacks = {stop_once, backup}, .verbose = 0});
  CHECK(*stop_once.batches == 2);
  CHECK(fs::exists(backup.checkpoint_path()));  // kept: the training did not finish

  OnBatch count;
  model.fit(toy_data(), {.epochs = 2, .callbacks = {count, backup}, .verbose = 0});
  CHECK(*count.batches == 6);                         // the 2 batches left of epoch 1, then the 4 of epoch 2
  CHECK_FALSE(fs::exists(backup.checkpoint_path()));  // finished: deleted
  const std::vector<K::Tensor> want = reference.get_weights(), got = model.get_weights();
  REQUIRE(want.size() == got.size());
  for (std::size_t i = 0; i < want.size(); ++i) CHECK(got[i].to_vector() == want[i].to_vector());
}

namespace {
std::atomic<int> g_my_sigints{0};
extern "C" void count_sigint(int) { ++g_my_sigints; }
}  // namespace

TEST_CASE("session: Ctrl-C during fit stops it cleanly and the previous SIGINT handler comes back") {
  struct sigaction mine = {}, before = {};
  mine.sa_handler = count_sigint;
  sigemptyset(&mine.sa_mask);
  REQUIRE(sigaction(SIGINT, &mine, &before) == 0);
  g_my_sigints = 0;

  K::Sequential model = toy_model();
  OnBatch cb;
  cb.fn = [](K::Model&, std::int64_t b) {
    if (b == 1) std::raise(SIGINT);
  };
  CerrCapture err;
  K::callbacks::History h = model.fit(toy_data(), {.epochs = 4, .callbacks = {cb}, .verbose = 0});
  CHECK(*cb.batches == 2);  // returned after the batch that saw Ctrl-C
  CHECK(h.epoch.size() == 1);
  CHECK(g_my_sigints == 0);  // fit's own handler took it
  CHECK(err.text.str().find("fit() interrupted (Ctrl-C) after 2 batches") != std::string::npos);

  struct sigaction now = {};
  sigaction(SIGINT, nullptr, &now);
  const bool restored = now.sa_handler == count_sigint;
  CHECK(restored);
  std::raise(SIGINT);
  CHECK(g_my_sigints == 1);

  // The same for evaluate, and a later call is not stopped by the earlier Ctrl-C.
  OnBatch first;
  first.fn = [](K::Model&, std::int64_t b) {
    if (b == 0) std::raise(SIGINT);
  };
  model.evaluate(toy_data(), {.callbacks = {first}, .verbose = 0});
  CHECK(*first.batches == 1);
  OnBatch all;
  model.evaluate(toy_data(), {.callbacks = {all}, .verbose = 0});
  CHECK(*all.batches == 4);
  CHECK(g_my_sigints == 1);

  // A second Ctrl-C before the batch ends goes to the previous handler (here: the counter; by
  // default it would end the process), and the call still stops cleanly.
  OnBatch twice;
  twice.fn = [](K::Model&, std::int64_t b) {
    if (b != 0) return;
    std::raise(SIGINT);
    std::raise(SIGINT);
  };
  model.predict(toy_data(), {.callbacks = {twice}});
  CHECK(*twice.batches == 1);
  CHECK(g_my_sigints == 2);
  sigaction(SIGINT, nullptr, &now);
  const bool restored_again = now.sa_handler == count_sigint;
  CHECK(restored_again);
  sigaction(SIGINT, &before, nullptr);
}

// ---- clear_session and the dataset cache ----

TEST_CASE("session: clear_session restarts automatic names and the seed stream") {
  K::clear_session();
  K::set_random_seed(42);
  auto a = K::layers::Dense(2);
  CHECK(a->name() == "dense");
  K::Sequential first({K::layers::InputLayer({3}), K::layers::Dense(2)});
  auto second = K::layers::Dense(2);
  CHECK(second->name() != "dense");
  const std::vector<float> w1 = first.get_weights().at(0).to_vector();

  K::clear_session();
  auto b = K::layers::Dense(2);
  CHECK(b->name() == "dense");
  K::Sequential again({K::layers::InputLayer({3}), K::layers::Dense(2)});
  CHECK(again.name() == "sequential");
  // The stream restarted from seed 42: the same draws in the same order give the same weights
  // (the first Dense above drew nothing: it was never built).
  CHECK(again.get_weights().at(0).to_vector() == w1);
}

TEST_CASE("session: fashion_mnist::load() memoizes by directory; clear_session drops the cache") {
  kerascpp_test::TempDir dir;
  write_fake_fashion_mnist(dir.path);
  auto one = K::datasets::fashion_mnist::load(dir.path.string());
  auto two = K::datasets::fashion_mnist::load((dir.path / ".").string());  // the same directory, spelled otherwise
  CHECK(first_label(one.train).same_storage(first_label(two.train)));
  CHECK(first_label(one.test).same_storage(first_label(two.test)));
  CHECK(two.train.cardinality() == 3);

  K::clear_session();
  auto three = K::datasets::fashion_mnist::load(dir.path.string());
  CHECK_FALSE(first_label(one.train).same_storage(first_label(three.train)));
  CHECK(first_image(one.train).to_vector() == first_image(three.train).to_vector());

  // A file that changed is read again (its time moved on, even on a file system with coarse times).
  write_fake_fashion_mnist(dir.path);
  fs::last_write_time(dir.path / "t10k-labels-idx1-ubyte",
                      fs::last_write_time(dir.path / "t10k-labels-idx1-ubyte") + std::chrono::seconds(5));
  auto four = K::datasets::fashion_mnist::load(dir.path.string());
  CHECK_FALSE(first_label(three.train).same_storage(first_label(four.train)));
  K::clear_session();
}

// ---- model helpers ----

TEST_CASE("session: get_layer by name and index; a missing name lists the layers") {
  auto in = K::Input({4});
  auto h = K::layers::Dense(3, {.name = "hidden"})(in);
  auto out = K::layers::Dense(2, {.name = "head"})(h);
  K::Model model(in, out, "lookup_model");
  CHECK(model.get_layer("head")->name() == "head");
  CHECK(model.get_layer("hidden")->count_params() == 15);
  CHECK(model.get_layer(2)->name() == "head");
  try {
    model.get_layer("heda");
    FAIL("no error");
  } catch (const K::ValueError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("lookup_model") != std::string::npos);
    CHECK(msg.find("'heda'") != std::string::npos);
    CHECK(msg.find("hidden, head") != std::string::npos);
  }
  CHECK_THROWS_AS(model.get_layer(7), K::ValueError);
}

TEST_CASE("session: predict and predict_on_batch without compile, then the same after compile") {
  K::set_random_seed(9);
  K::Sequential model({K::layers::Dense(3, {.activation = "softmax"})});  // built by the first batch
  K::Tensor x = K::Tensor::from_vector({2, 4}, {0.1f, 0.2f, 0.3f, 0.4f, -1.f, 0.5f, 2.f, 0.f});
  K::Tensor p = model.predict_on_batch(x);
  CHECK(p.shape() == K::Shape{2, 3});
  const std::vector<float> before = p.to_vector();
  CHECK(model.predict(K::Dataset::from_tensor_slices(x).batch(2)).to_vector() == before);
  CHECK_THROWS_AS(model.train_on_batch(x, K::Tensor::from_vector({2}, {0, 1})), K::StateError);
  model.compile({.optimizer = "sgd", .loss = K::losses::SparseCategoricalCrossentropy()});
  CHECK(model.predict_on_batch(x).to_vector() == before);
  model.train_on_batch(x, K::Tensor::from_vector({2}, {0, 1}));
  CHECK(model.predict_on_batch(x).to_vector() != before);
}

TEST_CASE("session: Constant initializer and named initializers in layer options") {
  auto in = K::Input({3});
  auto out = K::layers::Dense(2, {.kernel_initializer = K::initializers::Constant(0.5f),
                                  .bias_initializer = K::initializers::constant(-1.f)})(in);
  auto conv_in = K::Input({4, 4, 1});
  auto conv = K::layers::Conv2D(2, 3, {.kernel_initializer = K::initializers::Constant(0.25f)})(conv_in);
  K::Model model(in, out);
  K::Model conv_model(conv_in, conv);
  CHECK(model.get_weights().at(0).to_vector() == std::vector<float>(6, 0.5f));
  CHECK(model.get_weights().at(1).to_vector() == std::vector<float>(2, -1.f));
  CHECK(conv_model.get_weights().at(0).to_vector() == std::vector<float>(18, 0.25f));
  K::layers::DenseOptions named{};
  named.kernel_initializer = "ones";  // strings keep working
  auto in2 = K::Input({2});
  K::Model ones(in2, K::layers::Dense(1, named)(in2));
  CHECK(ones.get_weights().at(0).to_vector() == std::vector<float>(2, 1.f));
  CHECK(K::initializers::Constant(2.f).value() == 2.f);
  CHECK(K::initializers::Initializer("zeros") == std::string("zeros"));
  auto in3 = K::Input({2});
  CHECK_THROWS_AS(K::layers::Dense(1, {.kernel_initializer = "onez"})(in3), K::ValueError);
}

// ---- Tensor ----

TEST_CASE("session: Tensor::from_vector with literals picks the obvious dtype") {
  K::Tensor f = K::Tensor::from_vector({2}, {0.5f, 1.5f});
  CHECK(f.dtype() == K::DType::float32);
  CHECK(f.to_vector() == std::vector<float>{0.5f, 1.5f});
  K::Tensor d = K::Tensor::from_vector({2}, {0.25, 2.0});
  CHECK(d.dtype() == K::DType::float32);
  CHECK(d.to_vector() == std::vector<float>{0.25f, 2.f});
  K::Tensor i = K::Tensor::from_vector({3}, {1, 2, 3});
  CHECK(i.dtype() == K::DType::int32);
  CHECK(i.data<std::int32_t>()[2] == 3);
  CHECK_THROWS_AS(K::Tensor::from_vector({3}, {1.f, 2.f}), K::ShapeError);
}

TEST_CASE("session: operator<< prints tensors like numpy, shapes and logs") {
  using K::operator<<;
  std::ostringstream os;
  os << K::Tensor::from_vector({2, 3}, {1.f, 2.5f, 3.f, 4.f, 5.f, 6.f});
  CHECK(os.str() == "Tensor([[1, 2.5, 3],\n        [4, 5, 6]], shape=(2, 3), dtype=float32)");
  os.str("");
  os << K::Tensor::from_vector({2}, {7, 8}) << ' ' << K::Tensor();
  CHECK(os.str() == "Tensor([7, 8], shape=(2,), dtype=int32) Tensor(undefined)");
  os.str("");
  K::Tensor big = K::Tensor::zeros({2000});
  os << big;
  CHECK(os.str() == "Tensor([0, 0, 0, ..., 0, 0, 0], shape=(2000,), dtype=float32)");
  os.str("");
  os << K::Tensor::full({}, 3.f);
  CHECK(os.str() == "Tensor(3, shape=(), dtype=float32)");
  os.str("");
  os << K::Shape{-1, 28, 28, 1} << ' ' << K::DType::uint8 << ' ' << K::Device{};
  CHECK(os.str() == "(None, 28, 28, 1) uint8 cpu:0");
  os.str("");
  K::Logs logs;
  logs.set("loss", 0.5);
  logs.set("accuracy", 0.75);
  os << logs;
  CHECK(os.str() == "{loss: 0.5, accuracy: 0.75}");
}

TEST_CASE("session: every operation on an empty (default-constructed) tensor is a StateError") {
  K::Tensor empty;
  const K::Tensor& cempty = empty;
  K::Tensor some = K::Tensor::zeros({2});
  CHECK_FALSE(empty.defined());
  CHECK_THROWS_AS(empty.to_vector(), K::StateError);
  CHECK_THROWS_AS(empty.data<float>(), K::StateError);
  CHECK_THROWS_AS(cempty.data<float>(), K::StateError);
  CHECK_THROWS_AS(empty.raw(), K::StateError);
  CHECK_THROWS_AS(empty.fill(1.f), K::StateError);
  CHECK_THROWS_AS(empty.copy_from(some), K::StateError);
  CHECK_THROWS_AS(some.copy_from(empty), K::StateError);
  CHECK_THROWS_AS(empty.slice(0, 1), K::StateError);
  CHECK_THROWS_AS(empty.reshape({1}), K::StateError);
  CHECK_THROWS_AS(empty.dim(0), K::StateError);
  // Copying nothing is nothing: clone() and to() of an empty tensor are empty, and using them throws.
  CHECK_FALSE(empty.clone().defined());
  CHECK_FALSE(empty.to(K::Device{}).defined());
  CHECK_THROWS_AS(empty.clone().to_vector(), K::StateError);
  try {
    empty.to_vector();
  } catch (const K::StateError& e) { CHECK(std::string(e.what()).find("to_vector") != std::string::npos); }
}
