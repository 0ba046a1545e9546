// CIFAR-10/100 binary batches and MovieLens ratings files, written by the tests in the real
// formats: HWC transposition, labels, record-size and label errors; "::" and CSV ratings, their
// line-numbered errors, and the official NCF leave-one-out split.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "data_files.hpp"
#include "kerascpp/data/cifar.hpp"
#include "kerascpp/data/movielens.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace data = kerascpp::data;
using kerascpp_test::drain;
using kerascpp_test::error_of;
using kerascpp_test::TempDir;
using kerascpp_test::write_file;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Pixel value of record r, channel c, row y, column x in the test files.
std::uint8_t cifar_pixel(int r, int c, int y, int x) { return static_cast<std::uint8_t>(r * 50 + c * 80 + y * 3 + x); }

// Records with the given label bytes each, pixels CHW as the CIFAR files store them.
std::string cifar_file(const std::vector<std::vector<int>>& labels) {
  std::string out;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    for (int l : labels[r]) out.push_back(static_cast<char>(l));
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) out.push_back(static_cast<char>(cifar_pixel(static_cast<int>(r), c, y, x)));
  }
  return out;
}

}  // namespace

TEST_CASE("CifarBinaryDataset: (32, 32, 3) HWC images and int32 labels; CIFAR-100 fine and coarse") {
  TempDir dir;
  write_file(dir.file("data_batch_1.bin"), cifar_file({{3}, {9}}));
  write_file(dir.file("test_batch.bin"), cifar_file({{0}}));
  const auto elements = drain(data::CifarBinaryDataset({dir.file("data_batch_1.bin"), dir.file("test_batch.bin")}));
  REQUIRE(elements.size() == 3);
  CHECK(elements[0][0].shape() == K::Shape{32, 32, 3});
  CHECK(elements[0][0].dtype() == K::DType::uint8);
  CHECK(elements[1][1].dtype() == K::DType::int32);
  CHECK(elements[1][1].to_vector() == std::vector<float>{9});
  const auto* img = static_cast<const std::uint8_t*>(elements[1][0].raw());
  for (int y : {0, 5, 31})
    for (int x : {0, 17, 31})
      for (int c = 0; c < 3; ++c) CHECK(img[(y * 32 + x) * 3 + c] == cifar_pixel(1, c, y, x));
  const auto floats = drain(data::CifarBinaryDataset({dir.file("test_batch.bin")}, {.dtype = K::DType::float32}));
  CHECK(floats[0][0].dtype() == K::DType::float32);
  CHECK(floats[0][0].to_vector()[3 * 33 + 2] == cifar_pixel(0, 2, 1, 1));

  const auto arrays = data::read_cifar_binary({dir.file("data_batch_1.bin"), dir.file("test_batch.bin")});
  CHECK(arrays.images.shape() == K::Shape{3, 32, 32, 3});
  CHECK(arrays.labels.to_vector() == std::vector<float>{3, 9, 0});
  CHECK(std::equal(img, img + 3072, static_cast<const std::uint8_t*>(arrays.images.raw()) + 3072));

  write_file(dir.file("train.bin"), cifar_file({{4, 77}, {19, 99}}));
  const auto fine = drain(data::CifarBinaryDataset({dir.file("train.bin")}, {.num_classes = 100}));
  CHECK(fine[1][1].to_vector() == std::vector<float>{99});
  const auto coarse = data::read_cifar_binary({dir.file("train.bin")}, {.num_classes = 100, .label_mode = "coarse"});
  CHECK(coarse.labels.to_vector() == std::vector<float>{4, 19});
  CHECK(static_cast<const std::uint8_t*>(coarse.images.raw())[3072 + 2] == cifar_pixel(1, 2, 0, 0));
}

TEST_CASE("CIFAR files of the wrong size or with labels out of range are IOErrors naming the file") {
  TempDir dir;
  write_file(dir.file("cut.bin"), cifar_file({{1}, {2}}).substr(0, 5000));
  const std::string e = error_of<K::IOError>([&] { drain(data::CifarBinaryDataset({dir.file("cut.bin")})); });
  CHECK(contains(e, "cut.bin"));
  CHECK(contains(e, "5000 bytes"));
  write_file(dir.file("hundred.bin"), cifar_file({{1, 2}}));
  CHECK(contains(error_of<K::IOError>([&] { data::read_cifar_binary({dir.file("hundred.bin")}); }), "set num_classes"));
  write_file(dir.file("label.bin"), cifar_file({{1}, {12}}));
  const std::string l = error_of<K::IOError>([&] { drain(data::CifarBinaryDataset({dir.file("label.bin")})); });
  CHECK(contains(l, "record 1"));
  CHECK(contains(l, "label 12"));
  CHECK(contains(error_of<K::IOError>([&] { data::read_cifar_binary({dir.file("missing.bin")}); }), "missing.bin"));
  CHECK(
      contains(error_of<K::ValueError>([&] { data::CifarBinaryDataset({dir.file("label.bin")}, {.num_classes = 20}); }),
               "num_classes"));
}

TEST_CASE("read_movielens_ratings reads ml-1m's ratings.dat and ml-20m's ratings.csv; bad lines name file and line") {
  TempDir dir;
  write_file(dir.file("ratings.dat"), "1::1193::5::978300760\n1::661::3::978302109\r\n2::1357::4::978298709\n");
  const auto m1 = data::read_movielens_ratings(dir.file("ratings.dat"));
  CHECK(m1.user_id.dtype() == K::DType::int64);
  CHECK(m1.user_id.to_vector() == std::vector<float>{1, 1, 2});
  CHECK(m1.item_id.to_vector() == std::vector<float>{1193, 661, 1357});
  CHECK(m1.rating.to_vector() == std::vector<float>{5, 3, 4});
  CHECK(m1.timestamp.data<std::int64_t>()[2] == 978298709);
  write_file(dir.file("ratings.csv"), "userId,movieId,rating,timestamp\n1,2,3.5,1112486027\n7,29,0.5,1112484676\n");
  const auto m20 = data::read_movielens_ratings(dir.file("ratings.csv"));
  CHECK(m20.rating.to_vector() == std::vector<float>{3.5f, 0.5f});
  CHECK(m20.user_id.to_vector() == std::vector<float>{1, 7});

  write_file(dir.file("bad.dat"), "1::2::3::4\n1::2::3\n");
  const std::string e = error_of<K::IOError>([&] { data::read_movielens_ratings(dir.file("bad.dat")); });
  CHECK(contains(e, "bad.dat' line 2"));
  CHECK(contains(e, "4 fields"));
  write_file(dir.file("bad.csv"), "userId,movieId,rating,timestamp\n1,2,three,4\n");
  CHECK(
      contains(error_of<K::IOError>([&] { data::read_movielens_ratings(dir.file("bad.csv")); }), "line 2: the rating"));
  write_file(dir.file("empty.dat"), "");
  CHECK(contains(error_of<K::IOError>([&] { data::read_movielens_ratings(dir.file("empty.dat")); }), "no ratings"));
}

TEST_CASE("leave_one_out_split: min_ratings filter, ids by first appearance, the latest rating held out") {
  TempDir dir;
  // User 5: 3 ratings (latest: movie 30 at t=9); user 8: 1 rating (dropped at min 2); user 2: 2
  // ratings at the same time (the later line is held out).
  write_file(dir.file("ratings.dat"), "5::10::4::5\n8::99::1::1\n5::30::2::9\n2::20::3::7\n5::20::5::1\n2::10::3::7\n");
  const auto s = data::leave_one_out_split(data::read_movielens_ratings(dir.file("ratings.dat")), 2);
  CHECK(s.num_users == 2);
  CHECK(s.user_ids == std::vector<std::int64_t>{5, 2});
  CHECK(s.item_ids == std::vector<std::int64_t>{10, 30, 20});  // 99 belonged to the dropped user
  CHECK(s.num_items == 3);
  CHECK(s.held_out == std::vector<std::int32_t>{1, 0});        // 30 for user 5, 10 for user 2
  CHECK(s.train_items[0] == std::vector<std::int32_t>{2, 0});  // 20 (t=1), 10 (t=5)
  CHECK(s.train_items[1] == std::vector<std::int32_t>{2});     // 20
  CHECK(contains(error_of<K::ValueError>(
                     [&] { data::leave_one_out_split(data::read_movielens_ratings(dir.file("ratings.dat")), 50); }),
                 "50 or more"));
}
