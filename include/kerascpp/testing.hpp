// Helpers for unit tests of models built with kerascpp, usable from any test framework (doctest
// users also include kerascpp/testing/doctest.hpp for printing and CHECK_ALLCLOSE):
//
//   namespace KT = kerascpp::testing;
//   KT::ScopedSession session(42);                       // seed, one thread, quiet; restored after
//   auto blobs = KT::make_blobs(200, 3, 2, /*seed=*/7);   // x [200, 2] float32, y [200] int32
//   model.fit(blobs.dataset().batch(32), fit_options);
//   auto bytes = KT::save_weights_to_bytes(model);        // a .weights.h5 file's bytes
//   KT::load_weights_from_bytes(other, bytes);
//   CHECK(KT::allclose(model.predict_on_batch(x), KT::tensor({{0.5, 0.5}}), 1e-4));
//   auto grads = KT::check_layer_gradients(layer, {x});   // gradient_check.hpp, included here
//
// Every helper runs on the host; tensors on a GPU are compared through a host copy.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kerascpp/data/dataset.hpp"
#include "kerascpp/tensor/tensor.hpp"
#include "kerascpp/testing/gradient_check.hpp"
#include "kerascpp/training/model.hpp"

/// Helpers for unit tests of models and layers: tensor comparison, literals, toy data, sessions.
namespace kerascpp::testing {

// ---- comparing tensors ----

/// The outcome of allclose/equal: converts to bool (true: they match) and says why not. Printing
/// it (operator<< below, doctest's StringMaker) prints the message, so `CHECK(allclose(a, b))`
/// shows the worst element instead of `{?}`.
class Comparison {
 public:
  /// A failed comparison with no message.
  Comparison() = default;
  /// An outcome and its message.
  Comparison(bool ok, std::string message) : ok_(ok), message_(std::move(message)) {}
  /// ok().
  explicit operator bool() const { return ok_; }
  /// True when the tensors match.
  bool ok() const { return ok_; }
  /// On a mismatch, what differs: shapes or dtypes when they differ; otherwise how many elements
  /// differ, the worst one (index, both values, |a - b| and the tolerance it broke). On a match,
  /// a one-line summary ("allclose: 6 elements match (rtol 1e-05, atol 1e-08)").
  const std::string& message() const { return message_; }

 private:
  bool ok_ = false;
  std::string message_;
};
/// Prints message().
std::ostream& operator<<(std::ostream& out, const Comparison& comparison);

/// numpy.allclose: every |a - b| <= atol + rtol * |b| (b is the expected value), same shape and
/// dtype. NaN matches nothing unless equal_nan; an infinity matches only the same infinity. Values
/// are compared in double (int64 values beyond 2^53 are rounded).
Comparison allclose(const Tensor& actual, const Tensor& expected, double rtol = 1e-5, double atol = 1e-8,
                    bool equal_nan = false);
/// Exact equality of shape, dtype and every element (NaN equals nothing, -0 equals 0).
Comparison equal(const Tensor& actual, const Tensor& expected);

/// The tensor as text for a failure message: dtype, shape and the values (rows of the last axis;
/// at most `max_elements`, then "..."). "Tensor(undefined)" for a default-constructed one.
std::string to_string(const Tensor& tensor, std::int64_t max_elements = 64);

// ---- tensor literals ----
/// @{
/// Nested initializer lists of floats (List1..List4) and of int32 (IntList1..IntList4), rank 1 to 4,
/// for tensor() and int_tensor(); tensor({{1, 2}, {3, 4}}) is a float32 [2, 2] tensor on the host (ranks 1 to 4);
/// int_tensor() is the int32 form (class labels). Rows must all have the same length (ShapeError otherwise). C++ cannot
/// tell a column of one-element rows, {{1}, {2}}, from a list of numbers, so spell such shapes out: tensor({2, 1}, {1,
/// 2}).
using List1 = std::initializer_list<float>;
using List2 = std::initializer_list<List1>;
using List3 = std::initializer_list<List2>;
using List4 = std::initializer_list<List3>;
using IntList1 = std::initializer_list<std::int32_t>;
using IntList2 = std::initializer_list<IntList1>;
using IntList3 = std::initializer_list<IntList2>;
using IntList4 = std::initializer_list<IntList3>;
/// @}

/// @{
/// A float32 host tensor from nested lists (the shape follows the nesting; ShapeError for ragged rows).
Tensor tensor(List1 values);
Tensor tensor(List2 values);
Tensor tensor(List3 values);
Tensor tensor(List4 values);
/// @}
Tensor tensor(const Shape& shape, const std::vector<float>& values);  ///< values in row-major order
/// @{
/// An int32 host tensor from nested lists (class labels; as tensor()).
Tensor int_tensor(IntList1 values);
Tensor int_tensor(IntList2 values);
Tensor int_tensor(IntList3 values);
Tensor int_tensor(IntList4 values);
/// @}
/// An int32 host tensor of `shape` from `values` in row-major order.
Tensor int_tensor(const Shape& shape, const std::vector<std::int32_t>& values);

// ---- toy datasets (scikit-learn's make_blobs / make_classification, simplified) ----

/// Features and labels of a toy problem, rows shuffled; deterministic for a seed (kerascpp::Rng,
/// the same numbers on every platform).
struct ToyData {
  Tensor x;  ///< [n_samples, n_features] float32
  Tensor y;  ///< [n_samples] int32 class labels in [0, classes)
  /// Dataset::from_tensor_slices(x, y): batch it (and shuffle it) for fit/evaluate.
  Dataset dataset() const;
};

/// Isotropic Gaussian blobs: `centers` centres drawn uniformly in [-10, 10]^n_features, and
/// n_samples points split evenly over them (the first n_samples % centers centres get one more),
/// each centre + N(0, cluster_std^2) per feature; y is the centre's index. Blobs of the default
/// spread are almost always linearly separable.
ToyData make_blobs(std::int64_t n_samples, int centers, int n_features, std::uint64_t seed, double cluster_std = 1.0);

/// make_classification's settings, with scikit-learn's names and defaults.
struct ClassificationOptions {
  int n_informative = 2;         ///< features that carry the classes; the others are N(0, 1) noise
  int n_clusters_per_class = 2;  ///< Gaussian clusters per class, on vertices of a hypercube
  double class_sep = 1.0;        ///< half the hypercube's side: larger is easier
  double flip_y = 0.01;          ///< fraction of labels replaced by random ones (label noise)
};
/// scikit-learn's make_classification without redundant and repeated features: each class gets
/// n_clusters_per_class clusters centred on distinct vertices of a hypercube of side 2*class_sep in
/// the n_informative first features, each cluster N(0, 1) points under a random linear map (so
/// clusters are not spherical), then flip_y of the labels are randomised and the rows shuffled.
/// Needs n_informative <= n_features and n_classes * n_clusters_per_class <= 2^n_informative.
ToyData make_classification(std::int64_t n_samples, int n_features, int n_classes, std::uint64_t seed,
                            ClassificationOptions options = {});

// ---- one test's session ----

/// What a ScopedSession fixes for its scope.
struct SessionOptions {
  std::uint64_t seed = 0;  ///< set_random_seed for the scope
  int threads = 1;         ///< the most threads a backend made in the scope uses; 0: leave as is
  int verbose = 0;         ///< set_default_verbose for the scope: fit/evaluate/predict without `verbose`
};

/// Fixes the global seed and the thread budget for the duration of one test and puts them back
/// afterwards, so tests do not depend on each other's order:
///   TEST_CASE("my model learns") { kerascpp::testing::ScopedSession session(42); ... }
/// Threads: sets KERASCPP_MAX_THREADS, which every backend reads when it is made, so models
/// compiled (and strategies made) inside the scope use at most `threads` threads; one thread keeps
/// concurrent test processes from fighting over cores. Seed: the global stream is reseeded on
/// exit from a value drawn from it on entry, so what runs after the scope does not depend on how
/// many seeds the test drew. Not thread-safe (environment and global seed): one per thread of
/// tests, nested scopes restore in reverse order.
class ScopedSession {
 public:
  /// Sets seed, thread budget and verbosity as `options` say.
  explicit ScopedSession(SessionOptions options = {});
  /// The defaults (one thread, quiet) with `seed`.
  explicit ScopedSession(std::uint64_t seed) : ScopedSession(SessionOptions{seed}) {}
  /// Puts back the thread budget and verbosity, and reseeds the global stream.
  ~ScopedSession();
  ScopedSession(const ScopedSession&) = delete;
  ScopedSession& operator=(const ScopedSession&) = delete;

  /// The settings in force.
  const SessionOptions& options() const { return options_; }

 private:
  SessionOptions options_;
  std::uint64_t seed_after_ = 0;                   // reseeds the global stream on exit
  std::optional<std::string> previous_threads_{};  // KERASCPP_MAX_THREADS before, if it was set
  std::optional<int> previous_verbose_{};          // the process default before, if one was set
};

// ---- weights in memory ----

/// Exactly the bytes Model::save_weights writes to a `.weights.h5` file (Keras 3 format, with the
/// optimizer state once compiled); write them to a file and Keras or load_weights reads them.
/// Refuses non-finite weights as save_weights does.
std::vector<std::uint8_t> save_weights_to_bytes(const Model& model);
/// Model::load_weights from bytes (save_weights_to_bytes' or a `.weights.h5` file's contents),
/// with the same checks: the layout is checked against the model before anything changes, and a
/// file that does not fit (IOError/ShapeError) leaves the model as it was.
void load_weights_from_bytes(Model& model, const std::vector<std::uint8_t>& bytes);

}  // namespace kerascpp::testing
