// CIFAR-10/100 binary batches: fixed-length records, each a label byte (two for CIFAR-100) and a
// 3 x 32 x 32 CHW image, transposed here to the HWC layout Keras' Conv2D takes.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstring>
#include <memory>

#include "check.hpp"
#include "data/byte_stream.hpp"
#include "data/file_source.hpp"
#include "kerascpp/data/cifar.hpp"
#include "kerascpp/error.hpp"

namespace kerascpp::data {
namespace {

constexpr const char* kCifarBinaryOp = "CifarBinaryDataset";
constexpr std::int64_t kSide = 32, kPixels = kSide * kSide, kImageBytes = 3 * kPixels;

struct Layout {
  std::int64_t label_bytes;  // 1 (CIFAR-10) or 2 (CIFAR-100: coarse, fine)
  std::int64_t label_index;  // which of them is the label
  std::int64_t num_labels;   // labels are in [0, num_labels)
  std::int64_t record_bytes() const { return label_bytes + kImageBytes; }
};

Layout layout_of(const CifarOptions& o, const char* op) {
  KERASCPP_CHECK_VALUE(o.dtype == DType::uint8 || o.dtype == DType::float32,
                       "{}: dtype must be uint8 or float32, got {}", op, dtype_name(o.dtype));
  if (o.num_classes == 10) return {1, 0, 10};
  KERASCPP_CHECK_VALUE(o.num_classes == 100, "{}: num_classes must be 10 (CIFAR-10) or 100 (CIFAR-100), got {}", op,
                       o.num_classes);
  if (o.label_mode == "fine") return {2, 1, 100};
  if (o.label_mode == "coarse") return {2, 0, 20};
  throw ValueError(fmt::format("{}: label_mode must be \"fine\" or \"coarse\", got \"{}\"", op, o.label_mode));
}

// The number of records in `path`, or an IOError when its size is not a multiple of the record.
std::int64_t record_count(const std::string& path, const Layout& l, const char* op) {
  struct stat st{};
  KERASCPP_CHECK_IO(::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode), "{}: cannot read '{}': {}", op, path,
                    S_ISDIR(st.st_mode) ? "it is a folder" : std::strerror(errno));
  const std::int64_t size = st.st_size;
  KERASCPP_CHECK_IO(size != 0 && size % l.record_bytes() == 0,
                    "{}: '{}' has {} bytes, not a whole number of {}-byte records ({} label byte{} + 3072 "
                    "pixels); is it a CIFAR-{} binary file{}?",
                    op, path, size, l.record_bytes(), l.label_bytes, l.label_bytes == 1 ? "" : "s",
                    l.label_bytes == 1 ? 10 : 100,
                    size % (l.label_bytes == 1 ? 3074 : 3073) == 0 && size > 0
                        ? fmt::format(" (its size fits CIFAR-{}: set num_classes)", l.label_bytes == 1 ? 100 : 10)
                        : "");
  return size / l.record_bytes();
}

// One record's label (checked) and its CHW pixels written as HWC into `image`.
template <class T>
std::int32_t unpack_record(const unsigned char* rec, const Layout& l, T* image, const std::string& path,
                           std::int64_t index) {
  const int label = rec[l.label_index];
  KERASCPP_CHECK_IO(label < l.num_labels,
                    "CIFAR: '{}' record {} (byte offset {}): label {} is outside [0, {}); the file is "
                    "corrupt or not CIFAR-{}",
                    path, index, index * l.record_bytes(), label, l.num_labels, l.label_bytes == 1 ? 10 : 100);
  const unsigned char* px = rec + l.label_bytes;
  for (std::int64_t p = 0; p < kPixels; ++p)
    for (std::int64_t c = 0; c < 3; ++c) image[p * 3 + c] = static_cast<T>(px[c * kPixels + p]);
  return label;
}

Tensor unpack_image(const unsigned char* rec, const Layout& l, DType dtype, std::int32_t& label,
                    const std::string& path, std::int64_t index) {
  Tensor image({kSide, kSide, 3}, dtype, Device{});
  label = dtype == DType::uint8 ? unpack_record(rec, l, static_cast<std::uint8_t*>(image.raw()), path, index)
                                : unpack_record(rec, l, image.data<float>(), path, index);
  return image;
}

class CifarReader final : public detail::ElementReader {
 public:
  CifarReader(const std::string& path, Layout l, DType dtype)
      : path_(path),
        layout_(l),
        dtype_(dtype),
        count_(record_count(path, l, kCifarBinaryOp)),
        in_(detail::open_byte_stream(path, detail::Compression::none, kCifarBinaryOp)),
        record_(static_cast<std::size_t>(l.record_bytes())) {}
  bool next(Example& out) override {
    if (index_ == count_) return false;
    const std::size_t got = in_.read(reinterpret_cast<char*>(record_.data()), record_.size());
    if (got != record_.size())  // the file shrank after it was opened
      throw IOError(fmt::format("{}: '{}' ends inside record {} (byte offset {})", kCifarBinaryOp, path_, index_,
                                index_ * layout_.record_bytes() + static_cast<std::int64_t>(got)));
    std::int32_t label = 0;
    Tensor image = unpack_image(record_.data(), layout_, dtype_, label, path_, index_++);
    out = {std::move(image), Tensor::from_vector({}, std::vector<std::int32_t>{label})};
    return true;
  }

 private:
  std::string path_;
  Layout layout_;
  DType dtype_;
  std::int64_t count_, index_ = 0;
  detail::BufferedInput in_;
  std::vector<unsigned char> record_;
};

}  // namespace

Dataset CifarBinaryDataset(std::vector<std::string> filenames, CifarOptions options) {
  const Layout l = layout_of(options, kCifarBinaryOp);
  KERASCPP_CHECK_VALUE(!filenames.empty(), "{}: no files given", kCifarBinaryOp);
  const DType dtype = options.dtype;
  return detail::make_file_source(std::move(filenames), [l, dtype](const std::string& path) {
    return std::make_unique<CifarReader>(path, l, dtype);
  });
}

CifarArrays read_cifar_binary(const std::vector<std::string>& filenames, CifarOptions options) {
  constexpr const char* op = "read_cifar_binary";
  const Layout l = layout_of(options, op);
  KERASCPP_CHECK_VALUE(!filenames.empty(), "{}: no files given", op);
  std::int64_t total = 0;
  for (const std::string& f : filenames) total += record_count(f, l, op);
  CifarArrays a{Tensor({total, kSide, kSide, 3}, options.dtype, Device{}), Tensor({total}, DType::int32, Device{})};
  std::vector<unsigned char> record(static_cast<std::size_t>(l.record_bytes()));
  const std::size_t image_elems = static_cast<std::size_t>(kImageBytes);
  std::int64_t n = 0;
  for (const std::string& f : filenames) {
    detail::BufferedInput in(detail::open_byte_stream(f, detail::Compression::none, op));
    const std::int64_t count = record_count(f, l, op);
    for (std::int64_t i = 0; i < count; ++i, ++n) {
      KERASCPP_CHECK_IO(in.read(reinterpret_cast<char*>(record.data()), record.size()) == record.size(),
                        "{}: '{}' ends inside record {}", op, f, i);
      a.labels.data<std::int32_t>()[n] =
          options.dtype == DType::uint8
              ? unpack_record(record.data(), l, static_cast<std::uint8_t*>(a.images.raw()) + n * image_elems, f, i)
              : unpack_record(record.data(), l, a.images.data<float>() + n * image_elems, f, i);
    }
  }
  return a;
}

}  // namespace kerascpp::data
