// MultiWorkerMirroredStrategy started without an MPI launcher runs as one worker (and says so);
// its options and environment are checked like every strategy's. The multi-process behaviour is
// tested under mpirun by tests/mpi/test_multi_worker.py.
#include <doctest/doctest.h>

#include "distribute/worker_group.hpp"
#include "kerascpp/kerascpp.hpp"
#include "mirrored_fixture.hpp"
#include "scoped_test_state.hpp"

namespace K = kerascpp;
namespace D = kerascpp::distribute;

namespace {

using test_scopes::CerrCapture;
using test_scopes::ScopedEnv;

std::vector<K::Tensor> train(D::Strategy strategy) {
  K::Model model = mirrored_fixture::small_convnet(true);
  model.compile(
      {.optimizer = K::optimizers::Adam(1e-3), .loss = "sparse_categorical_crossentropy", .distribute = strategy});
  auto d = mirrored_fixture::make_data(70);
  model.fit(K::Dataset::from_tensor_slices(d.x, d.y).batch(16), {.epochs = 2, .verbose = 0});
  return model.get_weights();
}

}  // namespace

TEST_CASE("multi-worker without a launcher: one worker, a notice, and MirroredStrategy's results") {
  REQUIRE_FALSE(D::launched_by_mpi_launcher());
  CerrCapture capture;
  D::MultiWorkerMirroredStrategy<> strategy(2);
  CHECK(capture.text.str().find("MultiWorkerMirroredStrategy: not started by mpirun or srun and no TF_CONFIG; running "
                                "as a single worker over cpu:0, cpu:1") != std::string::npos);
  CHECK(strategy.num_workers() == 1);
  CHECK(strategy.worker_index() == 0);
  CHECK(strategy.is_chief());
  CHECK(strategy.num_replicas_in_sync() == 2);
  CHECK(strategy.describe().rfind("MultiWorkerMirroredStrategy(cpu:0, cpu:1", 0) == 0);
  // The same replicas, the same collective: bit-identical to MirroredStrategy.
  auto alone = train(strategy);
  auto mirrored = train(D::MirroredStrategy<>(2));
  CHECK(mirrored_fixture::max_abs_diff(alone, mirrored) == 0.0);
}

TEST_CASE("multi-worker: the launcher is recognised from the environment it sets") {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    CAPTURE(var);
    ScopedEnv env(var, "2");
    CHECK(D::launched_by_mpi_launcher());
  }
  CHECK_FALSE(D::launched_by_mpi_launcher());
}

TEST_CASE("multi-worker: bad options and environment are named") {
  CHECK_THROWS_WITH_AS(D::MultiWorkerMirroredStrategy<>(2, {.collective_timeout = std::chrono::seconds(0)}),
                       doctest::Contains("collective_timeout must be > 0 s"), K::ValueError);
  CHECK_THROWS_WITH_AS(D::MultiWorkerMirroredStrategy<>(0), doctest::Contains("at least 1"), K::ValueError);
  CHECK_THROWS_AS(D::MultiWorkerMirroredStrategy<>(std::vector<std::string>{}), K::ValueError);
  for (const char* bad : {"abc", "0", "-3", "10s"}) {
    CAPTURE(bad);
    ScopedEnv env("KERASCPP_COLLECTIVE_TIMEOUT", bad);
    CHECK_THROWS_WITH_AS(D::MultiWorkerMirroredStrategy<>(1), doctest::Contains("KERASCPP_COLLECTIVE_TIMEOUT"),
                         K::ValueError);
  }
}
