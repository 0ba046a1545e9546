// make_blobs and make_classification after scikit-learn (sklearn.datasets), simplified, drawing
// from kerascpp::Rng so a seed gives the same data on every platform and standard library.
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "check.hpp"
#include "kerascpp/core/random.hpp"
#include "kerascpp/testing.hpp"

namespace kerascpp::testing {
namespace {

// Rows of one problem before they are shuffled and put into tensors.
struct Rows {
  std::int64_t n_features = 0;
  std::vector<float> x;  // row-major [n, n_features]
  std::vector<std::int32_t> y;
};

// n items over k groups as scikit-learn splits them: n / k each, the first n % k get one more.
std::vector<std::int64_t> split_evenly(std::int64_t n, std::int64_t k) {
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(k), n / k);
  for (std::int64_t i = 0; i < n % k; ++i) ++sizes[static_cast<std::size_t>(i)];
  return sizes;
}

// A uniform integer in [0, n) (the modulo bias is below 2^-40 for any n a test uses).
std::uint64_t below(Rng& rng, std::uint64_t n) { return rng.next_u64() % n; }

// Fisher-Yates over whole rows, then the tensors.
ToyData shuffled(Rows rows, Rng& rng) {
  const auto n = static_cast<std::int64_t>(rows.y.size());
  const auto f = static_cast<std::size_t>(rows.n_features);
  for (std::int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<std::int64_t>(below(rng, static_cast<std::uint64_t>(i + 1)));
    std::swap(rows.y[static_cast<std::size_t>(i)], rows.y[static_cast<std::size_t>(j)]);
    for (std::size_t c = 0; c < f; ++c) std::swap(rows.x[i * f + c], rows.x[j * f + c]);
  }
  return ToyData{Tensor::from_vector({n, rows.n_features}, rows.x), Tensor::from_vector({n}, rows.y)};
}

void check_sizes(const char* what, std::int64_t n_samples, int n_features) {
  KERASCPP_CHECK_VALUE(n_samples > 0, "{}: n_samples must be > 0, got {}", what, n_samples);
  KERASCPP_CHECK_VALUE(n_features > 0, "{}: n_features must be > 0, got {}", what, n_features);
}

}  // namespace

Dataset ToyData::dataset() const { return Dataset::from_tensor_slices(x, y); }

ToyData make_blobs(std::int64_t n_samples, int centers, int n_features, std::uint64_t seed, double cluster_std) {
  check_sizes("make_blobs", n_samples, n_features);
  KERASCPP_CHECK_VALUE(centers > 0, "make_blobs: centers must be > 0, got {}", centers);
  KERASCPP_CHECK_VALUE(cluster_std >= 0 && std::isfinite(cluster_std),
                       "make_blobs: cluster_std must be finite and >= 0, got {}", cluster_std);
  Rng rng(seed);
  const auto f = static_cast<std::size_t>(n_features);
  std::vector<double> center(static_cast<std::size_t>(centers) * f);
  for (double& c : center) c = -10.0 + 20.0 * rng.uniform_double();  // scikit-learn's center_box
  Rows rows{n_features, {}, {}};
  const auto sizes = split_evenly(n_samples, centers);
  for (std::size_t k = 0; k < sizes.size(); ++k)
    for (std::int64_t i = 0; i < sizes[k]; ++i) {
      for (std::size_t c = 0; c < f; ++c)
        rows.x.push_back(static_cast<float>(center[k * f + c] + cluster_std * rng.normal()));
      rows.y.push_back(static_cast<std::int32_t>(k));
    }
  return shuffled(std::move(rows), rng);
}

ToyData make_classification(std::int64_t n_samples, int n_features, int n_classes, std::uint64_t seed,
                            ClassificationOptions options) {
  const char* what = "make_classification";
  check_sizes(what, n_samples, n_features);
  const int informative = options.n_informative;
  KERASCPP_CHECK_VALUE(n_classes >= 2, "{}: n_classes must be >= 2, got {}", what, n_classes);
  KERASCPP_CHECK_VALUE(informative >= 1 && informative <= n_features,
                       "{}: n_informative must be in [1, n_features = {}], got {}", what, n_features, informative);
  KERASCPP_CHECK_VALUE(options.n_clusters_per_class >= 1, "{}: n_clusters_per_class must be >= 1, got {}", what,
                       options.n_clusters_per_class);
  const std::int64_t clusters = static_cast<std::int64_t>(n_classes) * options.n_clusters_per_class;
  KERASCPP_CHECK_VALUE(informative >= 62 || clusters <= (std::int64_t{1} << informative),
                       "{}: n_classes * n_clusters_per_class ({}) must be <= 2^n_informative ({}): raise n_informative "
                       "or lower n_clusters_per_class",
                       what, clusters, std::int64_t{1} << std::min(informative, 62));
  KERASCPP_CHECK_VALUE(options.class_sep >= 0 && std::isfinite(options.class_sep),
                       "{}: class_sep must be finite and >= 0, got {}", what, options.class_sep);
  KERASCPP_CHECK_VALUE(options.flip_y >= 0 && options.flip_y <= 1, "{}: flip_y must be in [0, 1], got {}", what,
                       options.flip_y);

  Rng rng(seed);
  const auto inf = static_cast<std::size_t>(informative);
  const auto f = static_cast<std::size_t>(n_features);
  // Distinct hypercube vertices, one per cluster, scaled to +-class_sep.
  std::set<std::vector<bool>> used;
  std::vector<std::vector<double>> centroids;
  while (static_cast<std::int64_t>(centroids.size()) < clusters) {
    std::vector<bool> vertex(inf);
    for (std::size_t d = 0; d < inf; ++d) vertex[d] = (rng.next_u64() >> 63) != 0;
    if (!used.insert(vertex).second) continue;
    std::vector<double> c(inf);
    for (std::size_t d = 0; d < inf; ++d) c[d] = vertex[d] ? options.class_sep : -options.class_sep;
    centroids.push_back(std::move(c));
  }
  Rows rows{n_features, {}, {}};
  const auto sizes = split_evenly(n_samples, clusters);
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    // The cluster's covariance: N(0, 1) points under a random map with entries in [-1, 1).
    std::vector<double> map(inf * inf);
    for (double& a : map) a = 2.0 * rng.uniform_double() - 1.0;
    std::vector<double> z(inf);
    for (std::int64_t i = 0; i < sizes[k]; ++i) {
      for (double& v : z) v = rng.normal();
      for (std::size_t c = 0; c < inf; ++c) {
        double v = centroids[k][c];
        for (std::size_t r = 0; r < inf; ++r) v += z[r] * map[r * inf + c];
        rows.x.push_back(static_cast<float>(v));
      }
      for (std::size_t c = inf; c < f; ++c) rows.x.push_back(static_cast<float>(rng.normal()));  // noise features
      rows.y.push_back(static_cast<std::int32_t>(static_cast<std::int64_t>(k) % n_classes));
    }
  }
  for (auto& label : rows.y)
    if (rng.uniform_double() < options.flip_y)
      label = static_cast<std::int32_t>(below(rng, static_cast<std::uint64_t>(n_classes)));
  return shuffled(std::move(rows), rng);
}

}  // namespace kerascpp::testing
