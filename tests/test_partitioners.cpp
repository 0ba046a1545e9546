// TensorFlow's variable partitioners (tf.distribute.experimental.partitioners) and how a
// partitioned variable's rows are split; the expected counts follow TensorFlow's formulas and
// docstring examples.
#include <doctest/doctest.h>

#include <cmath>

#include "kerascpp/distribute/parameter_server.hpp"
#include "kerascpp/kerascpp.hpp"

namespace K = kerascpp;
namespace D = kerascpp::distribute;

TEST_CASE("partitioners: FixedShards, MinSize and MaxSize split axis 0 by TensorFlow's rules") {
  const K::Shape table{1024, 1024};  // float32: 4 MiB, 4 KiB a row
  CHECK(D::FixedShardsPartitioner(3)(table, K::DType::float32) == std::vector<std::int64_t>{3, 1});
  CHECK(D::FixedShardsPartitioner(8)(K::Shape{5, 2}, K::DType::float32) == std::vector<std::int64_t>{5, 1});
  // TensorFlow's min_max_variable_partitioner docstring: [1024, 1024] float32, 256 KiB slices ->
  // 16 partitions when max_partitions >= 16, else max_partitions.
  CHECK(D::MinSizePartitioner(256 << 10, 32)(table, K::DType::float32) == std::vector<std::int64_t>{16, 1});
  CHECK(D::MinSizePartitioner(256 << 10, 4)(table, K::DType::float32) == std::vector<std::int64_t>{4, 1});
  CHECK(D::MinSizePartitioner()(table, K::DType::float32) == std::vector<std::int64_t>{1, 1});  // max_shards = 1
  // ceil: 3 rows of 4 floats (48 bytes) at >= 20 bytes a shard -> ceil(48 / 20) = 3, capped by 3 rows.
  CHECK(D::MinSizePartitioner(20, 10)(K::Shape{3, 4}, K::DType::float32) == std::vector<std::int64_t>{3, 1});
  // MaxSize: whole rows per shard, floor(max / row bytes) of them, ceil(rows / that) shards.
  const std::int64_t row = 1024 * 4, rows_per_shard = (300 << 10) / row;
  CHECK(D::MaxSizePartitioner(300 << 10)(table, K::DType::float32) ==
        std::vector<std::int64_t>{(1024 + rows_per_shard - 1) / rows_per_shard, 1});
  CHECK(D::MaxSizePartitioner(300 << 10, 5)(table, K::DType::float32) == std::vector<std::int64_t>{5, 1});
  CHECK(D::MaxSizePartitioner(1)(K::Shape{6, 4}, K::DType::float32) == std::vector<std::int64_t>{6, 1});  // a row each
  CHECK(D::MaxSizePartitioner(1 << 20)(K::Shape{7}, K::DType::int32) == std::vector<std::int64_t>{1});

  CHECK_THROWS_WITH_AS(D::FixedShardsPartitioner(0), doctest::Contains("at least 1"), K::ValueError);
  CHECK_THROWS_WITH_AS(D::MaxSizePartitioner(0), doctest::Contains("max_shard_bytes"), K::ValueError);
  CHECK_THROWS_WITH_AS(D::FixedShardsPartitioner(2)(K::Shape{}, K::DType::float32), doctest::Contains("scalar"),
                       K::ValueError);
}

TEST_CASE("partitioners: shard rows are rows / n each, the first rows % n one longer") {
  using R = std::vector<std::pair<std::int64_t, std::int64_t>>;
  CHECK(D::shard_rows(10, 3) == R{{0, 4}, {4, 7}, {7, 10}});
  CHECK(D::shard_rows(4, 2) == R{{0, 2}, {2, 4}});
  CHECK(D::shard_rows(5, 1) == R{{0, 5}});
  CHECK_THROWS_AS(D::shard_rows(5, 0), K::ValueError);
}

TEST_CASE("ParameterServerStrategy: a cluster without ps, an evaluator task or no token is refused") {
  D::TFConfigClusterResolver no_ps(
      R"({"cluster": {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}, "task": {"type": "chief", "index": 0}})");
  CHECK_THROWS_WITH_AS(D::ParameterServerStrategy{no_ps}, doctest::Contains("at least one ps"), K::ValueError);
  D::TFConfigClusterResolver evaluator(
      R"({"cluster": {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "ps": ["127.0.0.1:3"],)"
      R"( "evaluator": ["127.0.0.1:4"]}, "task": {"type": "evaluator", "index": 0}})");
  CHECK_THROWS_WITH_AS(D::ParameterServerStrategy{evaluator}, doctest::Contains("evaluator"), K::ValueError);
  if (!std::getenv("KERASCPP_CLUSTER_TOKEN")) {
    D::TFConfigClusterResolver chief(
        R"({"cluster": {"chief": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"], "ps": ["127.0.0.1:3"]},)"
        R"( "task": {"type": "chief", "index": 0}})");
    CHECK_THROWS_WITH_AS(D::ParameterServerStrategy{chief}, doctest::Contains("KERASCPP_CLUSTER_TOKEN is not set"),
                         K::ValueError);
  }
}
