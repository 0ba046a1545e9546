// data_sources: drives kerascpp's file sources from tests/python/test_data_sources.py.
//   data_sources write_records <path> <compression> <json file>  raw records (a JSON list of hex) through
//   TFRecordWriter data_sources read_records <compression> <path>...          TFRecordDataset; prints a JSON list of
//   hex records data_sources write_examples <path> <compression> <json file> serialize_example per entry,
//   TFRecordWriter data_sources read_examples <compression> <spec json> <path>...
//       TFRecordDataset + parse_single_example; prints a JSON list of {feature: {dtype, shape, values}}
//   data_sources read_csv <ncols> <path>                       CsvDataset of bytes columns; JSON list of rows (hex)
// Compression is "none", "GZIP" or "ZLIB". Bytes travel as hex, inputs in files (an argument holds
// at most 128 KiB). Errors go to stderr, exit status 1.
#include <kerascpp/kerascpp.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

namespace K = kerascpp;
namespace data = kerascpp::data;
using Json = nlohmann::json;

std::string compression(const std::string& arg) { return arg == "none" ? "" : arg; }

std::string to_hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

std::string from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

K::DType dtype_of(const std::string& name) {
  if (name == "float32") return K::DType::float32;
  if (name == "int64") return K::DType::int64;
  if (name == "bytes") return K::DType::uint8;
  throw K::ValueError("unknown dtype " + name);
}

// {"kind": "fixed"|"var", "dtype": ..., "shape": [...], "default": [...]} per feature.
data::FeatureSpecs specs_of(const Json& j) {
  data::FeatureSpecs specs;
  for (const auto& [name, s] : j.items()) {
    const K::DType dtype = dtype_of(s.at("dtype"));
    if (s.at("kind") == "var") {
      specs[name] = data::VarLenFeature{dtype};
      continue;
    }
    data::FixedLenFeature f{s.at("shape").get<K::Shape>(), dtype};
    if (s.contains("default")) {
      if (dtype == K::DType::float32)
        f.default_value = K::Tensor::from_vector({static_cast<std::int64_t>(s["default"].size())},
                                                 s["default"].get<std::vector<float>>());
      else if (dtype == K::DType::int64)
        f.default_value = K::Tensor::from_vector({static_cast<std::int64_t>(s["default"].size())},
                                                 s["default"].get<std::vector<std::int64_t>>());
      else f.default_value = data::bytes_tensor(from_hex(s["default"].get<std::string>()));
    }
    specs[name] = f;
  }
  return specs;
}

Json describe(const K::Tensor& t) {
  Json values = Json::array();
  if (t.dtype() == K::DType::uint8) {
    values = to_hex(data::tensor_bytes(t));
  } else if (t.dtype() == K::DType::int64) {
    for (std::int64_t i = 0; i < t.numel(); ++i) values.push_back(t.data<std::int64_t>()[i]);
  } else {
    for (std::int64_t i = 0; i < t.numel(); ++i) values.push_back(t.data<float>()[i]);
  }
  return {{"dtype", K::dtype_name(t.dtype())}, {"shape", t.shape()}, {"values", values}};
}

// {"name": {"dtype": "float32"|"int64"|"bytes", "shape": [...], "values": [...] or hex}} per example.
data::ParsedFeatures features_of(const Json& j) {
  data::ParsedFeatures out;
  for (const auto& [name, f] : j.items()) {
    const std::string dtype = f.at("dtype");
    if (dtype == "bytes") {
      out[name] = data::bytes_tensor(from_hex(f.at("values").get<std::string>()));
    } else if (dtype == "int64") {
      out[name] =
          K::Tensor::from_vector(f.at("shape").get<K::Shape>(), f.at("values").get<std::vector<std::int64_t>>());
    } else {
      out[name] = K::Tensor::from_vector(f.at("shape").get<K::Shape>(), f.at("values").get<std::vector<float>>());
    }
  }
  return out;
}

Json read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw K::IOError("cannot read " + path);
  return Json::parse(in);
}

std::vector<std::string> rest(int argc, char** argv, int from) { return {argv + from, argv + argc}; }

int run(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "write_records" && argc == 5) {
    data::TFRecordWriter writer(argv[2], {compression(argv[3])});
    for (const auto& hex : read_json(argv[4])) writer.write(from_hex(hex.get<std::string>()));
    writer.close();
    return 0;
  }
  if (cmd == "read_records" && argc >= 4) {
    Json out = Json::array();
    auto it = data::TFRecordDataset(rest(argc, argv, 3), {compression(argv[2])}).make_iterator();
    for (K::Example e; it->next(e);) out.push_back(to_hex(data::tensor_bytes(e[0])));
    std::cout << out.dump() << "\n";
    return 0;
  }
  if (cmd == "write_examples" && argc == 5) {
    data::TFRecordWriter writer(argv[2], {compression(argv[3])});
    for (const auto& example : read_json(argv[4])) writer.write(data::serialize_example(features_of(example)));
    writer.close();
    return 0;
  }
  if (cmd == "read_examples" && argc >= 5) {
    const data::FeatureSpecs specs = specs_of(Json::parse(argv[3]));
    Json out = Json::array();
    auto it = data::TFRecordDataset(rest(argc, argv, 4), {compression(argv[2])}).make_iterator();
    for (K::Example e; it->next(e);) {
      Json row = Json::object();
      for (const auto& [name, t] : data::parse_single_example(e[0], specs)) row[name] = describe(t);
      out.push_back(row);
    }
    std::cout << out.dump() << "\n";
    return 0;
  }
  if (cmd == "read_csv" && argc == 4) {
    std::vector<data::CsvColumn> columns(static_cast<std::size_t>(std::stoi(argv[2])), data::CsvColumn(""));
    Json out = Json::array();
    auto it = data::CsvDataset({argv[3]}, columns).make_iterator();
    for (K::Example e; it->next(e);) {
      Json row = Json::array();
      for (const auto& t : e) row.push_back(to_hex(data::tensor_bytes(t)));
      out.push_back(row);
    }
    std::cout << out.dump() << "\n";
    return 0;
  }
  std::cerr << "usage: see the comment at the top of tests/tools/data_sources.cpp\n";
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
