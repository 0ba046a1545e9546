// The Model core's internal pieces: the callback list, the training position BackupAndRestore
// uses, the shared shard->run->sum step and *_on_batch path, and the public metrics_names().
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kerascpp/kerascpp.hpp"
#include "temp_dir.hpp"
#include "training/callback_list.hpp"
#include "training/training_position.hpp"

namespace K = kerascpp;

namespace {

// Writes "name:hook(arg)" for every hook it gets into a log shared by several recorders.
class Recorder : public K::callbacks::Callback {
 public:
  Recorder(std::string name, std::vector<std::string>* log) : name_(std::move(name)), log_(log) {}
  void on_train_begin(const K::Logs&) override { note("train_begin"); }
  void on_train_end(const K::Logs&) override { note("train_end"); }
  void on_epoch_begin(int e, const K::Logs&) override { note("epoch_begin", e); }
  void on_epoch_end(int e, const K::Logs&) override { note("epoch_end", e); }
  void on_train_batch_begin(std::int64_t b, const K::Logs&) override { note("train_batch_begin", b); }
  void on_train_batch_end(std::int64_t b, const K::Logs&) override { note("train_batch_end", b); }
  void on_test_begin(const K::Logs&) override { note("test_begin"); }
  void on_test_end(const K::Logs&) override { note("test_end"); }
  void on_test_batch_begin(std::int64_t b, const K::Logs&) override { note("test_batch_begin", b); }
  void on_test_batch_end(std::int64_t b, const K::Logs&) override { note("test_batch_end", b); }
  void on_predict_begin(const K::Logs&) override { note("predict_begin"); }
  void on_predict_end(const K::Logs&) override { note("predict_end"); }
  void on_predict_batch_begin(std::int64_t b, const K::Logs&) override { note("predict_batch_begin", b); }
  void on_predict_batch_end(std::int64_t b, const K::Logs&) override { note("predict_batch_end", b); }

 private:
  void note(const char* hook, std::int64_t arg = -1) {
    log_->push_back(name_ + ":" + hook + (arg >= 0 ? "(" + std::to_string(arg) + ")" : ""));
  }
  std::string name_;
  std::vector<std::string>* log_;
};

K::Model make_model(std::uint64_t seed = 11) {
  K::set_random_seed(seed);
  auto in = K::Input({3});
  auto x = K::layers::Dense(4, {.activation = "relu"})(in);
  auto out = K::layers::Dense(2, {.activation = "softmax"})(x);
  return K::Model(in, out);
}

void compile(K::Model& m, int replicas) {
  m.compile({.optimizer = K::optimizers::SGD(0.1),
             .loss = "sparse_categorical_crossentropy",
             .metrics = {"accuracy"},
             .distribute = K::distribute::MirroredStrategy<>(replicas)});
}

struct Batch {
  K::Tensor x, y;
};

Batch batch(std::int64_t n) {
  K::Rng rng(4);
  K::Tensor x({n, 3}), y({n}, K::DType::int32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng.normal());
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(i % 2);
  return {x, y};
}

bool same_bytes(const K::Tensor& a, const K::Tensor& b) {
  return a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

bool same_weights(const K::Model& a, const K::Model& b) {
  auto wa = a.get_weights(), wb = b.get_weights();
  if (wa.size() != wb.size()) return false;
  for (std::size_t i = 0; i < wa.size(); ++i)
    if (!same_bytes(wa[i], wb[i])) return false;
  return true;
}

}  // namespace

TEST_CASE("CallbackList: attaches every callback and forwards each hook to all of them in order") {
  K::Model model = make_model();
  std::vector<std::string> log;
  Recorder first("progbar", &log), last("history", &log);
  auto a = std::make_shared<Recorder>("a", &log);
  auto b = std::make_shared<Recorder>("b", &log);
  K::detail::CallbackList list(model, {a, b}, &first, &last);
  CHECK(list.size() == 4);
  CHECK(&first.model() == &model);
  CHECK(&a->model() == &model);
  CHECK(&last.model() == &model);

  K::Logs logs;
  list.on_train_begin(logs);
  list.on_epoch_begin(3, logs);
  list.on_train_batch_end(7, logs);
  list.on_predict_batch_begin(2, logs);
  const std::vector<std::string> want{"progbar:train_begin",
                                      "a:train_begin",
                                      "b:train_begin",
                                      "history:train_begin",
                                      "progbar:epoch_begin(3)",
                                      "a:epoch_begin(3)",
                                      "b:epoch_begin(3)",
                                      "history:epoch_begin(3)",
                                      "progbar:train_batch_end(7)",
                                      "a:train_batch_end(7)",
                                      "b:train_batch_end(7)",
                                      "history:train_batch_end(7)",
                                      "progbar:predict_batch_begin(2)",
                                      "a:predict_batch_begin(2)",
                                      "b:predict_batch_begin(2)",
                                      "history:predict_batch_begin(2)"};
  CHECK(log == want);

  list.detach();
  CHECK_THROWS_AS(a->model(), K::StateError);
  CHECK_THROWS_AS(first.model(), K::StateError);
}

TEST_CASE("CallbackList: fit, evaluate and predict call the user's callbacks in Keras' order") {
  K::Model model = make_model();
  compile(model, 1);
  Batch d = batch(8);
  std::vector<std::string> log;
  auto a = std::make_shared<Recorder>("a", &log);
  auto b = std::make_shared<Recorder>("b", &log);
  auto data = K::Dataset::from_tensor_slices(d.x, d.y).batch(4);
  model.fit(data, {.epochs = 1, .validation_data = data, .callbacks = {a, b}, .verbose = 0});
  const std::vector<std::string> fit_want{
      "a:train_begin", "b:train_begin", "a:epoch_begin(0)", "b:epoch_begin(0)", "a:train_batch_begin(0)",
      "b:train_batch_begin(0)", "a:train_batch_end(0)", "b:train_batch_end(0)", "a:train_batch_begin(1)",
      "b:train_batch_begin(1)", "a:train_batch_end(1)", "b:train_batch_end(1)",
      // validation runs the same callbacks' test hooks before the epoch ends
      "a:test_begin", "b:test_begin", "a:test_batch_begin(0)", "b:test_batch_begin(0)", "a:test_batch_end(0)",
      "b:test_batch_end(0)", "a:test_batch_begin(1)", "b:test_batch_begin(1)", "a:test_batch_end(1)",
      "b:test_batch_end(1)", "a:test_end", "b:test_end", "a:epoch_end(0)", "b:epoch_end(0)", "a:train_end",
      "b:train_end"};
  CHECK(log == fit_want);
  // fit lets go of its callbacks when it is done.
  CHECK_THROWS_AS(a->model(), K::StateError);

  log.clear();
  model.predict(K::Dataset::from_tensor_slices(d.x).batch(8), {.callbacks = {b, a}});
  const std::vector<std::string> predict_want{"b:predict_begin",
                                              "a:predict_begin",
                                              "b:predict_batch_begin(0)",
                                              "a:predict_batch_begin(0)",
                                              "b:predict_batch_end(0)",
                                              "a:predict_batch_end(0)",
                                              "b:predict_end",
                                              "a:predict_end"};
  CHECK(log == predict_want);
}

TEST_CASE("training position: fit advances it, and a resume point set in on_train_begin is where fit starts") {
  // What BackupAndRestore does, without a file: asks fit to resume at epoch 1, batch 1.
  class ResumeAt : public K::callbacks::Callback {
   public:
    void on_train_begin(const K::Logs&) override {
      K::detail::ResumePoint p;
      p.epoch = 1;
      p.step = 1;
      p.totals = K::detail::training_position(model()).zero_totals();
      p.totals.loss_sum = 8.0;  // one batch of 4 with a mean loss of 2
      p.totals.examples = 4;
      K::detail::training_position(model()).resume_at(p);
    }
  };
  K::Model model = make_model();
  compile(model, 1);
  Batch d = batch(12);
  auto data = K::Dataset::from_tensor_slices(d.x, d.y).batch(4);  // 3 batches an epoch

  model.fit(data, {.epochs = 2, .verbose = 0});
  const K::detail::ResumePoint& after = K::detail::training_position(model).current();
  CHECK(after.epoch == 1);
  CHECK(after.step == 3);
  CHECK(after.totals.examples == 12);
  CHECK(model.optimizer().iterations() == 6);

  K::Model resumed = make_model();
  compile(resumed, 1);
  auto history = resumed.fit(data, {.epochs = 2, .callbacks = {ResumeAt()}, .verbose = 0});
  CHECK(history.epoch == std::vector<int>{1});   // epoch 0 was done before the "interruption"
  CHECK(resumed.optimizer().iterations() == 2);  // batches 1 and 2 of epoch 1
  const K::detail::ResumePoint& r = K::detail::training_position(resumed).current();
  CHECK(r.epoch == 1);
  CHECK(r.step == 3);
  CHECK(r.totals.examples == 12);  // the backed-up batch's 4 plus the 8 trained
  // The request is used once: the next fit starts from its initial_epoch again.
  auto again = resumed.fit(data, {.epochs = 1, .verbose = 0});
  CHECK(again.epoch == std::vector<int>{0});
}

TEST_CASE("BackupAndRestore: an interrupted fit resumed from its backup ends with the same weights") {
  kerascpp_test::TempDir tmp;
  Batch d = batch(16);
  auto data = K::Dataset::from_tensor_slices(d.x, d.y).batch(4);
  K::Model whole = make_model();
  compile(whole, 2);
  whole.fit(data, {.epochs = 3, .verbose = 0});

  // Stops training (as a crash would) after batch 1 of epoch 1, with a backup every batch.
  class StopAt : public K::callbacks::Callback {
   public:
    void on_train_batch_end(std::int64_t b, const K::Logs&) override {
      if (epoch_ == 1 && b == 1) model().stop_training = true;
    }
    void on_epoch_begin(int e, const K::Logs&) override { epoch_ = e; }

   private:
    int epoch_ = 0;
  };
  const std::string dir = tmp.file("backup");
  K::Model first = make_model();
  compile(first, 2);
  first.fit(data,
            {.epochs = 3,
             .callbacks = {K::callbacks::BackupAndRestore(dir, {.save_freq = 1, .delete_checkpoint = false}), StopAt()},
             .verbose = 0});
  REQUIRE(first.optimizer().iterations() == 6);

  K::Model second = make_model(99);  // different initial weights: everything must come from the backup
  compile(second, 2);
  K::callbacks::BackupAndRestore restore(dir, {.save_freq = 1});
  auto restore_ref = std::make_shared<K::callbacks::BackupAndRestore>(restore);
  second.fit(data, {.epochs = 3, .callbacks = {restore_ref}, .verbose = 0});
  CHECK(restore_ref->restored());
  CHECK(second.optimizer().iterations() == whole.optimizer().iterations());
  CHECK(same_weights(second, whole));
}

TEST_CASE("*_on_batch on 2 replicas match fit/evaluate/predict on the same single batch") {
  for (std::int64_t rows : {8, 5, 1}) {  // even shards, uneven shards, and an empty shard
    CAPTURE(rows);
    Batch d = batch(rows);
    auto one_batch = K::Dataset::from_tensor_slices(d.x, d.y).batch(rows);

    K::Model by_fit = make_model(), by_batch = make_model();
    compile(by_fit, 2);
    compile(by_batch, 2);
    auto history = by_fit.fit(one_batch, {.epochs = 1, .verbose = 0});
    K::Logs train_logs = by_batch.train_on_batch(d.x, d.y);
    CHECK(same_weights(by_fit, by_batch));
    CHECK(train_logs.at("loss") == history.history.at("loss").at(0));
    CHECK(train_logs.at("accuracy") == history.history.at("accuracy").at(0));

    K::Logs evaluated = by_fit.evaluate(one_batch, {.verbose = 0});
    K::Logs tested = by_batch.test_on_batch(d.x, d.y);
    CHECK(tested.at("loss") == evaluated.at("loss"));
    CHECK(tested.at("accuracy") == evaluated.at("accuracy"));

    K::Tensor predicted = by_fit.predict(K::Dataset::from_tensor_slices(d.x).batch(rows));
    K::Tensor on_batch = by_batch.predict_on_batch(d.x);
    CHECK(same_bytes(predicted, on_batch));
  }
}

TEST_CASE("train/test_on_batch refuse an uncompiled model, naming the call; predict_on_batch needs no compile") {
  K::Model model = make_model();
  Batch d = batch(4);
  CHECK_THROWS_WITH_AS(model.train_on_batch(d.x, d.y), doctest::Contains("before train_on_batch()"), K::StateError);
  CHECK_THROWS_WITH_AS(model.test_on_batch(d.x, d.y), doctest::Contains("before test_on_batch()"), K::StateError);
  CHECK(model.predict_on_batch(d.x).dim(0) == 4);  // like Keras: predicting needs no compile()
}

TEST_CASE("metrics_names: empty before compile, then loss and the compiled metrics, as evaluate's log keys") {
  K::Model model = make_model();
  CHECK(model.metrics_names().empty());
  compile(model, 1);
  CHECK(model.metrics_names() == std::vector<std::string>{"loss", "accuracy"});
  Batch d = batch(4);
  K::Logs logs = model.evaluate(K::Dataset::from_tensor_slices(d.x, d.y).batch(4), {.verbose = 0});
  CHECK(logs.keys_str() == "loss, accuracy");
}

TEST_CASE("fit: an error in validation keeps its category and says it came from validation_data") {
  K::Model model = make_model();
  compile(model, 1);
  Batch d = batch(4);
  K::Tensor wrong({4, 5});  // the model takes 3 features
  auto val = K::Dataset::from_tensor_slices(wrong, d.y).batch(4);
  bool thrown = false;
  try {
    model.fit(K::Dataset::from_tensor_slices(d.x, d.y).batch(4), {.validation_data = val, .verbose = 0});
  } catch (const K::ShapeError& e) {  // any other category escapes and fails the test
    thrown = true;
    const std::string what = e.what();
    CHECK(what.rfind("fit() validation_data (after epoch 1): ", 0) == 0);
    CHECK(what.find("(None, 3) but got (4, 5)") != std::string::npos);  // the original message follows
  }
  CHECK(thrown);
}
