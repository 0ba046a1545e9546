// keras_conformance: the kerascpp half of tests/python/test_keras_conformance.py.
//   keras_conformance <case dir>...
// Each case dir holds what Keras wrote (tests/python/keras_conformance_cases.py): model.keras
// (compiled) and case.json naming the input and target files (raw little-endian float32/int32)
// and the number of training steps. For each case, in one process so the suite stays fast:
//   load_model(model.keras); predict -> pred.f32; `steps` train_on_batch calls on the same batch
//   (the first one's logs, computed before its update as in Keras, -> result.json; for a case
//   marked "evaluate", test_on_batch's logs instead); the weights
//   after them -> w<i>.f32; predict again -> pred_trained.f32; save -> kerascpp.keras.
// result.json also holds the weights' shapes, or {"error": "..."} when the case failed (the other
// cases still run). Exit status 0 unless the arguments are wrong.
#include <kerascpp/kerascpp.hpp>

#include "tool_io.hpp"

#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace K = kerascpp;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// One array described in case.json as {"file", "shape", "dtype"}.
K::Tensor read_array(const fs::path& dir, const json& spec) {
  const K::Shape shape = spec.at("shape").get<K::Shape>();
  const std::vector<float> raw = tool_io::read_f32(dir / spec.at("file").get<std::string>());
  if (static_cast<std::int64_t>(raw.size()) != K::shape_numel(shape))
    throw K::ValueError(spec.at("file").get<std::string>() + " does not hold " + spec.at("shape").dump());
  if (spec.at("dtype") == "float32") return K::Tensor::from_vector(shape, raw);
  std::vector<std::int32_t> ids(raw.size());  // int32 stored bit for bit: reinterpret, not convert
  std::memcpy(ids.data(), raw.data(), raw.size() * sizeof(float));
  return K::Tensor::from_vector(shape, ids);
}

json logs_json(const K::Logs& logs) {
  json out = json::object();
  for (const auto& [key, value] : logs) out[key] = value;
  return out;
}

json run_case(const fs::path& dir) {
  const json spec = json::parse(std::ifstream(dir / "case.json"));
  std::vector<K::Tensor> xs;
  for (const auto& input : spec.at("inputs")) xs.push_back(read_array(dir, input));
  const K::Tensor y = read_array(dir, spec.at("y"));

  K::Model model = K::load_model((dir / "model.keras").string());
  tool_io::write_f32(dir / "pred.f32", model.predict_on_batch(xs).to_vector());
  json result = {{"logs", nullptr}};
  if (spec.value("evaluate", false)) result["logs"] = logs_json(model.test_on_batch(xs, y));
  for (int step = 0; step < spec.at("steps").get<int>(); ++step) {
    K::Logs logs = model.train_on_batch(xs, y);
    if (step == 0) result["logs"] = logs_json(logs);
  }
  const std::vector<K::Tensor> weights = model.get_weights();
  tool_io::write_weights(dir, weights, "");
  json shapes = json::array();
  for (const auto& w : weights) shapes.push_back(w.shape());
  result["weights"] = shapes;
  tool_io::write_f32(dir / "pred_trained.f32", model.predict_on_batch(xs).to_vector());
  model.save((dir / "kerascpp.keras").string());
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: keras_conformance <case dir>...\n");
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    const fs::path dir = argv[i];
    json result;
    try {
      result = run_case(dir);
    } catch (const std::exception& e) {  // the suite reports it as this case's failure
      result = {{"error", e.what()}};
    }
    std::ofstream(dir / "result.json", std::ios::trunc) << result.dump() << "\n";
  }
  return 0;
}
