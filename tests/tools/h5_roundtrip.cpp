// h5_roundtrip: drives src/io/h5_weights from tests/python/test_h5_layout.py.
//   h5_roundtrip write <path> [--no-optimizer] [--no-extra]
//       writes the weights of a Keras Sequential([Input((3,)), Dense(4), Dense(2)]) compiled with
//       Adam, with the known values of mlp_value() (the Python test recomputes them).
//   h5_roundtrip read <path>
//       reads any .weights.h5 file and prints layers, optimizer and extra tensors as JSON.
// Errors go to stderr with exit status 1.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "io/h5_weights.hpp"
#include "kerascpp/error.hpp"

namespace {

using kerascpp::DType;
using kerascpp::Shape;
using kerascpp::Tensor;

// Value j of variable k: multiples of 1/8 with alternating sign, exact in float32.
float mlp_value(int k, std::int64_t j) {
  float magnitude = static_cast<float>(k + 1) + 0.125f * static_cast<float>(j);
  return j % 2 ? -magnitude : magnitude;
}

Tensor known_tensor(Shape shape, int k, float scale, bool absolute) {
  std::vector<float> values(static_cast<std::size_t>(kerascpp::shape_numel(shape)));
  for (std::size_t j = 0; j < values.size(); ++j) {
    float v = mlp_value(k, static_cast<std::int64_t>(j));
    values[j] = scale * (absolute ? std::fabs(v) : v);
  }
  return Tensor::from_vector(std::move(shape), values);
}

int write_mlp(const std::string& path, bool with_optimizer, bool with_extra) {
  namespace io = kerascpp::io;
  const std::vector<Shape> shapes = {{3, 4}, {4}, {4, 2}, {2}};  // kernel, bias per Dense
  std::vector<Tensor> vars;
  for (int k = 0; k < 4; ++k) vars.push_back(known_tensor(shapes[k], k, 1.0f, false));

  io::WeightsFile file;
  file.model_name = "sequential";
  file.layers = {{"dense", {vars[0], vars[1]}}, {"dense_1", {vars[2], vars[3]}}};
  if (with_optimizer) {
    // Adam: iteration, learning_rate, then (momentum, velocity) per trainable variable.
    file.has_optimizer = true;
    file.optimizer_name = "adam";
    file.optimizer_vars = {Tensor::from_vector(Shape{}, std::vector<std::int64_t>{7}),
                           Tensor::from_vector(Shape{}, std::vector<float>{0.001f})};
    for (int k = 0; k < 4; ++k) {
      file.optimizer_vars.push_back(known_tensor(shapes[k], k, 0.5f, false));
      file.optimizer_vars.push_back(known_tensor(shapes[k], k, 0.25f, true));
    }
  }
  if (with_extra) {
    file.extra = {{"epoch", Tensor::from_vector(Shape{}, std::vector<std::int64_t>{3})},
                  {"step", Tensor::from_vector(Shape{}, std::vector<std::int64_t>{42})},
                  {"rng", Tensor::from_vector(Shape{4}, std::vector<std::uint8_t>{1, 2, 254, 255})},
                  {"data_order", Tensor::from_vector(Shape{5}, std::vector<std::int64_t>{4, 0, 3, 1, 2})},
                  {"loss_scale", Tensor::from_vector(Shape{}, std::vector<float>{0.5f})}};
  }
  io::write_weights_file(path, file);
  return 0;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Python's json module reads NaN and Infinity, which is all the test needs.
std::string json_float(float v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

std::string json_tensor(const Tensor& t) {
  std::string out = "{\"dtype\": " + json_string(kerascpp::dtype_name(t.dtype())) + ", \"shape\": [";
  for (int i = 0; i < t.rank(); ++i) out += (i ? ", " : "") + std::to_string(t.shape()[i]);
  out += "], \"values\": [";
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    if (i) out += ", ";
    switch (t.dtype()) {
      case DType::float32:
        out += json_float(t.data<float>()[i]);
        break;
      case DType::int32:
        out += std::to_string(t.data<std::int32_t>()[i]);
        break;
      case DType::int64:
        out += std::to_string(t.data<std::int64_t>()[i]);
        break;
      case DType::uint8:
        out += std::to_string(t.data<std::uint8_t>()[i]);
        break;
    }
  }
  return out + "]}";
}

std::string json_tensors(const std::vector<Tensor>& ts) {
  std::string out = "[";
  for (std::size_t i = 0; i < ts.size(); ++i) out += (i ? ", " : "") + json_tensor(ts[i]);
  return out + "]";
}

int read_any(const std::string& path) {
  auto file = kerascpp::io::read_weights_file(path);
  std::string out = "{\"layers\": [";
  for (std::size_t i = 0; i < file.layers.size(); ++i) {
    const auto& g = file.layers[i];
    out += (i ? ",\n  " : "\n  ") + std::string("{\"name\": ") + json_string(g.name) +
           ", \"vars\": " + json_tensors(g.vars) + "}";
  }
  out += "],\n \"has_optimizer\": " + std::string(file.has_optimizer ? "true" : "false");
  out += ",\n \"optimizer_vars\": " + json_tensors(file.optimizer_vars);
  out += ",\n \"extra\": {";
  for (std::size_t i = 0; i < file.extra.size(); ++i)
    out += (i ? ", " : "") + json_string(file.extra[i].first) + ": " + json_tensor(file.extra[i].second);
  out += "}}\n";
  std::cout << out;
  return 0;
}

int usage() {
  std::cerr << "usage: h5_roundtrip write <path> [--no-optimizer] [--no-extra]\n"
               "       h5_roundtrip read <path>\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const std::string mode = argv[1], path = argv[2];
  try {
    if (mode == "read" && argc == 3) return read_any(path);
    if (mode == "write") {
      bool optimizer = true, extra = true;
      for (int i = 3; i < argc; ++i) {
        const std::string flag = argv[i];
        if (flag == "--no-optimizer") optimizer = false;
        else if (flag == "--no-extra") extra = false;
        else return usage();
      }
      return write_mlp(path, optimizer, extra);
    }
    return usage();
  } catch (const kerascpp::Error& e) {
    std::cerr << "h5_roundtrip: " << e.what() << "\n";
    return 1;
  }
}
