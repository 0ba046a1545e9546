// parse_single_example / parse_example: tf.train.Example records → tensors, per a feature spec.
#include "kerascpp/data/tf_example.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "check.hpp"
#include "example.pb.h"
#include "kerascpp/data/bytes.hpp"

namespace kerascpp::data {
namespace {

namespace pb = kerascpp::tfexample;
using Kind = pb::Feature::KindCase;

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kBytesList:
      return "bytes_list";
    case Kind::kFloatList:
      return "float_list";
    case Kind::kInt64List:
      return "int64_list";
    case Kind::KIND_NOT_SET:
      break;
  }
  return "no list";
}

Kind kind_for(DType d) {
  return d == DType::float32 ? Kind::kFloatList : d == DType::int64 ? Kind::kInt64List : Kind::kBytesList;
}

// Where an error happened: "parse_single_example: feature 'x'" or "parse_example: example 3, feature 'x'".
struct Where {
  const char* op;
  std::int64_t example = -1;
  std::string operator()(const std::string& feature) const {
    return example < 0 ? fmt::format("{}: feature '{}'", op, feature)
                       : fmt::format("{}: example {}, feature '{}'", op, example, feature);
  }
};

void check_dtype(const std::string& name, DType dtype, bool var_len) {
  if (dtype == DType::float32 || dtype == DType::int64 || (dtype == DType::uint8 && !var_len)) return;
  KERASCPP_CHECK_VALUE(dtype != DType::uint8,
                       "feature spec '{}': a VarLenFeature of bytes would be several strings, which a kerascpp "
                       "tensor cannot hold; use FixedLenFeature({{}}, DType::uint8) for one string",
                       name);
  throw ValueError(
      fmt::format("feature spec '{}': dtype {} is not one a tf.train.Example holds; use float32, int64 "
                  "or uint8 (bytes)",
                  name, dtype_name(dtype)));
}

void check_spec(const std::string& name, const FixedLenFeature& spec) {
  check_dtype(name, spec.dtype, false);
  KERASCPP_CHECK_VALUE(spec.dtype != DType::uint8 || shape_numel(spec.shape) == 1,
                       "feature spec '{}': a bytes FixedLenFeature holds one string (shape () or (1)), not "
                       "shape {}; kerascpp has no tensor of several strings",
                       name, shape_str(spec.shape));
  if (!spec.default_value.defined()) return;
  const Tensor& d = spec.default_value;
  const bool dtype_ok = d.dtype() == spec.dtype || (spec.dtype == DType::int64 && d.dtype() == DType::int32);
  KERASCPP_CHECK_VALUE(dtype_ok, "feature spec '{}': default_value is {} but the feature is {}", name,
                       dtype_name(d.dtype()), dtype_name(spec.dtype));
  KERASCPP_CHECK_VALUE(spec.dtype == DType::uint8 || d.numel() == 1 || d.numel() == shape_numel(spec.shape),
                       "feature spec '{}': default_value has {} values; shape {} needs {} (or give one)", name,
                       d.numel(), shape_str(spec.shape), shape_numel(spec.shape));
}

Tensor default_of(const FixedLenFeature& spec) {
  const Tensor d = spec.default_value.to(Device{});
  if (spec.dtype == DType::uint8) return d.clone().reshape({d.numel()});
  Tensor out(spec.shape, spec.dtype, Device{});
  const std::int64_t n = out.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const std::int64_t j = d.numel() == 1 ? 0 : i;
    if (spec.dtype == DType::float32) out.data<float>()[i] = d.data<float>()[j];
    else
      out.data<std::int64_t>()[i] =
          d.dtype() == DType::int32 ? std::int64_t{d.data<std::int32_t>()[j]} : d.data<std::int64_t>()[j];
  }
  return out;
}

// The values of a float or int64 list as a tensor of `shape`.
Tensor numeric(const pb::Feature& f, DType dtype, Shape shape) {
  Tensor t(std::move(shape), dtype, Device{});
  if (dtype == DType::float32) {
    if (t.numel()) std::memcpy(t.raw(), f.float_list().value().data(), t.nbytes());
  } else if (t.numel()) {
    std::memcpy(t.raw(), f.int64_list().value().data(), t.nbytes());
  }
  return t;
}

std::int64_t value_count(const pb::Feature& f) {
  switch (f.kind_case()) {
    case Kind::kBytesList:
      return f.bytes_list().value_size();
    case Kind::kFloatList:
      return f.float_list().value_size();
    case Kind::kInt64List:
      return f.int64_list().value_size();
    case Kind::KIND_NOT_SET:
      break;
  }
  return 0;
}

void check_kind(const pb::Feature& f, DType dtype, const std::string& name, const Where& where) {
  KERASCPP_CHECK_VALUE(f.kind_case() == kind_for(dtype),
                       "{} holds a {} but its spec asks for {} (a {}); fix the spec's dtype", where(name),
                       kind_name(f.kind_case()), dtype_name(dtype), kind_name(kind_for(dtype)));
}

Tensor fixed_len(const std::string& name, const FixedLenFeature& spec, const pb::Feature* f, const Where& where) {
  // A feature without any list counts as missing, as in TensorFlow's parser.
  if (!f || f->kind_case() == Kind::KIND_NOT_SET) {
    KERASCPP_CHECK_VALUE(spec.default_value.defined(),
                         "{} is missing and its FixedLenFeature has no default_value; give it a default or "
                         "fix the data",
                         where(name));
    return default_of(spec);
  }
  check_kind(*f, spec.dtype, name, where);
  const std::int64_t expected = shape_numel(spec.shape);
  KERASCPP_CHECK_VALUE(value_count(*f) == expected, "{} holds {} values but its FixedLenFeature of shape {} needs {}",
                       where(name), value_count(*f), shape_str(spec.shape), expected);
  if (spec.dtype == DType::uint8) return bytes_tensor(f->bytes_list().value(0));
  return numeric(*f, spec.dtype, spec.shape);
}

Tensor var_len(const std::string& name, const VarLenFeature& spec, const pb::Feature* f, const Where& where) {
  if (!f || f->kind_case() == Kind::KIND_NOT_SET) return Tensor({0}, spec.dtype, Device{});
  check_kind(*f, spec.dtype, name, where);
  return numeric(*f, spec.dtype, {value_count(*f)});
}

ParsedFeatures parse_one(std::string_view bytes, const FeatureSpecs& features, const Where& where) {
  pb::Example example;
  const bool parsed = bytes.size() <= INT_MAX && example.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
  KERASCPP_CHECK_IO(parsed,
                    "{}{}: the {} bytes are not a serialized tf.train.Example (protobuf parsing failed); is "
                    "the record an Example, and was its file read with the right compression_type?",
                    where.op, where.example < 0 ? "" : fmt::format(": example {}", where.example), bytes.size());
  const auto& present = example.features().feature();
  ParsedFeatures out;
  for (const auto& [name, spec] : features) {
    const auto it = present.find(name);
    const pb::Feature* f = it == present.end() ? nullptr : &it->second;
    out[name] = std::holds_alternative<FixedLenFeature>(spec)
                    ? fixed_len(name, std::get<FixedLenFeature>(spec), f, where)
                    : var_len(name, std::get<VarLenFeature>(spec), f, where);
  }
  return out;
}

void check_specs(const FeatureSpecs& features) {
  for (const auto& [name, spec] : features) {
    if (const auto* fixed = std::get_if<FixedLenFeature>(&spec)) check_spec(name, *fixed);
    else check_dtype(name, std::get<VarLenFeature>(spec).dtype, true);
  }
}

// Stacks one feature's per-example tensors along a new batch axis, padding 1-D VarLen values
// with zeros to the longest.
Tensor stack(const std::string& name, const std::vector<Tensor>& parts, bool var_len, DType dtype) {
  Shape element = parts.front().shape();
  if (var_len) {
    std::int64_t longest = 0;
    for (const Tensor& p : parts) longest = std::max(longest, p.numel());
    element = {longest};
  } else {
    for (std::size_t i = 1; i < parts.size(); ++i)
      if (parts[i].shape() != element)  // only bytes can differ: strings of several lengths
        throw ShapeError(
            fmt::format("parse_example: feature '{}' is {} bytes long in example 0 but {} in example {}; "
                        "a batch of strings must have one length (parse_single_example each instead)",
                        name, element[0], parts[i].dim(0), i));
  }
  Shape shape{static_cast<std::int64_t>(parts.size())};
  shape.insert(shape.end(), element.begin(), element.end());
  Tensor out = Tensor::zeros(std::move(shape), dtype, Device{});
  const std::size_t row = static_cast<std::size_t>(shape_numel(element)) * dtype_size(dtype);
  auto* dst = static_cast<char*>(out.raw());
  for (const Tensor& p : parts) {
    if (p.nbytes()) std::memcpy(dst, p.raw(), p.nbytes());
    dst += row;
  }
  return out;
}

}  // namespace

ParsedFeatures parse_single_example(std::string_view serialized, const FeatureSpecs& features) {
  check_specs(features);
  return parse_one(serialized, features, Where{"parse_single_example"});
}

ParsedFeatures parse_single_example(const Tensor& serialized, const FeatureSpecs& features) {
  return parse_single_example(std::string_view(tensor_bytes(serialized)), features);
}

ParsedFeatures parse_example(const std::vector<Tensor>& serialized, const FeatureSpecs& features) {
  check_specs(features);
  KERASCPP_CHECK_VALUE(!serialized.empty(), "parse_example: the batch is empty; pass at least one serialized Example");
  std::vector<ParsedFeatures> examples;
  examples.reserve(serialized.size());
  for (std::size_t i = 0; i < serialized.size(); ++i)
    examples.push_back(
        parse_one(tensor_bytes(serialized[i]), features, Where{"parse_example", static_cast<std::int64_t>(i)}));
  ParsedFeatures out;
  for (const auto& [name, spec] : features) {
    std::vector<Tensor> parts;
    parts.reserve(examples.size());
    for (auto& e : examples) parts.push_back(std::move(e[name]));
    const bool var_len = std::holds_alternative<VarLenFeature>(spec);
    const DType dtype = var_len ? std::get<VarLenFeature>(spec).dtype : std::get<FixedLenFeature>(spec).dtype;
    out[name] = stack(name, parts, var_len, dtype);
  }
  return out;
}

}  // namespace kerascpp::data
