// serialize_example: tensors → one serialized tf.train.Example.
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "example.pb.h"
#include "kerascpp/data/bytes.hpp"
#include "kerascpp/data/tf_example.hpp"

namespace kerascpp::data {

std::string serialize_example(const ParsedFeatures& features) {
  kerascpp::tfexample::Example example;
  auto& map = *example.mutable_features()->mutable_feature();
  for (const auto& [name, tensor] : features) {
    const Tensor t = tensor.to(Device{});
    kerascpp::tfexample::Feature& f = map[name];
    const auto n = static_cast<std::size_t>(t.numel());
    switch (t.dtype()) {
      case DType::float32: {
        const float* v = t.data<float>();
        f.mutable_float_list()->mutable_value()->Add(v, v + n);
        break;
      }
      case DType::int64: {
        const std::int64_t* v = t.data<std::int64_t>();
        f.mutable_int64_list()->mutable_value()->Add(v, v + n);
        break;
      }
      case DType::int32: {
        auto* values = f.mutable_int64_list()->mutable_value();
        for (std::size_t i = 0; i < n; ++i) values->Add(t.data<std::int32_t>()[i]);
        break;
      }
      case DType::uint8:
        f.mutable_bytes_list()->add_value(tensor_bytes(t));
        break;
      default:
        throw ValueError(
            fmt::format("serialize_example: feature '{}' is {}; a tf.train.Example holds float32, int32 or "
                        "int64 (as int64) and uint8 (bytes): cast it first",
                        name, dtype_name(t.dtype())));
    }
  }
  // Deterministic: map entries in key order, so the same features always give the same bytes.
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    example.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace kerascpp::data
