// Losses with Keras names and defaults. A loss turns (predictions, targets) into per-example
// losses and the gradient w.r.t. the predictions; the engine scales by the global batch size.
//
// Writing a loss: subclass Loss and implement compute() with Backend ops (or host loops on CPU
// tensors), then pass an object to compile(): `.loss = MyLoss()`. The engine calls compute()
// once per replica and batch, from that replica's thread, with:
//   pred    the model's output for the replica's shard, [N, ...], on the replica's device;
//   target  the shard's targets, moved to the same device (shape and dtype as the dataset has them);
//   loss    a float32 tensor of shape [N] that the engine has already allocated: write one loss
//           value per example (the engine logs sum(loss) / examples over the epoch);
//   grad    either a float32 tensor with pred's shape, already allocated by the engine (training:
//           write d(loss_n)/d(pred) * grad_scale into it, every element), or an undefined tensor
//           (evaluate()/predict paths: compute the loss only and leave grad alone);
//   grad_scale  1 / (global batch size), the same on every replica: the gradient of the batch's
//           mean loss is then the sum of the replicas' gradients. Multiply it in, never divide by N.
// compute() is const and may run on several replicas at once: keep no mutable state in a Loss.
// Sample weights (fit/evaluate's (x, y, sample_weight), class_weight) need nothing from a Loss: the
// engine scales each example's loss and gradient row by its weight after compute() returns.
#pragma once
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "kerascpp/backend.hpp"

namespace kerascpp::losses {

class Loss {
 public:
  virtual ~Loss() = default;
  virtual std::string name() const = 0;  // Keras function name, e.g. "sparse_categorical_crossentropy"
  // Keras' serialization of this loss ({"module": "keras.losses", "class_name": ..., "config": ...})
  // for Model::save's compile_config; "" for a loss Keras does not have (no compile_config is then
  // written).
  virtual std::string config_json() const { return ""; }
  // Writes loss[n] for every example and, when grad is defined, grad = d(loss_n)/d(pred) * grad_scale
  // (see the contract at the top of this file).
  virtual void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                       float grad_scale) const = 0;
  // Which accuracy "accuracy" means with this loss (Keras picks by loss and target shape).
  enum class AccuracyKind { sparse_categorical, categorical, binary };
  virtual AccuracyKind accuracy_kind() const { return AccuracyKind::categorical; }
};

struct CrossentropyOptions {
  bool from_logits = false;
  // Keras' label_smoothing (Categorical and Binary crossentropy only), in [0, 1]: targets become
  // t·(1 − s) + s/classes (categorical) or t·(1 − s) + s/2 (binary) before the loss.
  double label_smoothing = 0.0;
};

class SparseCategoricalCrossentropy : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(CrossentropyOptions options = {});
  std::string name() const override { return "sparse_categorical_crossentropy"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override {
    backend.sparse_categorical_crossentropy(pred, target, options_.from_logits, loss, grad, grad_scale);
  }
  AccuracyKind accuracy_kind() const override { return AccuracyKind::sparse_categorical; }

 private:
  CrossentropyOptions options_;
};

class CategoricalCrossentropy : public Loss {
 public:
  explicit CategoricalCrossentropy(CrossentropyOptions options = {});
  std::string name() const override { return "categorical_crossentropy"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;

 private:
  CrossentropyOptions options_;
};

class BinaryCrossentropy : public Loss {
 public:
  explicit BinaryCrossentropy(CrossentropyOptions options = {});
  std::string name() const override { return "binary_crossentropy"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override;
  AccuracyKind accuracy_kind() const override { return AccuracyKind::binary; }

 private:
  CrossentropyOptions options_;
};

class MeanSquaredError : public Loss {
 public:
  std::string name() const override { return "mean_squared_error"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override {
    backend.mean_squared_error(pred, target, loss, grad, grad_scale);
  }
};

// Keras' Huber (delta = 1): quadratic within delta of the target, linear beyond; robust to outliers.
class Huber : public Loss {
 public:
  explicit Huber(double delta = 1.0);
  std::string name() const override { return "huber"; }
  std::string config_json() const override;
  void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
               float grad_scale) const override {
    backend.huber(pred, target, static_cast<float>(delta_), loss, grad, grad_scale);
  }

 private:
  double delta_;
};

// Shared handle accepted by compile(): a Loss object or a Keras name ("mse", "sparse_categorical_crossentropy").
class LossRef {
 public:
  LossRef() = default;
  LossRef(const char* name);         // NOLINT: implicit by design, like Keras strings
  LossRef(const std::string& name);  // NOLINT
  template <class L, class = std::enable_if_t<std::is_base_of_v<Loss, L>>>
  LossRef(L loss) : loss_(std::make_shared<L>(std::move(loss))) {}  // NOLINT
  LossRef(std::shared_ptr<Loss> loss) : loss_(std::move(loss)) {}   // NOLINT
  template <class L, class = std::enable_if_t<std::is_base_of_v<Loss, L>>>
  LossRef(std::shared_ptr<L> loss) : loss_(std::move(loss)) {}  // NOLINT: a shared_ptr to a subclass
  Loss* get() const { return loss_.get(); }
  Loss* operator->() const { return loss_.get(); }
  explicit operator bool() const { return static_cast<bool>(loss_); }

 private:
  std::shared_ptr<Loss> loss_;
};

}  // namespace kerascpp::losses
