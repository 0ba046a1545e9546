// kerascpp/notebook/display.hpp compiled as a xeus kernel compiles it: <xcpp/xdisplay.hpp> is on the
// include path (a recording stand-in, tests/notebooks/xeus_stub/), so LiveProgress takes its
// xeus branch. Checks what a kernel would publish, and the renderers' contents.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <zlib.h>

#include <kerascpp/kerascpp.hpp>
#include <kerascpp/notebook/display.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace K = kerascpp;

static_assert(KERASCPP_NOTEBOOK_XEUS == 1, "the xeus stand-in must be on the include path");

namespace {

std::uint32_t be32(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

K::Model tiny_model() {
  K::set_random_seed(5);
  auto inputs = K::Input({4}, K::DType::float32, "features");
  K::layers::DenseOptions softmax;
  softmax.activation = "softmax";
  softmax.name = "probabilities";
  auto outputs = K::layers::Dense(3, softmax)(inputs);
  K::Model model(inputs, outputs, "tiny");
  K::CompileOptions options;
  options.optimizer = K::optimizers::SGD(0.1);
  options.loss = K::losses::SparseCategoricalCrossentropy();
  options.metrics = {"accuracy"};
  model.compile(options);
  return model;
}

K::Dataset tiny_data() {
  std::vector<float> x(16 * 4);
  std::vector<std::int32_t> y(16);
  for (int i = 0; i < 16; ++i) {
    y[i] = i % 3;
    for (int j = 0; j < 4; ++j) x[i * 4 + j] = static_cast<float>((i * 7 + j * 3) % 5) / 5.0f + (j == y[i] ? 1.f : 0.f);
  }
  return K::Dataset::from_tensor_slices(K::Tensor::from_vector({16, 4}, x), K::Tensor::from_vector({16}, y));
}

}  // namespace

TEST_CASE("LiveProgress in a xeus kernel: one display, created once and then updated in place") {
  xcpp::recorded_displays().clear();
  K::Model model = tiny_model();
  K::FitOptions fit;
  fit.epochs = 2;
  fit.verbose = 0;
  fit.callbacks = {K::notebook::LiveProgress(2, 4, 2)};
  model.fit(tiny_data().batch(4), fit);
  const auto& shown = xcpp::recorded_displays();
  // created at train begin; updated after batches 2 and 4 and at each epoch's end: 3 per epoch.
  REQUIRE(shown.size() == 1 + 2 * 3);
  CHECK_FALSE(shown[0].update);
  for (std::size_t i = 1; i < shown.size(); ++i) {
    CHECK(shown[i].update);
    CHECK(shown[i].id == shown[0].id);
    CHECK(shown[i].bundle.contains("text/plain"));
    CHECK(shown[i].bundle.contains("text/html"));
  }
  CHECK(shown[1].bundle["text/plain"].get<std::string>().rfind("epoch 1/2  step 2/4  loss: ", 0) == 0);
  const std::string last = shown.back().bundle["text/plain"];
  CHECK(last.rfind("epoch 2/2  done  loss: ", 0) == 0);
  CHECK(last.find("accuracy: ") != std::string::npos);
}

TEST_CASE("LiveProgress given a stream writes plain lines there, even in a kernel") {
  xcpp::recorded_displays().clear();
  K::Model model = tiny_model();
  std::ostringstream out;
  K::notebook::LiveProgress progress(1, -1, 10, &out);
  K::FitOptions fit;
  fit.verbose = 0;
  fit.callbacks = {std::make_shared<K::notebook::LiveProgress>(progress)};
  model.fit(tiny_data().batch(4), fit);
  CHECK(out.str().rfind("epoch 1/1  done  loss: ", 0) == 0);
  CHECK(xcpp::recorded_displays().size() == 1);  // only the display made at train begin
}

TEST_CASE("A model's bundle lists every layer with its class, output shape and parameter count") {
  K::Model model = tiny_model();
  nlohmann::json bundle = K::mime_bundle_repr(model);
  const std::string html = bundle["text/html"];
  CHECK(html.find("<td>features</td><td>InputLayer</td><td>(None, 4)</td>") != std::string::npos);
  CHECK(html.find("<td>probabilities</td><td>Dense</td><td>(None, 3)</td><td style=\"text-align:right\">15</td>") !=
        std::string::npos);
  CHECK(html.find("Total params: 15 (trainable 15, non-trainable 0)") != std::string::npos);
  CHECK(bundle["text/plain"].get<std::string>().find("Model: \"tiny\"") != std::string::npos);
}

TEST_CASE("An image-shaped tensor's bundle holds a PNG of the right size; a matrix of counts does not") {
  K::Tensor image = K::Tensor::full({28, 20, 1}, 0.5f);
  nlohmann::json bundle = K::mime_bundle_repr(image);
  REQUIRE(bundle.contains("image/png"));
  const std::string png = K::notebook::tensor_png(image, 3);
  REQUIRE(png.size() > 33);
  CHECK(png.compare(0, 8, std::string("\x89PNG\r\n\x1a\n", 8)) == 0);
  CHECK(png.compare(12, 4, "IHDR") == 0);
  CHECK(be32(png, 16) == 60);  // width 20 x scale 3
  CHECK(be32(png, 20) == 84);  // height 28 x scale 3
  const auto* ihdr = reinterpret_cast<const Bytef*>(png.data() + 12);
  CHECK(be32(png, 29) == static_cast<std::uint32_t>(crc32(0L, ihdr, 17)));
  CHECK(bundle["image/png"].get<std::string>().rfind("iVBORw0KGgo", 0) == 0);  // the signature in base64
  CHECK(bundle["text/html"].get<std::string>().rfind("<img src=\"data:image/png;base64,", 0) == 0);

  K::Tensor counts = K::Tensor::from_vector({10, 10}, std::vector<std::int32_t>(100, 3));
  CHECK_FALSE(K::notebook::is_image(counts));
  CHECK_FALSE(K::mime_bundle_repr(counts).contains("image/png"));
  CHECK_THROWS_AS(K::notebook::tensor_png(counts), K::ValueError);
  CHECK(K::notebook::tensor_text(K::Tensor()) == "Tensor(undefined)");
}

TEST_CASE("base64 of the RFC 4648 test vectors") {
  CHECK(K::notebook::base64("") == "");
  CHECK(K::notebook::base64("f") == "Zg==");
  CHECK(K::notebook::base64("fo") == "Zm8=");
  CHECK(K::notebook::base64("foo") == "Zm9v");
  CHECK(K::notebook::base64("foobar") == "Zm9vYmFy");
}

TEST_CASE("History as SVG curves, Logs and Dataset as tables") {
  K::Model model = tiny_model();
  K::FitOptions fit;
  fit.epochs = 3;
  fit.verbose = 0;
  fit.validation_data = tiny_data().batch(8);
  K::callbacks::History history = model.fit(tiny_data().batch(4), fit);
  const std::string svg = K::callbacks::mime_bundle_repr(history)["image/svg+xml"];
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  std::size_t polylines = 0;
  for (std::size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++polylines;
  CHECK(polylines == 4);  // loss and accuracy, each with its val_ series
  CHECK(svg.find(">val_accuracy</text>") != std::string::npos);

  K::Logs logs;
  logs.set("loss", 0.25);
  logs.set("accuracy", 0.75);
  CHECK(K::notebook::logs_text(logs) == "loss: 0.2500 - accuracy: 0.7500");
  CHECK(K::mime_bundle_repr(logs)["text/html"].get<std::string>().find("<th style=\"text-align:left\">accuracy</th>") !=
        std::string::npos);

  CHECK(K::notebook::dataset_text(tiny_data().batch(4)) ==
        "Dataset(cardinality=4, element_spec=(TensorSpec(shape=(None, 4), dtype=float32), "
        "TensorSpec(shape=(None,), dtype=int32)))");
  CHECK(K::notebook::dataset_text(K::Dataset()) == "Dataset(undefined)");
}

TEST_CASE("cling::printValue shows each value as a terminal would: summary(), operator<<, the text renderers") {
  K::Model model = tiny_model();
  std::ostringstream summary;
  model.summary(summary);
  CHECK(cling::printValue(&model) == summary.str());
  CHECK(cling::printValue(&model).find("Total params: 15") != std::string::npos);

  K::Tensor tensor = K::Tensor::from_vector({2, 2}, std::vector<float>{1.f, 2.f, 3.f, 4.f});
  std::ostringstream printed;
  printed << tensor;
  CHECK(cling::printValue(&tensor) == printed.str());
  CHECK(cling::printValue(&tensor).find("shape=(2, 2)") != std::string::npos);

  K::Logs logs;
  logs.set("loss", 0.25);
  CHECK(cling::printValue(&logs) == "{loss: 0.25}");

  K::FitOptions fit;
  fit.epochs = 2;
  fit.verbose = 0;
  K::callbacks::History history = model.fit(tiny_data().batch(4), fit);
  CHECK(cling::printValue(&history) == K::notebook::history_text(history));
  CHECK(cling::printValue(&history).rfind("History(accuracy=[", 0) == 0);  // the metrics in name order
  CHECK(cling::printValue(&history).find(", loss=[") != std::string::npos);

  K::Dataset data = tiny_data().batch(4);
  CHECK(cling::printValue(&data) == K::notebook::dataset_text(data));
}
