// image_data: drives kerascpp's image decoding, resizing and directory indexing from
// tests/python/test_image_data.py.
//   image_data decode <file> <channels> <dct_method|default> <out>  decode_image; writes "h w c" to
//       stdout and the uint8 pixels to <out>
//   image_data resize <in.f32> <h> <w> <c> <out_h> <out_w> <interpolation> <out.f32>  resize_image
//   image_data index <dir> <inferred|none> <shuffle 0|1> <seed> <follow_links 0|1>  index_image_directory;
//       prints JSON {file_paths, labels, class_names}
//   image_data load <dir> <h> <w> <color_mode> <interpolation> <crop 0|1> <out.f32>  image_dataset_from_directory
//       with shuffle off, no labels, batch 1: every image, in order, as float32 to <out.f32>
// Errors go to stderr, exit status 1.
#include <kerascpp/kerascpp.hpp>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "tool_io.hpp"

namespace {

namespace K = kerascpp;
namespace data = kerascpp::data;

void write_bytes(const std::string& path, const void* p, std::size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
  if (!out) throw K::IOError("cannot write " + path);
}

int run(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "decode" && argc == 6) {
    const std::string dct = argv[4];
    const K::Tensor img = data::decode_image(
        data::read_file(argv[2]),
        {.channels = std::stoll(argv[3]), .dct_method = dct == "default" ? "" : dct, .source = argv[2]});
    std::cout << img.dim(0) << " " << img.dim(1) << " " << img.dim(2) << "\n";
    write_bytes(argv[5], img.raw(), img.nbytes());
    return 0;
  }
  if (cmd == "resize" && argc == 10) {
    const std::int64_t h = std::stoll(argv[3]), w = std::stoll(argv[4]), c = std::stoll(argv[5]);
    const K::Tensor in = K::Tensor::from_vector({h, w, c}, tool_io::read_f32(argv[2]));
    const K::Tensor out = data::resize_image(in, {std::stoll(argv[6]), std::stoll(argv[7])}, argv[8]);
    tool_io::write_f32(argv[9], out.to_vector());
    return 0;
  }
  if (cmd == "index" && argc == 7) {
    const std::string mode = argv[3];
    const auto labels = mode == "inferred" ? std::optional<data::ImageLabels>{"inferred"} : std::nullopt;
    const auto index = data::index_image_directory(argv[2], labels, {}, std::string(argv[4]) == "1",
                                                   std::stoull(argv[5]), std::string(argv[6]) == "1");
    std::cout << nlohmann::json{{"file_paths", index.file_paths},
                                {"labels", index.labels},
                                {"class_names", index.class_names}}
                     .dump()
              << "\n";
    return 0;
  }
  if (cmd == "load" && argc == 9) {
    const auto result =
        data::image_dataset_from_directory(argv[2], {.labels = std::nullopt,
                                                     .color_mode = argv[5],
                                                     .batch_size = 1,
                                                     .image_size = {std::stoll(argv[3]), std::stoll(argv[4])},
                                                     .shuffle = false,
                                                     .interpolation = argv[6],
                                                     .crop_to_aspect_ratio = std::string(argv[7]) == "1"});
    std::vector<float> all;
    auto it = result.dataset.make_iterator();
    for (K::Example e; it->next(e);) {
      const auto v = e.at(0).to_vector();
      all.insert(all.end(), v.begin(), v.end());
    }
    tool_io::write_f32(argv[8], all);
    return 0;
  }
  std::cerr << "usage: see the comment at the top of tests/tools/image_data.cpp\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
