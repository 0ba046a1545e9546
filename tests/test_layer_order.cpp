// Model::layers() in Keras' order (Functional.layers: by decreasing depth from the outputs), which
// fixes the .weights.h5 group names (dense, dense_1, ... by position), get_weights() and to_json().
// The expected lists are what Keras 3.15 gives for the same model (tests/python/
// test_transformer_layers_interop.py checks the order against Keras for every model it builds).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "io/h5_weights.hpp"
#include "kerascpp/kerascpp.hpp"
#include "temp_dir.hpp"

namespace K = kerascpp;

TEST_CASE("layer order: a branch shorter than its sibling lists after it, as in Keras, and saves so") {
  // trunk feeds "short" (straight into the Concatenate) and "long" -> "tail". Creation (and a
  // depth-first walk) gives trunk, short, long, tail; Keras orders by depth: long (2) before
  // short and tail (1). Saved by position, short's weights would land in Keras' long and back.
  auto in = K::Input({4}, K::DType::float32, "in");
  auto x = K::layers::Dense(8, {.name = "trunk"})(in);
  auto a = K::layers::Dense(3, {.name = "short"})(x);
  auto b = K::layers::Dense(2, {.name = "tail"})(K::layers::Dense(5, {.name = "long"})(x));
  K::Model model(in, K::layers::Concatenate(-1, {.name = "concatenate"})({a, b}));

  std::vector<std::string> names;
  for (auto& layer : model.layers()) names.push_back(layer->name());
  CHECK(names == std::vector<std::string>{"in", "trunk", "long", "short", "tail", "concatenate"});
  CHECK(model.variables()[2]->path() == "long/kernel");

  const auto config = nlohmann::json::parse(model.to_json());
  std::vector<std::string> listed;
  for (const auto& layer : config["config"]["layers"]) listed.push_back(layer["name"]);
  CHECK(listed == names);

  // The file Keras writes for this model: dense = trunk [4, 8], dense_1 = long [8, 5], dense_2 =
  // short [8, 3], dense_3 = tail [5, 2].
  kerascpp_test::TempDir dir;
  model.save_weights(dir.file("m.weights.h5"));
  std::vector<std::pair<std::string, K::Shape>> groups;
  for (const auto& g : K::io::read_weights_file(dir.file("m.weights.h5")).layers)
    if (!g.vars.empty()) groups.emplace_back(g.name, g.vars[0].shape());
  CHECK(groups == std::vector<std::pair<std::string, K::Shape>>{
                      {"dense", {4, 8}}, {"dense_1", {8, 5}}, {"dense_2", {8, 3}}, {"dense_3", {5, 2}}});
}
