// tf.train.Example: parse_single_example / parse_example against a feature spec, their errors,
// serialize_example's bytes against TensorFlow's encoding, and a TFRecord pipeline of Examples.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "data_files.hpp"
#include "kerascpp/data/bytes.hpp"
#include "kerascpp/data/tf_example.hpp"
#include "kerascpp/data/tfrecord.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace data = kerascpp::data;
using kerascpp_test::error_of;

namespace {

K::Tensor int64s(K::Shape shape, std::vector<std::int64_t> v) { return K::Tensor::from_vector(std::move(shape), v); }

data::ParsedFeatures sample() {
  return {{"image", K::Tensor::from_vector({2, 2}, std::vector<float>{0.5f, -1.f, 2.f, 1e-3f})},
          {"label", int64s({}, {1ll << 40})},
          {"name", data::bytes_tensor(std::string("a\0b", 3))},
          {"tags", K::Tensor::from_vector({3}, std::vector<std::int32_t>{7, -8, 9})}};
}

const data::FeatureSpecs kSpec{{"image", data::FixedLenFeature{{2, 2}, K::DType::float32}},
                               {"label", data::FixedLenFeature{{}, K::DType::int64}},
                               {"name", data::FixedLenFeature{{}, K::DType::uint8}},
                               {"tags", data::VarLenFeature{K::DType::int64}}};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("serialize_example writes the bytes TensorFlow's Example classes write") {
  // From the Python `tfrecord` package's example_pb2 (generated from TensorFlow's example.proto):
  // Example(features={"a": float_list [1.5, 2]}).SerializeToString().
  const std::string expected(
      "\n\x13\n\x11\n\x01"
      "a\x12\x0c\x12\n\n\x08\x00\x00\xc0?\x00\x00\x00@",
      21);
  CHECK(data::serialize_example({{"a", K::Tensor::from_vector({2}, {1.5f, 2.f})}}) == expected);
  // Map entries in key order: the same features give the same bytes.
  CHECK(data::serialize_example(sample()) == data::serialize_example(sample()));
}

TEST_CASE("parse_single_example reads back what serialize_example wrote") {
  const std::string bytes = data::serialize_example(sample());
  for (const auto& parsed :
       {data::parse_single_example(bytes, kSpec), data::parse_single_example(data::bytes_tensor(bytes), kSpec)}) {
    CHECK(parsed.at("image").shape() == K::Shape{2, 2});
    CHECK(parsed.at("image").to_vector() == std::vector<float>{0.5f, -1.f, 2.f, 1e-3f});
    CHECK(parsed.at("label").shape() == K::Shape{});
    CHECK(parsed.at("label").data<std::int64_t>()[0] == (1ll << 40));
    CHECK(data::tensor_bytes(parsed.at("name")) == std::string("a\0b", 3));
    CHECK(parsed.at("tags").dtype() == K::DType::int64);
    CHECK(parsed.at("tags").shape() == K::Shape{3});
    CHECK(parsed.at("tags").data<std::int64_t>()[1] == -8);
  }
}

TEST_CASE("parse_single_example: defaults, missing and mismatched features") {
  const std::string bytes = data::serialize_example(sample());
  SUBCASE("a missing feature takes its default, repeated from one value; a VarLen one is empty") {
    const auto parsed = data::parse_single_example(
        bytes, {{"weight", data::FixedLenFeature{{2}, K::DType::float32, K::Tensor::full({}, 0.25f)}},
                {"ids", data::FixedLenFeature{{}, K::DType::int64, K::Tensor::from_vector({1}, {-1})}},
                {"more", data::VarLenFeature{K::DType::float32}}});
    CHECK(parsed.at("weight").to_vector() == std::vector<float>{0.25f, 0.25f});
    CHECK(parsed.at("ids").data<std::int64_t>()[0] == -1);
    CHECK(parsed.at("more").shape() == K::Shape{0});
  }
  SUBCASE("a missing feature without default names it") {
    const std::string m = error_of<K::ValueError>(
        [&] { data::parse_single_example(bytes, {{"weight", data::FixedLenFeature{{}, K::DType::float32}}}); });
    CHECK(contains(m, "parse_single_example: feature 'weight' is missing"));
  }
  SUBCASE("another list type than the spec's") {
    const std::string m = error_of<K::ValueError>(
        [&] { data::parse_single_example(bytes, {{"label", data::FixedLenFeature{{}, K::DType::float32}}}); });
    CHECK(contains(m, "feature 'label' holds a int64_list but its spec asks for float32"));
  }
  SUBCASE("another number of values than the shape") {
    const std::string m = error_of<K::ValueError>(
        [&] { data::parse_single_example(bytes, {{"image", data::FixedLenFeature{{3}, K::DType::float32}}}); });
    CHECK(contains(m, "feature 'image' holds 4 values but its FixedLenFeature of shape (3,) needs 3"));
  }
  SUBCASE("bytes that are not an Example") {
    CHECK_THROWS_AS(data::parse_single_example(std::string("\xff\xff\xff", 3), kSpec), K::IOError);
  }
  SUBCASE("specs a tensor cannot hold") {
    CHECK_THROWS_AS(data::parse_single_example(bytes, {{"s", data::VarLenFeature{K::DType::uint8}}}), K::ValueError);
    CHECK_THROWS_AS(data::parse_single_example(bytes, {{"s", data::FixedLenFeature{{2}, K::DType::uint8}}}),
                    K::ValueError);
    CHECK_THROWS_AS(data::parse_single_example(bytes, {{"s", data::FixedLenFeature{{}, K::DType::int32}}}),
                    K::ValueError);
    CHECK_THROWS_AS(data::parse_single_example(
                        bytes, {{"s", data::FixedLenFeature{{3}, K::DType::float32, K::Tensor::full({2}, 1.f)}}}),
                    K::ValueError);
  }
}

TEST_CASE("parse_example stacks a batch, padding VarLen values with zeros") {
  auto second = sample();
  second["tags"] = int64s({1}, {5});
  second["label"] = int64s({}, {-2});
  const std::vector<K::Tensor> batch{data::bytes_tensor(data::serialize_example(sample())),
                                     data::bytes_tensor(data::serialize_example(second))};
  const auto parsed = data::parse_example(batch, kSpec);
  CHECK(parsed.at("image").shape() == K::Shape{2, 2, 2});
  CHECK(parsed.at("label").shape() == K::Shape{2});
  CHECK(parsed.at("label").data<std::int64_t>()[1] == -2);
  CHECK(parsed.at("name").shape() == K::Shape{2, 3});
  CHECK(parsed.at("tags").shape() == K::Shape{2, 3});
  const std::int64_t* tags = parsed.at("tags").data<std::int64_t>();
  CHECK(std::vector<std::int64_t>(tags, tags + 6) == std::vector<std::int64_t>{7, -8, 9, 5, 0, 0});

  second["name"] = data::bytes_tensor("longer");
  const std::vector<K::Tensor> ragged{batch[0], data::bytes_tensor(data::serialize_example(second))};
  CHECK_THROWS_AS(data::parse_example(ragged, kSpec), K::ShapeError);
  second.erase("label");
  const std::string m = error_of<K::ValueError>(
      [&] { data::parse_example({batch[0], data::bytes_tensor(data::serialize_example(second))}, kSpec); });
  CHECK(contains(m, "parse_example: example 1, feature 'label' is missing"));
}

TEST_CASE("TFRecordDataset of Examples maps through parse_single_example into batches") {
  kerascpp_test::TempDir dir;
  {
    data::TFRecordWriter writer(dir.file("examples.tfrecord"), {"GZIP"});
    for (int i = 0; i < 5; ++i)
      writer.write(data::serialize_example(
          {{"x", K::Tensor::from_vector({3}, std::vector<float>(3, float(i)))}, {"y", int64s({}, {i})}}));
  }
  const data::FeatureSpecs spec{{"x", data::FixedLenFeature{{3}, K::DType::float32}},
                                {"y", data::FixedLenFeature{{}, K::DType::int64}}};
  const auto ds = data::TFRecordDataset({dir.file("examples.tfrecord")}, {"GZIP"})
                      .map([spec](const K::Example& e) {
                        auto f = data::parse_single_example(e[0], spec);
                        return K::Example{f.at("x"), f.at("y")};
                      })
                      .batch(2);
  const auto batches = kerascpp_test::drain(ds);
  REQUIRE(batches.size() == 3);
  CHECK(batches[1][0].shape() == K::Shape{2, 3});
  CHECK(batches[1][0].to_vector() == std::vector<float>{2, 2, 2, 3, 3, 3});
  CHECK(batches[2][1].shape() == K::Shape{1});
  CHECK(batches[2][1].data<std::int64_t>()[0] == 4);
}
