// decode_png / decode_jpeg / decode_image on files written by libpng and libjpeg-turbo, the
// errors on corrupt, truncated and unsupported bytes, resize_image against the half-pixel formula
// in double, and image_dataset_from_directory's listing, labels, split, batches and errors.
// (Bit-equality with Pillow's decoders and Keras' listing and resize: tests/python/test_image_data.py.)
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "data_files.hpp"
#include "image_files.hpp"
#include "kerascpp/data/bytes.hpp"
#include "kerascpp/data/image_dataset.hpp"
#include "kerascpp/data/images.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;
namespace data = kerascpp::data;
using kerascpp_test::drain;
using kerascpp_test::error_of;
using kerascpp_test::jpeg_bytes;
using kerascpp_test::pattern;
using kerascpp_test::png_bytes;
using kerascpp_test::TempDir;
using kerascpp_test::write_file;

namespace {

std::vector<std::uint8_t> bytes_of(const K::Tensor& t) {
  const auto* p = static_cast<const std::uint8_t*>(t.raw());
  return {p, p + t.nbytes()};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("decode_png gives back the pixels libpng wrote, in every channel layout and converted") {
  for (int channels : {1, 2, 3, 4}) {
    const auto pixels = pattern(5, 7, channels);
    const K::Tensor img = data::decode_png(data::bytes_tensor(png_bytes(5, 7, channels, pixels)));
    CHECK(img.shape() == K::Shape{5, 7, channels});
    CHECK(img.dtype() == K::DType::uint8);
    CHECK(bytes_of(img) == pixels);
  }
  const auto rgba = pattern(3, 4, 4);
  const K::Tensor file = data::bytes_tensor(png_bytes(3, 4, 4, rgba));
  const auto rgb = bytes_of(data::decode_png(file, {.channels = 3}));
  const auto grey_src = pattern(3, 4, 1);
  const auto grey_as_rgba =
      bytes_of(data::decode_png(data::bytes_tensor(png_bytes(3, 4, 1, grey_src)), {.channels = 4}));
  for (std::size_t p = 0; p < 12; ++p) {
    for (std::size_t c = 0; c < 3; ++c) {
      CHECK(rgb[p * 3 + c] == rgba[p * 4 + c]);       // alpha dropped
      CHECK(grey_as_rgba[p * 4 + c] == grey_src[p]);  // grey repeated
    }
    CHECK(grey_as_rgba[p * 4 + 3] == 255);  // opaque alpha added
  }
  const auto big = pattern(19, 23, 3);  // Adam7: seven passes, reassembled by libpng
  CHECK(bytes_of(data::decode_png(data::bytes_tensor(png_bytes(19, 23, 3, big, 8, true)))) == big);
  // 16-bit samples keep their high byte, as tf.io.decode_png(dtype=uint8).
  std::vector<std::uint8_t> wide{0x12, 0x34, 0xff, 0x01, 0x00, 0xff};
  CHECK(bytes_of(data::decode_png(data::bytes_tensor(png_bytes(1, 3, 1, wide, 16)))) ==
        std::vector<std::uint8_t>{0x12, 0xff, 0x00});
  CHECK(data::decode_image(file).shape() == K::Shape{3, 4, 4});
}

TEST_CASE("decode_jpeg: shapes, grey and RGB output, scaled decoding, and what libjpeg decodes of a flat image") {
  const std::vector<std::uint8_t> flat(16 * 24 * 3, 0);
  std::vector<std::uint8_t> colour = flat;
  for (std::size_t p = 0; p < colour.size(); p += 3) colour[p] = 200, colour[p + 1] = 40, colour[p + 2] = 90;
  const K::Tensor file = data::bytes_tensor(jpeg_bytes(16, 24, 3, colour, 100));
  const K::Tensor img = data::decode_jpeg(file, {.dct_method = "INTEGER_ACCURATE"});
  REQUIRE(img.shape() == K::Shape{16, 24, 3});
  for (std::size_t p = 0; p < 16 * 24; ++p) {  // a flat colour survives JPEG within its colour rounding
    CHECK(std::abs(int(bytes_of(img)[p * 3]) - 200) <= 2);
    CHECK(std::abs(int(bytes_of(img)[p * 3 + 2]) - 90) <= 2);
  }
  CHECK(data::decode_jpeg(file, {.channels = 1}).shape() == K::Shape{16, 24, 1});
  CHECK(data::decode_jpeg(file, {.ratio = 2}).shape() == K::Shape{8, 12, 3});
  CHECK(data::decode_jpeg(file, {.ratio = 8}).shape() == K::Shape{2, 3, 3});
  const K::Tensor grey_file = data::bytes_tensor(jpeg_bytes(9, 5, 1, pattern(9, 5, 1)));
  CHECK(data::decode_jpeg(grey_file).shape() == K::Shape{9, 5, 1});
  CHECK(data::decode_image(grey_file, {.channels = 3}).shape() == K::Shape{9, 5, 3});
  const K::Tensor rgba = data::decode_image(file, {.channels = 4});
  CHECK(rgba.shape() == K::Shape{16, 24, 4});
  CHECK(bytes_of(rgba)[3] == 255);
  CHECK(contains(error_of<K::ValueError>([&] { data::decode_jpeg(file, {.channels = 4}); }),
                 "channels must be 0, 1 or 3"));
  CHECK(contains(error_of<K::ValueError>([&] { data::decode_jpeg(file, {.ratio = 3}); }), "ratio"));
  CHECK(contains(error_of<K::ValueError>([&] { data::decode_jpeg(file, {.dct_method = "FLOAT"}); }), "dct_method"));
}

TEST_CASE("corrupt, truncated and unsupported images are IOErrors naming the source, never a crash") {
  const std::string png = png_bytes(20, 20, 3, pattern(20, 20, 3));
  const std::string jpeg = jpeg_bytes(64, 64, 3, pattern(64, 64, 3));
  const auto io_error = [](const std::string& bytes) {
    return error_of<K::IOError>([&] { data::decode_image(data::bytes_tensor(bytes), {.source = "x/cat.img"}); });
  };
  for (const std::string& cut : {png.substr(0, png.size() / 2), png.substr(0, 40), jpeg.substr(0, jpeg.size() / 2)}) {
    const std::string e = io_error(cut);
    CHECK(contains(e, "x/cat.img"));
    CHECK(contains(e, "truncated"));
  }
  std::string bad_crc = png;
  bad_crc[bad_crc.size() / 2] ^= 0x5a;  // inside the compressed pixels: IDAT's CRC no longer matches
  CHECK(contains(io_error(bad_crc), "not a valid PNG image"));
  std::string bad_jpeg = jpeg;
  const std::size_t sof = bad_jpeg.find("\xff\xc0");
  REQUIRE(sof != std::string::npos);
  bad_jpeg[sof + 4] = 12;  // 12-bit samples: a precision this libjpeg build does not decode
  CHECK(contains(io_error(bad_jpeg), "not a valid JPEG image"));
  CHECK(contains(io_error("GIF89a\x01\x00\x01\x00"), "GIF images are not supported"));
  CHECK(contains(io_error("BM...."), "BMP images are not supported"));
  CHECK(contains(io_error("hello"), "unknown image format"));
  CHECK(contains(io_error(""), "unknown image format"));
  // A header declaring 65535 x 65535 RGBA in a 60-byte file is refused before any allocation.
  std::string huge = png_bytes(1, 1, 4, {1, 2, 3, 4});
  for (int i : {16, 17, 20, 21}) huge[static_cast<std::size_t>(i)] = '\xff';  // width and height
  CHECK(!io_error(huge).empty());
  // Every prefix of a valid file is refused with an IOError (no crash, no hang).
  for (std::size_t n = 0; n < png.size(); n += 7) CHECK(!io_error(png.substr(0, n)).empty());
  for (std::size_t n = 0; n < jpeg.size(); n += 31) CHECK(!io_error(jpeg.substr(0, n)).empty());
  CHECK(contains(error_of<K::ShapeError>([] { data::decode_png(K::Tensor::zeros({2, 2}, K::DType::uint8)); }),
                 "1-D uint8"));
  CHECK(contains(error_of<K::IOError>([] { data::read_file("/nonexistent/a.png"); }), "/nonexistent/a.png"));
}

namespace {

// tf.image.resize's bilinear sampling written out in double: source coordinate (o + 0.5) * in /
// out - 0.5, its two neighbours clamped to the image, linear weights.
double bilinear_reference(const std::vector<float>& img, int h, int w, int c, int oy, int ox, int ch, int out_h,
                          int out_w) {
  const auto axis = [](int o, int in, int out, int& lo, int& hi) {
    const double s = (o + 0.5) * in / out - 0.5, f = std::floor(s);
    lo = std::clamp(static_cast<int>(f), 0, in - 1);
    hi = std::clamp(static_cast<int>(f) + 1, 0, in - 1);
    return s - f;
  };
  int y0, y1, x0, x1;
  const double fy = axis(oy, h, out_h, y0, y1), fx = axis(ox, w, out_w, x0, x1);
  const auto at = [&](int y, int x) {
    return static_cast<double>(img[static_cast<std::size_t>((y * w + x) * c + ch)]);
  };
  return (1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) + fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1));
}

}  // namespace

TEST_CASE("resize_image: bilinear against the half-pixel formula in double, nearest, crops and batches") {
  const int h = 5, w = 7, c = 2;
  std::vector<float> img(static_cast<std::size_t>(h * w * c));
  for (std::size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>((i * 37) % 101) - 20.f;
  const K::Tensor t = K::Tensor::from_vector({h, w, c}, img);
  for (auto [oh, ow] : {std::pair{11, 3}, std::pair{2, 16}, std::pair{5, 7}}) {
    const auto out = data::resize_image(t, {oh, ow}).to_vector();
    REQUIRE(out.size() == static_cast<std::size_t>(oh * ow * c));
    for (int y = 0; y < oh; ++y)
      for (int x = 0; x < ow; ++x)
        for (int ch = 0; ch < c; ++ch)
          CHECK(out[static_cast<std::size_t>((y * ow + x) * c + ch)] ==
                doctest::Approx(bilinear_reference(img, h, w, c, y, x, ch, oh, ow)).epsilon(1e-6).scale(100));
  }
  // Nearest: output o reads input floor((o + 0.5) * in / out).
  const auto near = data::resize_image(t, {2, 3}, "nearest").to_vector();
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x)
      CHECK(near[static_cast<std::size_t>((y * 3 + x) * c)] ==
            img[static_cast<std::size_t>((((2 * y + 1) * h / 4) * w + (2 * x + 1) * w / 6) * c)]);
  // Batched input: each image resized alone; uint8 input gives the same as its float32 copy.
  const K::Tensor bytes = K::Tensor::from_vector({1, 2, 2, 1}, std::vector<std::uint8_t>{0, 100, 200, 255});
  CHECK(data::resize_image(bytes, {3, 3}).to_vector() ==
        data::resize_image(K::Tensor::from_vector({1, 2, 2, 1}, {0.f, 100.f, 200.f, 255.f}), {3, 3}).to_vector());
  CHECK(contains(error_of<K::ValueError>([&] { data::resize_image(t, {2, 2}, "bicubic"); }), "not supported yet"));
  // Keras' smart_resize window: the centred crop with the target's aspect ratio.
  CHECK(data::aspect_ratio_crop_box(100, 50, {10, 10}) == std::array<std::int64_t, 4>{25, 0, 50, 50});
  CHECK(data::aspect_ratio_crop_box(30, 90, {20, 40}) == std::array<std::int64_t, 4>{0, 15, 30, 60});
  // tf.image.resize_with_pad's layout: 100 x 50 into 10 x 10 is 10 x 5 at column floor(2.5).
  CHECK(data::aspect_ratio_pad_box(100, 50, {10, 10}) == std::array<std::int64_t, 4>{0, 2, 10, 5});
  CHECK(data::aspect_ratio_pad_box(30, 90, {21, 40}) == std::array<std::int64_t, 4>{3, 0, 13, 40});
}

namespace {

// A tree of class folders with PNG files of different sizes (plus things that are not images).
void make_image_tree(const TempDir& dir, const std::vector<std::string>& files) {
  int k = 0;
  for (const std::string& rel : files) {
    const std::filesystem::path p = dir.path / rel;
    std::filesystem::create_directories(p.parent_path());
    const int h = 3 + k % 4, w = 4 + k % 3;
    ++k;
    write_file(p.string(),
               rel.size() > 4 && rel.substr(rel.size() - 4) == ".txt" ? "text" : png_bytes(h, w, 3, pattern(h, w, 3)));
  }
}

std::vector<std::string> relative(const TempDir& dir, const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const std::string& p : paths) out.push_back(std::filesystem::relative(p, dir.path).string());
  return out;
}

}  // namespace

TEST_CASE("image_dataset_from_directory: Keras' file order and labels, batches of float32 NHWC, label modes") {
  TempDir dir;
  make_image_tree(dir, {"dogs/b.png", "dogs/a.PNG", "dogs/sub/c.png", "cats/z.png", "cats/notes.txt", ".hidden/h.png",
                        "birds/x.png"});
  auto r =
      data::image_dataset_from_directory(dir.path.string(), {.batch_size = 2, .image_size = {6, 5}, .shuffle = false});
  CHECK(r.class_names == std::vector<std::string>{"birds", "cats", "dogs"});
  CHECK(relative(dir, r.file_paths) ==
        std::vector<std::string>{"birds/x.png", "cats/z.png", "dogs/a.PNG", "dogs/b.png", "dogs/sub/c.png"});
  CHECK(r.dataset.cardinality() == 3);
  const auto batches = drain(r.dataset);
  REQUIRE(batches.size() == 3);
  CHECK(batches[0][0].shape() == K::Shape{2, 6, 5, 3});
  CHECK(batches[0][0].dtype() == K::DType::float32);
  CHECK(batches[2][0].shape() == K::Shape{1, 6, 5, 3});
  CHECK(batches[0][1].dtype() == K::DType::int32);
  CHECK(batches[0][1].to_vector() == std::vector<float>{0, 1});
  CHECK(batches[1][1].to_vector() == std::vector<float>{2, 2});
  // Each image is its file decoded and resized.
  const K::Tensor first = data::resize_image(data::decode_png(data::read_file(r.file_paths[0])), {6, 5});
  const auto v = batches[0][0].to_vector();
  CHECK(std::vector<float>(v.begin(), v.begin() + 90) == first.to_vector());

  auto cat = data::image_dataset_from_directory(dir.path.string(), {.label_mode = "categorical",
                                                                    .class_names = {"dogs", "cats"},
                                                                    .color_mode = "grayscale",
                                                                    .batch_size = std::nullopt,
                                                                    .image_size = {4, 4},
                                                                    .shuffle = false});
  CHECK(cat.class_names == std::vector<std::string>{"dogs", "cats"});
  const auto singles = drain(cat.dataset);
  REQUIRE(singles.size() == 4);
  CHECK(singles[0][0].shape() == K::Shape{4, 4, 1});
  CHECK(singles[0][1].to_vector() == std::vector<float>{1, 0});
  CHECK(singles[3][1].to_vector() == std::vector<float>{0, 1});

  // pad_to_aspect_ratio: the image resized into its window of the pad box, zeros around it.
  auto padded = data::image_dataset_from_directory(
      dir.path.string(),
      {.batch_size = std::nullopt, .image_size = {8, 8}, .shuffle = false, .pad_to_aspect_ratio = true});
  const K::Tensor decoded = data::decode_png(data::read_file(padded.file_paths[0]));
  const auto [top, left, rh, rw] = data::aspect_ratio_pad_box(decoded.dim(0), decoded.dim(1), {8, 8});
  const auto inner = data::resize_image(decoded, {rh, rw}).to_vector();
  const auto pad_image = drain(padded.dataset).at(0)[0].to_vector();
  for (std::int64_t y = 0; y < 8; ++y)
    for (std::int64_t x = 0; x < 8; ++x) {
      const bool inside = y >= top && y < top + rh && x >= left && x < left + rw;
      CHECK(pad_image[static_cast<std::size_t>((y * 8 + x) * 3)] ==
            (inside ? inner[static_cast<std::size_t>(((y - top) * rw + x - left) * 3)] : 0.f));
    }

  auto unlabelled = data::image_dataset_from_directory(dir.path.string(), {.labels = std::nullopt, .shuffle = false});
  CHECK(unlabelled.class_names.empty());
  CHECK(drain(unlabelled.dataset).at(0).size() == 1);
  // Given labels: one per file under the folder, hidden sub-folders included (only class folders
  // are skipped when hidden), in listing order.
  auto given = data::image_dataset_from_directory(
      dir.path.string(),
      {.labels = std::vector<std::int64_t>{1, 0, 1, 1, 0, 0}, .label_mode = "binary", .shuffle = false});
  CHECK(given.class_names == std::vector<std::string>{"0", "1"});
  CHECK(relative(dir, given.file_paths).front() == ".hidden/h.png");
  const auto binary = drain(given.dataset).at(0)[1];
  CHECK(binary.shape() == K::Shape{6, 1});
  CHECK(binary.to_vector() == std::vector<float>{1, 0, 1, 1, 0, 0});
}

TEST_CASE("image_dataset_from_directory: validation_split gives disjoint subsets covering every file, per seed") {
  TempDir dir;
  std::vector<std::string> files;
  for (int i = 0; i < 10; ++i) files.push_back((i % 2 ? "a/" : "b/") + std::to_string(i) + ".png");
  make_image_tree(dir, files);
  const data::ImageDatasetOptions o{
      .batch_size = 4, .image_size = {3, 3}, .seed = 42, .validation_split = 0.3, .subset = "both"};
  const auto both = data::image_dataset_from_directory(dir.path.string(), o);
  CHECK(both.file_paths.size() == 7);
  CHECK(both.validation_file_paths.size() == 3);  // int(0.3 * 10), as Keras
  std::set<std::string> all(both.file_paths.begin(), both.file_paths.end());
  all.insert(both.validation_file_paths.begin(), both.validation_file_paths.end());
  CHECK(all.size() == 10);
  auto training = o;
  training.subset = "training";
  auto validation = o;
  validation.subset = "validation";
  CHECK(data::image_dataset_from_directory(dir.path.string(), training).file_paths == both.file_paths);
  CHECK(data::image_dataset_from_directory(dir.path.string(), validation).file_paths == both.validation_file_paths);
  std::int64_t seen = 0;
  for (const auto& b : drain(both.dataset)) seen += b[0].dim(0);
  for (const auto& b : drain(both.validation_dataset)) seen += b[0].dim(0);
  CHECK(seen == 10);
  auto other_seed = o;
  other_seed.seed = 43;
  CHECK(data::image_dataset_from_directory(dir.path.string(), other_seed).file_paths != both.file_paths);
}

TEST_CASE("image_dataset_from_directory: bad arguments are ValueErrors, bad folders and files IOErrors") {
  TempDir dir;
  make_image_tree(dir, {"a/1.png", "b/2.png", "c/3.png"});
  const std::string d = dir.path.string();
  const auto value_error = [&](data::ImageDatasetOptions o) {
    return error_of<K::ValueError>([&] { data::image_dataset_from_directory(d, o); });
  };
  CHECK(contains(value_error({.label_mode = "binary"}), "exactly 2 classes"));
  CHECK(contains(value_error({.validation_split = 0.2, .subset = "training"}), "give a seed"));
  CHECK(contains(value_error({.validation_split = 0.2}), "subset and validation_split"));
  CHECK(contains(value_error({.seed = 1, .validation_split = 1.5, .subset = "both"}), "between 0 and 1"));
  CHECK(contains(value_error({.color_mode = "cmyk"}), "color_mode"));
  CHECK(contains(value_error({.interpolation = "area"}), "interpolation"));
  CHECK(contains(value_error({.crop_to_aspect_ratio = true, .pad_to_aspect_ratio = true}), "only one of"));
  CHECK(contains(value_error({.class_names = {"a", "zebra"}}), "zebra"));
  CHECK(
      contains(value_error({.labels = std::vector<std::int64_t>{0, 1}}), "2 labels were given for the 3 image files"));
  CHECK(contains(value_error({.labels = std::vector<std::int64_t>{0, 1, 5}, .label_mode = "categorical"}), "label 5"));
  CHECK(contains(error_of<K::IOError>([&] { data::image_dataset_from_directory(d + "/missing"); }), "does not exist"));
  TempDir empty;
  CHECK(contains(error_of<K::IOError>([&] { data::image_dataset_from_directory(empty.path.string()); }), "no images"));
  // A corrupt file fails when the iterator reaches it, naming the file.
  write_file(dir.file("b/2.png"), "\x89PNG\r\n\x1a\n garbage");
  const auto ds = data::image_dataset_from_directory(d, {.shuffle = false}).dataset;
  const std::string e = error_of<K::IOError>([&] { drain(ds); });
  CHECK(contains(e, "b/2.png"));
}
