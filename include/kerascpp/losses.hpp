// Losses with Keras names and defaults. A loss turns (predictions, targets) into per-example
// losses and the gradient w.r.t. the predictions; the engine scales by the global batch size.
#pragma once
#include <memory>
#include <string>

#include "kerascpp/backend.hpp"

namespace kerascpp::losses {

class Loss {
 public:
  virtual ~Loss() = default;
  virtual std::string name() const = 0;  // Keras function name, e.g. "sparse_categorical_crossentropy"
  // loss[N] per example; grad = dloss_n/dpred * grad_scale.
  virtual void compute(Backend& backend, const Tensor& pred, const Tensor& target, Tensor& loss, Tensor& grad,
                       float grad_scale) const = 0;
  // Which accuracy "accuracy" means with this loss (Keras picks by loss and target shape).
  enum class AccuracyKind { sparse_categorical, categorical, binary };
  virtual AccuracyKind accuracy_kind() const { return AccuracyKind::categorical; }
};

struct CrossentropyOptions {
  bool from_logits = false;
};

class SparseCategoricalCrossentropy : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(CrossentropyOptions o = {}) : o_(o) {}
  std::string name() const override { return "sparse_categorical_crossentropy"; }
  void compute(Backend& b, const Tensor& p, const Tensor& t, Tensor& l, Tensor& g, float s) const override {
    b.sparse_categorical_crossentropy(p, t, o_.from_logits, l, g, s);
  }
  AccuracyKind accuracy_kind() const override { return AccuracyKind::sparse_categorical; }

 private:
  CrossentropyOptions o_;
};

class CategoricalCrossentropy : public Loss {
 public:
  explicit CategoricalCrossentropy(CrossentropyOptions o = {}) : o_(o) {}
  std::string name() const override { return "categorical_crossentropy"; }
  void compute(Backend& b, const Tensor& p, const Tensor& t, Tensor& l, Tensor& g, float s) const override {
    b.categorical_crossentropy(p, t, o_.from_logits, l, g, s);
  }

 private:
  CrossentropyOptions o_;
};

class BinaryCrossentropy : public Loss {
 public:
  explicit BinaryCrossentropy(CrossentropyOptions o = {}) : o_(o) {}
  std::string name() const override { return "binary_crossentropy"; }
  void compute(Backend& b, const Tensor& p, const Tensor& t, Tensor& l, Tensor& g, float s) const override {
    b.binary_crossentropy(p, t, o_.from_logits, l, g, s);
  }
  AccuracyKind accuracy_kind() const override { return AccuracyKind::binary; }

 private:
  CrossentropyOptions o_;
};

class MeanSquaredError : public Loss {
 public:
  std::string name() const override { return "mean_squared_error"; }
  void compute(Backend& b, const Tensor& p, const Tensor& t, Tensor& l, Tensor& g, float s) const override {
    b.mean_squared_error(p, t, l, g, s);
  }
};

// Shared handle accepted by compile(): a Loss object or a Keras name ("mse", "sparse_categorical_crossentropy").
class LossRef {
 public:
  LossRef() = default;
  LossRef(const char* name);         // NOLINT: implicit by design, like Keras strings
  LossRef(const std::string& name);  // NOLINT
  template <class L, class = std::enable_if_t<std::is_base_of_v<Loss, L>>>
  LossRef(L loss) : loss_(std::make_shared<L>(std::move(loss))) {}  // NOLINT
  LossRef(std::shared_ptr<Loss> loss) : loss_(std::move(loss)) {}  // NOLINT
  Loss* get() const { return loss_.get(); }
  Loss* operator->() const { return loss_.get(); }
  explicit operator bool() const { return static_cast<bool>(loss_); }

 private:
  std::shared_ptr<Loss> loss_;
};

}  // namespace kerascpp::losses
