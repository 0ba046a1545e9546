// image_dataset_from_directory: the folder is indexed up front (names only), then a Dataset of
// (file index, label) is shuffled, mapped to decoded and resized images, batched and prefetched,
// so images are read and decoded only as the iterator reaches them.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "check.hpp"
#include "data/image_resize.hpp"
#include "kerascpp/core/random.hpp"
#include "kerascpp/data/image_dataset.hpp"
#include "kerascpp/data/images.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::data {
namespace {

constexpr const char* kImageDatasetFromDirectoryOp = "image_dataset_from_directory";

struct LoadSpec {
  std::shared_ptr<const std::vector<std::string>> paths;
  std::array<std::int64_t, 2> size;
  std::int64_t channels;
  image_detail::Interpolation interpolation;
  bool crop_to_aspect_ratio;
  bool pad_to_aspect_ratio;
};

// Keras' load_image: read, decode to `channels`, optionally crop to the aspect ratio, resize.
Tensor load_image(const LoadSpec& spec, std::int64_t index) {
  const std::string& path = (*spec.paths)[static_cast<std::size_t>(index)];
  const Tensor decoded = decode_image(read_file(path), {.channels = spec.channels, .source = path});
  const std::int64_t h = decoded.dim(0), w = decoded.dim(1), c = spec.channels;
  const auto* pixels = static_cast<const std::uint8_t*>(decoded.raw());
  if (spec.pad_to_aspect_ratio) {
    const auto [top, left, rh, rw] = aspect_ratio_pad_box(h, w, spec.size);
    Tensor resized({rh, rw, c}, DType::float32, Device{});
    image_detail::resize_window(pixels, w, c, {0, 0, h, w}, rh, rw, spec.interpolation, resized.data<float>());
    Tensor out = Tensor::zeros({spec.size[0], spec.size[1], c}, DType::float32, Device{});
    for (std::int64_t y = 0; y < rh && top + y < spec.size[0]; ++y)
      std::copy_n(resized.data<float>() + y * rw * c, std::min(rw, spec.size[1] - left) * c,
                  out.data<float>() + ((top + y) * spec.size[1] + left) * c);
    return out;
  }
  const std::array<std::int64_t, 4> box =
      spec.crop_to_aspect_ratio ? aspect_ratio_crop_box(h, w, spec.size) : std::array<std::int64_t, 4>{0, 0, h, w};
  Tensor out({spec.size[0], spec.size[1], c}, DType::float32, Device{});
  image_detail::resize_window(pixels, w, c, box, spec.size[0], spec.size[1], spec.interpolation, out.data<float>());
  return out;
}

// Keras' labels_to_dataset: int32 ids, float32 one-hot rows, or float32 (1,) for binary.
Tensor label_tensor(const std::vector<std::int64_t>& labels, const std::string& mode, std::int64_t num_classes) {
  const auto n = static_cast<std::int64_t>(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i)
    KERASCPP_CHECK_VALUE(labels[i] >= 0 && (mode == "int" || labels[i] < num_classes),
                         "{}: label {} (of file {} in listing order) is outside [0, {}) for label_mode \"{}\"",
                         kImageDatasetFromDirectoryOp, labels[i], i, num_classes, mode);
  if (mode == "int") {
    Tensor t({n}, DType::int32, Device{});
    for (std::int64_t i = 0; i < n; ++i)
      t.data<std::int32_t>()[i] = static_cast<std::int32_t>(labels[static_cast<std::size_t>(i)]);
    return t;
  }
  const std::int64_t width = mode == "binary" ? 1 : num_classes;
  Tensor t = Tensor::zeros({n, width}, DType::float32, Device{});
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t l = labels[static_cast<std::size_t>(i)];
    if (mode == "binary") t.data<float>()[i] = static_cast<float>(l);
    else t.data<float>()[i * width + l] = 1.f;
  }
  return t;
}

Dataset make_dataset(std::vector<std::string> paths, const std::vector<std::int64_t>& labels,
                     const ImageDatasetOptions& o, std::int64_t channels, std::int64_t num_classes, bool shuffle,
                     std::uint64_t seed) {
  const auto n = static_cast<std::int64_t>(paths.size());
  Tensor indices({n}, DType::int64, Device{});
  for (std::int64_t i = 0; i < n; ++i) indices.data<std::int64_t>()[i] = i;
  const bool with_labels = o.label_mode.has_value();
  Dataset ds = with_labels ? Dataset::from_tensor_slices(indices, label_tensor(labels, *o.label_mode, num_classes))
                           : Dataset::from_tensor_slices(std::vector<Tensor>{indices});
  if (shuffle) ds = ds.shuffle(o.batch_size ? *o.batch_size * 8 : 1024, seed);
  LoadSpec spec{std::make_shared<const std::vector<std::string>>(std::move(paths)),
                o.image_size,
                channels,
                image_detail::parse_interpolation(o.interpolation, kImageDatasetFromDirectoryOp),
                o.crop_to_aspect_ratio,
                o.pad_to_aspect_ratio};
  ds = ds.map([spec](const Example& e) {
    Example out{load_image(spec, e[0].data<std::int64_t>()[0])};
    if (e.size() > 1) out.push_back(e[1]);
    return out;
  });
  if (o.batch_size) ds = ds.batch(*o.batch_size);
  return ds.prefetch(Dataset::kAutotune);
}

}  // namespace

ImageDirectoryDataset image_dataset_from_directory(const std::string& directory, ImageDatasetOptions o) {
  KERASCPP_CHECK_VALUE(
      !(o.labels && std::holds_alternative<std::vector<std::int64_t>>(*o.labels) && !o.class_names.empty()),
      "{}: class_names can only be given with labels \"inferred\"", kImageDatasetFromDirectoryOp);
  KERASCPP_CHECK_VALUE(
      !(o.label_mode && *o.label_mode != "int" && *o.label_mode != "categorical" && *o.label_mode != "binary"),
      "{}: label_mode must be \"int\", \"categorical\", \"binary\" or std::nullopt, got \"{}\"",
      kImageDatasetFromDirectoryOp, *o.label_mode);
  if (!o.labels || !o.label_mode) o.labels.reset(), o.label_mode.reset();  // either None makes both None, as Keras
  const std::int64_t channels = o.color_mode == "rgb"         ? 3
                                : o.color_mode == "rgba"      ? 4
                                : o.color_mode == "grayscale" ? 1
                                                              : 0;
  KERASCPP_CHECK_VALUE(channels != 0, "{}: color_mode must be \"rgb\", \"rgba\" or \"grayscale\", got \"{}\"",
                       kImageDatasetFromDirectoryOp, o.color_mode);
  KERASCPP_CHECK_VALUE(o.image_size[0] > 0 && o.image_size[1] > 0,
                       "{}: image_size must be two positive integers, got ({}, {})", kImageDatasetFromDirectoryOp,
                       o.image_size[0], o.image_size[1]);
  KERASCPP_CHECK_VALUE(!o.batch_size || *o.batch_size > 0, "{}: batch_size must be positive or std::nullopt, got {}",
                       kImageDatasetFromDirectoryOp, *o.batch_size);
  image_detail::parse_interpolation(o.interpolation, kImageDatasetFromDirectoryOp);
  KERASCPP_CHECK_VALUE(!o.crop_to_aspect_ratio || !o.pad_to_aspect_ratio,
                       "{}: set only one of crop_to_aspect_ratio and pad_to_aspect_ratio",
                       kImageDatasetFromDirectoryOp);
  // Keras' check_validation_split_arg.
  const bool split = o.validation_split != 0.0;
  KERASCPP_CHECK_VALUE(!split || (o.validation_split > 0.0 && o.validation_split < 1.0),
                       "{}: validation_split must be between 0 and 1, got {}", kImageDatasetFromDirectoryOp,
                       o.validation_split);
  KERASCPP_CHECK_VALUE(split == !o.subset.empty(), "{}: subset and validation_split go together: set both or neither",
                       kImageDatasetFromDirectoryOp);
  KERASCPP_CHECK_VALUE(!(!o.subset.empty() && o.subset != "training" && o.subset != "validation" && o.subset != "both"),
                       "{}: subset must be \"training\", \"validation\" or \"both\", got \"{}\"",
                       kImageDatasetFromDirectoryOp, o.subset);
  KERASCPP_CHECK_VALUE(!split || !o.shuffle || o.seed,
                       "{}: with validation_split and shuffle, give a seed, so that the training and "
                       "validation subsets do not overlap",
                       kImageDatasetFromDirectoryOp);
  const std::uint64_t seed = o.seed ? *o.seed : next_random_seed() % 1000000;

  ImageDirectoryIndex index =
      index_image_directory(directory, o.labels, o.class_names, o.shuffle, seed, o.follow_links);
  KERASCPP_CHECK_VALUE(!o.label_mode || *o.label_mode != "binary" || index.class_names.size() == 2,
                       "{}: label_mode \"binary\" needs exactly 2 classes, '{}' has {}", kImageDatasetFromDirectoryOp,
                       directory, index.class_names.size());
  const auto num_classes = static_cast<std::int64_t>(index.class_names.size());

  // Keras' get_training_or_validation_split: the last int(split * n) files are the validation set.
  const auto n = static_cast<std::int64_t>(index.file_paths.size());
  const auto num_val = static_cast<std::int64_t>(o.validation_split * static_cast<double>(n));
  const auto part = [&](bool validation) {
    const std::int64_t begin = !split ? 0 : validation ? n - num_val : 0, end = !split || validation ? n : n - num_val;
    std::vector<std::string> p(index.file_paths.begin() + begin, index.file_paths.begin() + end);
    std::vector<std::int64_t> l;
    if (!index.labels.empty()) l.assign(index.labels.begin() + begin, index.labels.begin() + end);
    KERASCPP_CHECK_IO(!p.empty(),
                      "{}: no {}images found in '{}' (allowed formats: .bmp, .gif, .jpeg, .jpg, .png; "
                      "class folders are its sub-folders)",
                      kImageDatasetFromDirectoryOp,
                      !split       ? ""
                      : validation ? "validation "
                                   : "training ",
                      directory);
    return std::make_pair(std::move(p), std::move(l));
  };
  ImageDirectoryDataset result;
  result.class_names = o.labels ? index.class_names : std::vector<std::string>{};
  auto [paths, labels] = part(o.subset == "validation");
  result.file_paths = paths;
  result.dataset = make_dataset(std::move(paths), labels, o, channels, num_classes, o.shuffle, seed);
  if (o.subset == "both") {
    auto [val_paths, val_labels] = part(true);
    result.validation_file_paths = val_paths;
    result.validation_dataset = make_dataset(std::move(val_paths), val_labels, o, channels, num_classes, false, seed);
  }
  return result;
}

}  // namespace kerascpp::data
