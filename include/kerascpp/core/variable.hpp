// Variable: a named weight. Under a strategy it is mirrored: one copy (and one gradient)
// per replica, kept identical by applying the same all-reduced update to every copy.
#pragma once
#include <string>
#include <vector>

#include "kerascpp/core/constraints.hpp"
#include "kerascpp/core/regularizers.hpp"
#include "kerascpp/tensor/tensor.hpp"

namespace kerascpp {

/// A named weight of a layer; under a strategy one copy (and one gradient) per replica.
class Variable {
 public:
  /// A variable holding `initial` (copy 0); `trainable` ones are updated by the optimizer.
  Variable(std::string name, Tensor initial, bool trainable);

  const std::string& name() const { return name_; }  ///< "kernel"
  const std::string& path() const { return path_; }  ///< "dense_1/kernel"
  /// Sets path() (the owning layer does, when it is named).
  void set_path(std::string p) { path_ = std::move(p); }
  /// The shape every copy has.
  const Shape& shape() const { return copies_.front().shape(); }
  /// Whether the optimizer updates it (false for e.g. BatchNormalization's moving statistics).
  bool trainable() const { return trainable_; }

  /// @{
  /// The copy on replica `replica`'s device.
  Tensor& value(int replica = 0) { return copies_.at(static_cast<std::size_t>(replica)); }
  const Tensor& value(int replica = 0) const { return copies_.at(static_cast<std::size_t>(replica)); }
  /// @}
  /// Replica `replica`'s gradient buffer (dense contributions; see add_grad_rows for rows).
  Tensor& grad(int replica) { return grads_.at(static_cast<std::size_t>(replica)); }
  /// The number of replicas holding a copy (1 until mirror()).
  int num_copies() const { return static_cast<int>(copies_.size()); }

  /// Makes one copy per device, each equal to copy 0 (called when a strategy takes the model).
  void mirror(const std::vector<Device>& devices);
  /// Writes `v` into every copy (loading weights, restoring checkpoints). Shape must match.
  void assign(const Tensor& v);

  // Gradient bookkeeping for layers that may be called more than once per step: the first
  // contribution after reset_grads overwrites, later ones accumulate.
  /// Starts a step: the next gradient contribution overwrites grad(replica) and row gradients clear.
  void reset_grads(int replica) {
    fresh_.at(static_cast<std::size_t>(replica)) = 1;
    grad_rows_.at(static_cast<std::size_t>(replica)).clear();
  }
  /// True for the first contribution since reset_grads (write grad(replica), don't add to it).
  bool take_first_grad(int replica) {
    auto& f = fresh_.at(static_cast<std::size_t>(replica));
    bool first = f != 0;
    f = 0;
    return first;
  }
  /// True once a dense contribution was taken since reset_grads.
  bool has_grad(int replica) const { return fresh_.at(static_cast<std::size_t>(replica)) == 0; }

  // Row gradients (TensorFlow's IndexedSlices). A layer whose gradient touches only some rows
  // of this [V, D] variable (Embedding) marks it sparse_capable() at build; the engine turns
  // rows_gradient() on when its gradient reducer handles rows (ReplicaBinding). Only then does
  // the layer's backward hand in (ids, rows) with add_grad_rows instead of scatter-adding into
  // grad() (elsewhere, e.g. a gradient check calling backward directly, grad() stays dense): the gradient is
  // grad() (dense contributions, if has_grad) plus every rows[p] added into row ids[p]. The
  // gradient reducer (distribute/gradient_buckets) reduces them without densifying the table
  // when that moves less, and leaves a dense grad() for the optimizer either way.
  /// Whether the owning layer can hand in row gradients (set at build).
  bool sparse_capable() const { return sparse_capable_; }
  /// Marks the variable as able to take row gradients (the owning layer, at build).
  void set_sparse_capable(bool on) { sparse_capable_ = on; }
  /// Whether backward hands in row gradients instead of writing grad().
  bool rows_gradient() const { return rows_gradient_; }
  /// Turns row gradients on (the engine, when the gradient reducer handles rows).
  void set_rows_gradient(bool on) { rows_gradient_ = on; }
  /// ids: int64 [n] (distinct, ascending: Backend::unique_row_sums' output), rows: [n, D].
  void add_grad_rows(int replica, Tensor ids, Tensor rows) {
    grad_rows_.at(static_cast<std::size_t>(replica)).push_back({std::move(ids), std::move(rows)});
  }
  /// One row-gradient contribution: `rows[p]` adds into row `ids[p]` of the gradient.
  struct GradRows {
    /// @{
    /// ids: int64 [n], distinct and ascending; rows: [n, D].
    Tensor ids, rows;
    /// @}
  };
  /// Replica `replica`'s row contributions this step.
  std::vector<GradRows>& grad_rows(int replica) { return grad_rows_.at(static_cast<std::size_t>(replica)); }

  // Keras' variable.regularizer / variable.constraint, set by the layer that owns the variable
  // (kernel_regularizer, kernel_constraint, ...); the engine applies them (training/weight_penalties).
  /// The penalty added to the loss for this variable (none by default).
  const regularizers::Regularizer& regularizer() const { return regularizer_; }
  /// Sets regularizer() (the owning layer, from e.g. kernel_regularizer).
  void set_regularizer(regularizers::Regularizer r) { regularizer_ = std::move(r); }
  /// The projection applied after each optimizer update (none by default).
  const constraints::Constraint& constraint() const { return constraint_; }
  /// Sets constraint() (the owning layer, from e.g. kernel_constraint).
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
