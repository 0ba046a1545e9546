// SidecarEvaluator: each checkpoint the chief's ModelCheckpoint writes is evaluated exactly once,
// with the loss model.evaluate gives on the same weights, TensorBoard validation events at the
// checkpoint's training step, and a stop of its own (idle_timeout, max_evaluations); checkpoints
// that appear while it runs, after a half-written temporary file, are picked up in order.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include "io/event_file_reader.hpp"
#include "kerascpp/kerascpp.hpp"
#include "kerascpp/training/sidecar_evaluator.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kTrainExamples = 16, kBatch = 4;
constexpr int kEpochs = 3;

K::Model compiled_model() {
  K::set_random_seed(11);
  auto in = K::Input({3});
  auto x = K::layers::Dense(4, {.activation = "relu"})(in);
  auto out = K::layers::Dense(2, {.activation = "softmax"})(x);
  K::Model m(in, out);
  m.compile(
      {.optimizer = K::optimizers::Adam(1e-2), .loss = "sparse_categorical_crossentropy", .metrics = {"accuracy"}});
  return m;
}

K::Dataset examples(std::int64_t n, std::uint64_t seed) {
  K::Rng rng(seed);
  K::Tensor x({n, 3}), y({n}, K::DType::int32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>(rng.normal());
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = x.data<float>()[i * 3] > 0 ? 1 : 0;
  return K::Dataset::from_tensor_slices(x, y);
}

// The chief: kEpochs epochs with a ModelCheckpoint per epoch into `dir`; returns the files in order.
std::vector<std::string> train_with_checkpoints(const fs::path& dir) {
  K::Model chief = compiled_model();
  auto cb = std::make_shared<K::callbacks::ModelCheckpoint>((dir / "e{epoch:02d}.weights.h5").string());
  chief.fit(examples(kTrainExamples, 1).batch(kBatch), {.epochs = kEpochs, .callbacks = {cb}, .verbose = 0});
  std::vector<std::string> files;
  for (int e = 1; e <= kEpochs; ++e) files.push_back((dir / ("e0" + std::to_string(e) + ".weights.h5")).string());
  for (auto& f : files) REQUIRE(fs::exists(f));
  return files;
}

// The loss model.evaluate gives with the weights of `path`, on a model of its own.
double reference_loss(const std::string& path, const K::Dataset& data) {
  K::Model m = compiled_model();
  m.load_weights(path);
  return m.evaluate(data, {.verbose = 0}).at("loss");
}

std::vector<K::io::Event> validation_events(const fs::path& log_dir) {
  std::vector<K::io::Event> all;
  for (auto& entry : fs::directory_iterator(log_dir / "validation"))
    for (auto& e : K::io::read_event_file(entry.path().string())) all.push_back(e);
  return all;
}

}  // namespace

TEST_CASE("SidecarEvaluator: every checkpoint once, the loss of model.evaluate, validation events, stops by itself") {
  kerascpp_test::TempDir tmp;
  const fs::path ckpt = tmp.path / "ckpt", logs = tmp.path / "logs";
  const std::vector<std::string> files = train_with_checkpoints(ckpt);
  const K::Dataset eval_data = examples(8, 2).batch(4);

  std::ostringstream printed;
  K::set_output(printed);
  K::SidecarEvaluator evaluator(compiled_model(), eval_data, ckpt.string(),
                                {.log_dir = logs.string(), .poll_interval = 0.02, .idle_timeout = 0.2});
  const auto t0 = std::chrono::steady_clock::now();
  evaluator.start();  // returns on its own: idle_timeout after the last checkpoint
  K::reset_output();
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20));

  const auto& done = evaluator.evaluations();
  REQUIRE(done.size() == files.size());
  std::map<std::int64_t, double> loss_at_step;
  for (std::size_t i = 0; i < files.size(); ++i) {
    CAPTURE(files[i]);
    CHECK(done[i].path == files[i]);  // in the order written, each once
    // The step is the optimizer's iteration count at the save: epochs done × batches per epoch.
    REQUIRE(done[i].step.has_value());
    CHECK(*done[i].step == static_cast<std::int64_t>(i + 1) * (kTrainExamples / kBatch));
    CHECK_FALSE(done[i].epoch.has_value());  // ModelCheckpoint files carry no training position
    CHECK(done[i].logs.at("loss") == reference_loss(files[i], eval_data));
    CHECK(done[i].logs.contains("accuracy"));
    loss_at_step[*done[i].step] = done[i].logs.at("loss");
    CHECK(printed.str().find("evaluated '" + files[i] + "' (step " + std::to_string(*done[i].step) + "): loss: ") !=
          std::string::npos);
  }
  CHECK(printed.str().find("no new checkpoint") != std::string::npos);

  // TensorBoard: one evaluation_loss_vs_iterations scalar per checkpoint, at its step.
  std::map<std::int64_t, double> written;
  for (auto& e : validation_events(logs))
    for (auto& v : e.values)
      if (v.tag == "evaluation_loss_vs_iterations") {
        REQUIRE(v.floats.size() == 1);
        CHECK(written.count(e.step) == 0);
        written[e.step] = v.floats[0];
      }
  REQUIRE(written.size() == loss_at_step.size());
  for (auto& [step, loss] : loss_at_step) CHECK(written.at(step) == doctest::Approx(loss).epsilon(1e-6));

  // max_evaluations stops it after that many, without any timeout.
  K::SidecarEvaluator two(compiled_model(), eval_data, ckpt.string(),
                          {.max_evaluations = 2, .poll_interval = 0.02, .verbose = 0});
  two.start();
  REQUIRE(two.evaluations().size() == 2);
  CHECK(two.evaluations()[1].path == files[1]);
}

TEST_CASE("SidecarEvaluator: checkpoints written while it runs are evaluated in order, never half written") {
  kerascpp_test::TempDir tmp;
  const fs::path staged = tmp.path / "staged", watched = tmp.path / "watched";
  const std::vector<std::string> files = train_with_checkpoints(staged);
  fs::create_directories(watched);
  const K::Dataset eval_data = examples(8, 2).batch(4);

  K::SidecarEvaluator evaluator(compiled_model(), eval_data, watched.string(),
                                {.max_evaluations = kEpochs, .poll_interval = 0.01, .verbose = 0});
  auto running = std::async(std::launch::async, [&] { evaluator.start(); });
  // The chief's side, as write_atomically does it: bytes go to a dot-named temporary file, half of
  // them first (the evaluator looks meanwhile and must skip it), then the file is renamed.
  std::thread chief([&] {
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      const fs::path name = fs::path(f).filename();
      const fs::path part = watched / ("." + name.string() + ".tmp.test");
      {
        std::ofstream out(part, std::ios::binary);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
        out.flush();
        std::this_thread::sleep_for(std::chrono::milliseconds(60));
        out.write(bytes.data() + bytes.size() / 2, static_cast<std::streamsize>(bytes.size() - bytes.size() / 2));
      }
      fs::rename(part, watched / name);
      std::this_thread::sleep_for(std::chrono::milliseconds(60));
    }
  });
  // A hard bound: a hang is a failure, and the evaluator is then told to stop.
  const bool finished = running.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  if (!finished) evaluator.request_stop();
  chief.join();
  running.get();
  REQUIRE(finished);
  const auto& done = evaluator.evaluations();
  REQUIRE(done.size() == files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    CHECK(done[i].path == (watched / fs::path(files[i]).filename()).string());
    CHECK(done[i].logs.at("loss") == reference_loss(files[i], eval_data));
  }
}

TEST_CASE("SidecarEvaluator: bad arguments and a checkpoint of another model are refused with the reason") {
  kerascpp_test::TempDir tmp;
  const K::Dataset d = examples(4, 2).batch(4);
  auto in = K::Input({3});
  K::Model uncompiled(in, K::layers::Dense(2)(in));
  CHECK_THROWS_WITH_AS(K::SidecarEvaluator(uncompiled, d, tmp.path.string()), doctest::Contains("not compiled"),
                       K::StateError);
  CHECK_THROWS_WITH_AS(K::SidecarEvaluator(compiled_model(), d, ""), doctest::Contains("checkpoint_dir"),
                       K::ValueError);
  CHECK_THROWS_WITH_AS(K::SidecarEvaluator(compiled_model(), d, tmp.path.string(), {.max_evaluations = 0}),
                       doctest::Contains("max_evaluations must be > 0"), K::ValueError);
  CHECK_THROWS_WITH_AS(K::SidecarEvaluator(compiled_model(), d, tmp.path.string(), {.poll_interval = 0}),
                       doctest::Contains("poll_interval"), K::ValueError);
  // A checkpoint whose layers do not fit: an error naming the file, not a skip or a hang.
  auto other_in = K::Input({5});
  K::Model other(other_in, K::layers::Dense(2)(other_in));
  other.save_weights(tmp.file("other.weights.h5"));
  K::SidecarEvaluator evaluator(compiled_model(), d, tmp.path.string(), {.poll_interval = 0.01, .idle_timeout = 0});
  CHECK_THROWS_WITH(evaluator.start(), doctest::Contains("other.weights.h5"));
}

TEST_CASE("SidecarEvaluator: a BackupAndRestore backup gives its epoch and step") {
  kerascpp_test::TempDir tmp;
  K::Model chief = compiled_model();
  auto backup = std::make_shared<K::callbacks::BackupAndRestore>(
      tmp.path.string(), K::callbacks::BackupAndRestoreOptions{.delete_checkpoint = false});
  chief.fit(examples(kTrainExamples, 1).batch(kBatch), {.epochs = 2, .callbacks = {backup}, .verbose = 0});
  const K::Dataset eval_data = examples(8, 2).batch(4);
  K::SidecarEvaluator evaluator(compiled_model(), eval_data, tmp.path.string(),
                                {.max_evaluations = 1, .poll_interval = 0.01, .verbose = 0});
  evaluator.start();
  REQUIRE(evaluator.evaluations().size() == 1);
  const auto& e = evaluator.evaluations()[0];
  CHECK(e.path == backup->checkpoint_path());
  CHECK(e.epoch == 2);
  CHECK(e.step == 2 * (kTrainExamples / kBatch));
  CHECK(e.logs.at("loss") == reference_loss(backup->checkpoint_path(), eval_data));
}
