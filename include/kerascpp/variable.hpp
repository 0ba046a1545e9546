// Variable: a named weight. Under a strategy it is mirrored: one copy (and one gradient)
// per replica, kept identical by applying the same all-reduced update to every copy.
#pragma once
#include <string>
#include <vector>

#include "kerascpp/constraints.hpp"
#include "kerascpp/regularizers.hpp"
#include "kerascpp/tensor.hpp"

namespace kerascpp {

class Variable {
 public:
  Variable(std::string name, Tensor initial, bool trainable);

  const std::string& name() const { return name_; }  // "kernel"
  const std::string& path() const { return path_; }  // "dense_1/kernel"
  void set_path(std::string p) { path_ = std::move(p); }
  const Shape& shape() const { return copies_.front().shape(); }
  bool trainable() const { return trainable_; }

  Tensor& value(int replica = 0) { return copies_.at(static_cast<std::size_t>(replica)); }
  const Tensor& value(int replica = 0) const { return copies_.at(static_cast<std::size_t>(replica)); }
  Tensor& grad(int replica) { return grads_.at(static_cast<std::size_t>(replica)); }
  int num_copies() const { return static_cast<int>(copies_.size()); }

  // Makes one copy per device, each equal to copy 0 (called when a strategy takes the model).
  void mirror(const std::vector<Device>& devices);
  // Writes `v` into every copy (loading weights, restoring checkpoints). Shape must match.
  void assign(const Tensor& v);

  // Gradient bookkeeping for layers that may be called more than once per step: the first
  // contribution after reset_grads overwrites, later ones accumulate.
  void reset_grads(int replica) {
    fresh_.at(static_cast<std::size_t>(replica)) = 1;
    grad_rows_.at(static_cast<std::size_t>(replica)).clear();
  }
  bool take_first_grad(int replica) {
    auto& f = fresh_.at(static_cast<std::size_t>(replica));
    bool first = f != 0;
    f = 0;
    return first;
  }
  bool has_grad(int replica) const { return fresh_.at(static_cast<std::size_t>(replica)) == 0; }

  // Row gradients (TensorFlow's IndexedSlices). A layer whose gradient touches only some rows
  // of this [V, D] variable (Embedding) marks it sparse_capable() at build; the engine turns
  // rows_gradient() on when its gradient reducer handles rows (ReplicaBinding). Only then does
  // the layer's backward hand in (ids, rows) with add_grad_rows instead of scatter-adding into
  // grad() (elsewhere, e.g. a gradient check calling backward directly, grad() stays dense): the gradient is
  // grad() (dense contributions, if has_grad) plus every rows[p] added into row ids[p]. The
  // gradient reducer (distribute/gradient_buckets) reduces them without densifying the table
  // when that moves less, and leaves a dense grad() for the optimizer either way.
  bool sparse_capable() const { return sparse_capable_; }
  void set_sparse_capable(bool on) { sparse_capable_ = on; }
  bool rows_gradient() const { return rows_gradient_; }
  void set_rows_gradient(bool on) { rows_gradient_ = on; }
  // ids: int64 [n] (distinct, ascending: Backend::unique_row_sums' output), rows: [n, D].
  void add_grad_rows(int replica, Tensor ids, Tensor rows) {
    grad_rows_.at(static_cast<std::size_t>(replica)).push_back({std::move(ids), std::move(rows)});
  }
  struct GradRows {
    Tensor ids, rows;
  };
  std::vector<GradRows>& grad_rows(int replica) { return grad_rows_.at(static_cast<std::size_t>(replica)); }

  // Keras' variable.regularizer / variable.constraint, set by the layer that owns the variable
  // (kernel_regularizer, kernel_constraint, ...); the engine applies them (training/weight_penalties).
  const regularizers::Regularizer& regularizer() const { return regularizer_; }
  void set_regularizer(regularizers::Regularizer r) { regularizer_ = std::move(r); }
  const constraints::Constraint& constraint() const { return constraint_; }
  void set_constraint(constraints::Constraint c) { constraint_ = std::move(c); }

 private:
  std::string name_, path_;
  bool trainable_;
  std::vector<Tensor> copies_, grads_;
  std::vector<char> fresh_;
  bool sparse_capable_ = false, rows_gradient_ = false;
  std::vector<std::vector<GradRows>> grad_rows_;  // per replica, this step's row contributions
  regularizers::Regularizer regularizer_;
  constraints::Constraint constraint_;
};

}  // namespace kerascpp
