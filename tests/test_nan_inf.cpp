// NaN and Inf are never hidden and never saved over a good file (issue 10): ReLU (alone and fused
// into Dense/Conv2D), max pooling and softmax propagate NaN as Keras does; an Inf input gives a
// non-finite loss; TerminateOnNaN stops on NaN and Inf; save_weights refuses non-finite weights
// and ModelCheckpoint/BackupAndRestore keep the previous file.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/gpu_support.hpp"
#include "kerascpp/kerascpp.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

K::Tensor ramp(K::Shape shape, float scale, float offset) {
  K::Tensor t(std::move(shape));
  float* p = t.data<float>();
  // A fixed, sign-mixed pattern: about half of the pre-activations are negative.
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = scale * static_cast<float>((i * 37) % 23 - 11) + offset;
  return t;
}

// What a NaN-free run gives, for comparison: relu applied by hand to a linear result.
std::vector<float> relu_of(const K::Tensor& linear) {
  std::vector<float> v = linear.to_vector();
  for (float& x : v) x = x > 0.f ? x : 0.f;
  return v;
}

// Output i must be NaN exactly where nan_at(i) says, and equal `expected` (same value, +0 for
// zeros) everywhere else.
template <class NanAt>
void check_nan_pattern(const K::Tensor& y, const std::vector<float>& expected, NanAt&& nan_at) {
  std::vector<float> got = y.to_vector();
  REQUIRE(got.size() == expected.size());
  std::size_t nans = 0, mismatches = 0, negative_zeros = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (nan_at(i)) {
      nans += std::isnan(got[i]) ? 1 : 0;
      mismatches += std::isnan(got[i]) ? 0 : 1;
    } else {
      mismatches += got[i] == expected[i] ? 0 : 1;
      negative_zeros += (got[i] == 0.f && std::signbit(got[i])) ? 1 : 0;
    }
  }
  CHECK(nans > 0);
  CHECK(mismatches == 0);
  CHECK(negative_zeros == 0);
}

// Captures what the code under test prints to stdout or stderr (fd 1 or 2).
class CaptureFd {
 public:
  explicit CaptureFd(int fd) : fd_(fd), file_(std::tmpfile()) {
    std::fflush(nullptr);
    saved_ = ::dup(fd_);
    ::dup2(::fileno(file_), fd_);
  }
  ~CaptureFd() {
    restore();
    std::fclose(file_);
  }
  CaptureFd(const CaptureFd&) = delete;
  CaptureFd& operator=(const CaptureFd&) = delete;
  std::string text() {
    restore();
    std::rewind(file_);
    std::string out;
    for (int c; (c = std::fgetc(file_)) != EOF;) out += static_cast<char>(c);
    return out;
  }

 private:
  void restore() {
    if (saved_ < 0) return;
    std::fflush(nullptr);
    ::dup2(saved_, fd_);
    ::close(saved_);
    saved_ = -1;
  }
  int fd_, saved_ = -1;
  std::FILE* file_;
};

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Conv2D(relu) - MaxPooling2D - Flatten - Dense(relu) - Activation(relu) - Dense(3, softmax).
K::Model small_model() {
  K::set_random_seed(11);
  auto in = K::Input({6, 6, 1});
  auto x = K::layers::Conv2D(4, 3, {.activation = "relu"})(in);
  x = K::layers::MaxPooling2D(2)(x);
  x = K::layers::Flatten()(x);
  x = K::layers::Dense(8, {.activation = "relu"})(x);
  x = K::layers::Activation("relu")(x);
  auto out = K::layers::Dense(3, {.activation = "softmax"})(x);
  return K::Model(in, out);
}

void compile(K::Model& m, double lr = 1e-2) {
  m.compile({.optimizer = K::optimizers::Adam(lr), .loss = "sparse_categorical_crossentropy"});
}

// n examples of smooth data; example `bad` (if >= 0) gets `value` at pixel (2, 3).
K::Dataset examples(std::int64_t n, std::int64_t bad = -1, float value = 0.f) {
  K::Tensor x = ramp({n, 6, 6, 1}, 0.1f, 0.05f);
  K::Tensor y({n}, K::DType::int32);
  for (std::int64_t i = 0; i < n; ++i) y.data<std::int32_t>()[i] = static_cast<std::int32_t>(i % 3);
  if (bad >= 0) x.data<float>()[bad * 36 + 2 * 6 + 3] = value;
  return K::Dataset::from_tensor_slices(x, y);
}

}  // namespace

// ---------------------------------------------------------------------------- backend ops

namespace {

// The NaN contract of one backend's ops: inputs are made on the host and moved to `dev`.
void check_backend_ops(K::Backend& be, K::Device dev) {
  SUBCASE("Dense with relu keeps a NaN input's row NaN and every other row exact") {
    K::Tensor x = ramp({5, 7}, 0.3f, 0.f);
    x.data<float>()[2 * 7 + 4] = kNaN;  // row 2
    K::Tensor xd = x.to(dev), w = ramp({7, 6}, 0.2f, -0.1f).to(dev), b = ramp({6}, 0.1f, 0.f).to(dev);
    K::Tensor y, linear;
    be.dense_forward(xd, w, b, K::ActivationKind::relu, y);
    be.dense_forward(xd, w, b, K::ActivationKind::linear, linear);
    check_nan_pattern(y, relu_of(linear), [](std::size_t i) { return i / 6 == 2; });
    for (K::ActivationKind act : {K::ActivationKind::sigmoid, K::ActivationKind::tanh, K::ActivationKind::softmax}) {
      CAPTURE(K::activation_name(act));
      K::Tensor z;
      be.dense_forward(xd, w, b, act, z);
      std::vector<float> v = z.to_vector();
      for (std::size_t i = 0; i < v.size(); ++i) CHECK(std::isnan(v[i]) == (i / 6 == 2));
    }
  }

  SUBCASE("Conv2D with relu gives NaN exactly where the window covers the NaN") {
    K::Conv2DGeometry g;
    g.kernel_h = g.kernel_w = 3;  // valid padding, stride 1: 7x7 -> 5x5
    K::Tensor x = ramp({2, 7, 7, 2}, 0.25f, 0.f);
    x.data<float>()[((1 * 7 + 1) * 7 + 5) * 2 + 1] = kNaN;  // image 1, (h, w) = (1, 5), channel 1
    K::Tensor xd = x.to(dev), w = ramp({3, 3, 2, 5}, 0.2f, 0.05f).to(dev), b = ramp({5}, 0.1f, 0.f).to(dev);
    K::Tensor y, linear;
    be.conv2d_forward(xd, w, b, g, K::ActivationKind::relu, y);
    be.conv2d_forward(xd, w, b, g, K::ActivationKind::linear, linear);
    REQUIRE(y.shape() == K::Shape{2, 5, 5, 5});
    check_nan_pattern(y, relu_of(linear), [](std::size_t i) {
      const std::size_t n = i / (5 * 5 * 5), oh = i / (5 * 5) % 5, ow = i / 5 % 5;
      return n == 1 && oh <= 1 && ow >= 3;  // windows [oh, oh+2] x [ow, ow+2] holding (1, 5)
    });
  }

  SUBCASE("relu and its gradient propagate NaN like TensorFlow") {
    K::Tensor x = ramp({3, 40}, 0.5f, 0.f);
    x.data<float>()[17] = kNaN;
    K::Tensor y;
    be.activation_forward(K::ActivationKind::relu, x.to(dev), y);
    K::Tensor clean = x.clone();
    clean.data<float>()[17] = 0.f;
    check_nan_pattern(y, relu_of(clean), [](std::size_t i) { return i == 17; });

    // dx = dy * (y > 0): a NaN/Inf gradient reaches x even where relu is flat (TF's ReluGrad);
    // finite gradients there give +0, and so does a NaN y (TF: dy * 0).
    const std::vector<float> yv = y.to_vector();
    K::Tensor dy = ramp({3, 40}, -0.25f, 0.01f);
    std::int64_t flat = -1;
    for (std::size_t i = 0; i < yv.size() && flat < 0; ++i)
      if (yv[i] == 0.f) flat = static_cast<std::int64_t>(i);
    REQUIRE(flat >= 0);
    dy.data<float>()[flat] = kNaN;
    K::Tensor dx;
    be.activation_backward(K::ActivationKind::relu, y, dy.to(dev), dx);
    std::vector<float> expected = dy.to_vector();
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (!(yv[i] > 0.f)) expected[i] = 0.f;
    check_nan_pattern(dx, expected, [&](std::size_t i) { return static_cast<std::int64_t>(i) == flat; });
    dy.data<float>()[flat] = kInf;  // Inf * 0 = NaN in TensorFlow too
    be.activation_backward(K::ActivationKind::relu, y, dy.to(dev), dx);
    CHECK(std::isnan(dx.to_vector()[static_cast<std::size_t>(flat)]));
  }

  SUBCASE("MaxPooling2D gives NaN for every window holding a NaN, the old maxima elsewhere") {
    K::Pool2DGeometry g;
    g.kind = K::PoolKind::max;
    g.pool_h = g.pool_w = 3;
    g.stride_h = g.stride_w = 2;  // 7x7 -> 3x3, overlapping windows
    K::Tensor x = ramp({2, 7, 7, 3}, 0.3f, 0.f);
    K::Tensor y_clean, y, ws;
    be.pool2d_forward(x.to(dev), g, y_clean, ws);
    x.data<float>()[((0 * 7 + 2) * 7 + 4) * 3 + 2] = kNaN;  // image 0, (2, 4), channel 2
    be.pool2d_forward(x.to(dev), g, y, ws);
    // (2, 4) lies in the windows of rows oh = 0, 1 (rows 0-2, 2-4) and columns ow = 1, 2 (2-4, 4-6).
    check_nan_pattern(y, y_clean.to_vector(), [](std::size_t i) {
      const std::size_t n = i / 27, oh = i / 9 % 3, ow = i / 3 % 3, c = i % 3;
      return n == 0 && c == 2 && oh <= 1 && ow >= 1;
    });
  }

  SUBCASE("softmax of a row holding NaN or +Inf is NaN (Keras: exp(x - max) / sum)") {
    K::Tensor x = ramp({4, 5}, 0.5f, 0.f);
    x.data<float>()[1 * 5 + 2] = kNaN;
    x.data<float>()[2 * 5 + 0] = kInf;
    x.data<float>()[3 * 5 + 4] = -kInf;  // a -Inf logit is just a zero probability
    K::Tensor y;
    be.activation_forward(K::ActivationKind::softmax, x.to(dev), y);
    std::vector<float> v = y.to_vector();
    for (int j = 0; j < 5; ++j) {
      CHECK(std::isfinite(v[j]));
      CHECK(std::isnan(v[5 + j]));
      CHECK(std::isnan(v[10 + j]));
      CHECK(std::isfinite(v[15 + j]));
    }
    CHECK(v[19] == 0.f);
  }
}

}  // namespace

TEST_CASE("nan: CPU backend ops propagate NaN (relu alone and fused, max pooling, softmax)") {
  K::cpu::CpuBackend be(2);
  check_backend_ops(be, K::Device{});
}

TEST_CASE("nan: CUDA backend ops propagate NaN as the CPU backend's do") {
  const auto& gpus = K::detail::gpu_availability();
  if (gpus.device_count == 0) {
    MESSAGE("skipped: no GPU (" << (gpus.built ? gpus.reason : std::string("built without CUDA")) << ")");
    return;
  }
  auto be = K::detail::make_gpu_backend(0);
  check_backend_ops(*be, K::Device{K::Device::Kind::gpu, 0});
}

// ---------------------------------------------------------------------------- models

TEST_CASE("nan: a model fed one NaN example predicts NaN for it and exactly the same for the others") {
  K::Model m = small_model();
  compile(m);
  K::Tensor clean = m.predict(examples(3).batch(3));
  K::Tensor p = m.predict(examples(3, 1, kNaN).batch(3));
  REQUIRE(p.shape() == K::Shape{3, 3});
  std::vector<float> pc = clean.to_vector(), pv = p.to_vector();
  for (int j = 0; j < 3; ++j) {
    CHECK(std::isnan(pv[3 + j]));  // not 1/3
    CHECK(pv[j] == pc[j]);
    CHECK(pv[6 + j] == pc[6 + j]);
  }
  // Training on it gives a NaN loss, as in Keras.
  auto h = m.fit(examples(3, 1, kNaN).batch(3), {.epochs = 1, .verbose = 0});
  CHECK(std::isnan(h.history["loss"].at(0)));
}

TEST_CASE("inf: an Inf input gives a non-finite loss in fit and evaluate") {
  for (float value : {kInf, -kInf}) {
    CAPTURE(value);
    K::Model m = small_model();
    compile(m);
    K::Logs logs = m.evaluate(examples(6, 4, value).batch(6), {.verbose = 0});
    CHECK_FALSE(std::isfinite(logs["loss"]));
    auto h = m.fit(examples(6, 4, value).batch(6), {.epochs = 1, .verbose = 0});
    CHECK_FALSE(std::isfinite(h.history["loss"].at(0)));
  }
}

TEST_CASE("TerminateOnNaN: stops at the batch whose loss is NaN or Inf, and says which") {
  for (float value : {kNaN, kInf}) {
    CAPTURE(value);
    K::Model m = small_model();
    compile(m);
    // Batches of 4: example 9 is in batch 2 (0-based), so the third step is the last.
    CaptureFd out(1);
    m.fit(examples(24, 9, value).batch(4),
          {.epochs = 3, .callbacks = {std::make_shared<K::callbacks::TerminateOnNaN>()}, .verbose = 0});
    const std::string text = out.text();
    CHECK(m.optimizer().iterations() == 3);
    CHECK(text.find("Batch 2: Invalid loss") != std::string::npos);
  }
}

// ---------------------------------------------------------------------------- saving

TEST_CASE("save_weights: non-finite weights or optimizer slots throw ValueError and leave the file unchanged") {
  kerascpp_test::TempDir tmp;
  const std::string path = tmp.file("good.weights.h5");
  K::Model m = small_model();
  compile(m);
  m.fit(examples(6).batch(3), {.epochs = 1, .verbose = 0});
  m.save_weights(path);
  const std::string good = file_bytes(path);
  REQUIRE(!good.empty());

  K::Variable* kernel = nullptr;
  for (K::Variable* v : m.variables())
    if (v->path().find("dense") != std::string::npos && v->name() == "kernel") kernel = v;
  REQUIRE(kernel != nullptr);
  const float old0 = kernel->value(0).data<float>()[0], old5 = kernel->value(0).data<float>()[5];
  kernel->value(0).data<float>()[0] = kNaN;
  kernel->value(0).data<float>()[5] = -kInf;
  try {
    m.save_weights(path);
    FAIL("save_weights wrote NaN weights");
  } catch (const K::ValueError& e) {
    const std::string msg = e.what();
    CHECK(msg.find(kernel->path()) != std::string::npos);
    CHECK(msg.find("1 NaN") != std::string::npos);
    CHECK(msg.find("1 Inf") != std::string::npos);
    CHECK(msg.find("good.weights.h5") != std::string::npos);
    CHECK(msg.find("learning rate") != std::string::npos);
    CHECK(msg.find("TerminateOnNaN") != std::string::npos);
  }
  CHECK(file_bytes(path) == good);
  // A new file is not created either.
  CHECK_THROWS_AS(m.save_weights(tmp.file("new.weights.h5")), K::ValueError);
  CHECK_FALSE(fs::exists(tmp.file("new.weights.h5")));
  kernel->value(0).data<float>()[0] = old0;
  kernel->value(0).data<float>()[5] = old5;

  // An optimizer slot (Adam's velocity) that overflowed is refused the same way.
  auto slots = m.optimizer().slot_tensors(0);
  REQUIRE(slots.size() >= 2);
  slots[1]->data<float>()[0] = kInf;
  CHECK_THROWS_WITH_AS(m.save_weights(path), doctest::Contains("optimizer"), K::ValueError);
  CHECK(file_bytes(path) == good);
  slots[1]->data<float>()[0] = 0.f;
  m.save_weights(path);  // finite again: saves
}

TEST_CASE("ModelCheckpoint and BackupAndRestore keep the previous file when the weights turn NaN") {
  kerascpp_test::TempDir tmp;
  const std::string ckpt = tmp.file("ckpt.weights.h5");
  const std::string backup_dir = tmp.file("backup");
  K::Model m = small_model();
  compile(m);
  auto checkpoint = std::make_shared<K::callbacks::ModelCheckpoint>(ckpt);
  // Kept after training so that the second fit resumes from it (at epoch 2 of 3).
  auto backup = std::make_shared<K::callbacks::BackupAndRestore>(
      backup_dir, K::callbacks::BackupAndRestoreOptions{.delete_checkpoint = false});
  m.fit(examples(6).batch(3), {.epochs = 1, .callbacks = {checkpoint, backup}, .verbose = 0});
  const std::string good = file_bytes(ckpt);
  const std::string backup_path = (fs::path(backup_dir) / "latest.weights.h5").string();
  const std::string good_backup = file_bytes(backup_path);
  REQUIRE(!good.empty());
  REQUIRE(!good_backup.empty());

  // A NaN example: the weights turn NaN on the first step; every save is skipped with a
  // warning and training runs to its end (epochs 2 and 3).
  CaptureFd err(2);
  auto h = m.fit(examples(6, 0, kNaN).batch(3), {.epochs = 3, .callbacks = {checkpoint, backup}, .verbose = 0});
  const std::string text = err.text();
  CHECK(h.history["loss"].size() == 2);
  CHECK(file_bytes(ckpt) == good);
  CHECK(file_bytes(backup_path) == good_backup);
  CHECK(text.find("ModelCheckpoint") != std::string::npos);
  CHECK(text.find("epoch 2") != std::string::npos);
  CHECK(text.find("BackupAndRestore") != std::string::npos);
  CHECK(text.find("NaN") != std::string::npos);
}
