// transformer_layers_interop: drives tests/python/test_transformer_layers_interop.py, which checks
// the Transformer-path layers (LayerNormalization, Dense on rank-3 inputs, Softmax with an axis,
// Embedding), the elementwise merges (Subtract, Multiply, Average), GlobalMaxPooling2D,
// ZeroPadding2D, UpSampling2D (nearest and bilinear) and the convolution variants (Conv1D, DepthwiseConv2D,
// Conv2DTranspose), LSTM, GRU, SimpleRNN, Bidirectional, TimeDistributed, Attention and AdditiveAttention against
// Python Keras 3 on the same weights and inputs.
//   transformer_layers_interop save <kind> <dir>
//       builds the model of `kind` (set_random_seed(1)), sets every weight to fixed pseudo-random
//       values (so gamma/beta are not ones/zeros), writes <dir>/model.weights.h5, <dir>/model.json
//       (Model::to_json), a fixed input batch <dir>/x.f32, kerascpp's prediction <dir>/y.f32 (raw
//       little-endian float32, row-major; integer inputs are written as floats) and the shapes in
//       <dir>/shapes.json.
//   transformer_layers_interop load <kind> <dir>
//       builds the same model, loads <dir>/model.weights.h5 (written by Keras), predicts on
//       <dir>/x.f32 and writes <dir>/y_cpp.f32.
//   transformer_layers_interop train <kind> <dir>
//       loads <dir>/model.weights.h5, takes one SGD(0.1) step on the mean squared error of the
//       prediction on <dir>/x.f32 towards <dir>/t.f32 and writes <dir>/trained.weights.h5.
// Errors: stderr, exit status 1.
#include <kerascpp/kerascpp.hpp>

#include "tool_io.hpp"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace K = kerascpp;
namespace fs = std::filesystem;

namespace {

using namespace tool_io;

static_assert(std::endian::native == std::endian::little, "the .f32 files are little-endian");

constexpr std::int64_t kExamples = 5;

struct Case {
  K::Model model;
  K::Shape example_shape;  // one input example
  bool integer_input = false;
  std::int64_t vocabulary = 0;  // integer inputs: ids in [0, vocabulary)
};

Case build(const std::string& kind) {
  if (kind == "lnorm") {
    auto in = K::Input({6});
    auto x = K::layers::Dense(8, {.activation = "tanh"})(in);
    x = K::layers::LayerNormalization()(x);
    x = K::layers::LayerNormalization({.epsilon = 0.1f, .center = false})(x);
    auto out = K::layers::Dense(3)(x);
    return {K::Model(in, out), {6}};
  }
  // Dense on (batch, steps, features), then a softmax over the features (Dense's activation) and,
  // beside it, one over the steps axis (Softmax). Side by side rather than stacked: through two
  // softmaxes the gradient reaching the first Dense is too small for one SGD step to move it
  // measurably. (The second branch's Dense has no bias: a bias is the same at every step, which
  // a softmax over the steps ignores, so it would get no gradient.)
  if (kind == "dense3d") {
    auto in = K::Input({4, 6});
    auto x = K::layers::Dense(8, {.activation = "relu"})(in);
    x = K::layers::LayerNormalization()(x);
    auto features = K::layers::Dense(5, {.activation = "softmax"})(x);
    auto steps = K::layers::Softmax({.axis = 1})(K::layers::Dense(5, {.use_bias = false})(x));
    return {K::Model(in, K::layers::Concatenate()({features, steps})), {4, 6}};
  }
  if (kind == "embedding") {  // int32 token ids -> Embedding (mask_zero) -> LayerNormalization -> Dense
    auto in = K::Input({5}, K::DType::int32);
    auto x = K::layers::Embedding(20, 8, {.mask_zero = true})(in);
    x = K::layers::LayerNormalization()(x);
    auto out = K::layers::Dense(3)(x);
    return {K::Model(in, out), {5}, true, 20};
  }
  if (kind == "merges") {  // three branches merged by Subtract, Multiply and Average
    auto in = K::Input({6});
    auto a = K::layers::Dense(4, {.activation = "tanh"})(in);
    auto b = K::layers::Dense(4, {.activation = "tanh"})(in);
    auto c = K::layers::Dense(4)(in);
    auto d = K::layers::Subtract()({a, b});
    auto m = K::layers::Multiply()({a, b, c});
    auto out = K::layers::Average()({d, m, c});
    return {K::Model(in, K::layers::Dense(2)(out)), {6}};
  }
  if (kind == "dot") {  // Dot over every supported pairing: 3-D·3-D, normalized, 2-D·2-D, 3-D·2-D
    auto in = K::Input({4, 6});
    auto a = K::layers::Dense(5, {.activation = "tanh"})(in);  // (B, 4, 5)
    auto b = K::layers::Dense(3)(in);                          // (B, 4, 3)
    auto c = K::layers::Dense(5)(in);                          // (B, 4, 5)
    auto flat = K::layers::Flatten()(in);
    auto d = K::layers::Dense(5)(flat);                                                   // (B, 5)
    auto e = K::layers::Dense(5)(flat);                                                   // (B, 5)
    auto steps = K::layers::Flatten()(K::layers::Dot({1, 1})({a, b}));                    // (B, 5, 3)
    auto cosine = K::layers::Flatten()(K::layers::Dot(-1, {.normalize = true})({a, c}));  // (B, 4, 4)
    auto vectors = K::layers::Dot(1)({d, e});                                             // (B, 1)
    auto mixed = K::layers::Dot({2, -1})({c, d});                                         // (B, 4)
    auto out = K::layers::Concatenate()({steps, cosine, vectors, mixed});
    return {K::Model(in, K::layers::Dense(2)(out)), {4, 6}};
  }
  if (kind == "pad_upsample") {  // Dense on images, ZeroPadding2D, UpSampling2D, then pooled
    auto in = K::Input({3, 2, 2});
    auto x = K::layers::Dense(3, {.activation = "tanh"})(in);
    x = K::layers::ZeroPadding2D({1, 0, 2, 1})(x);
    x = K::layers::UpSampling2D({2, 1})(x);
    x = K::layers::Flatten()(x);
    return {K::Model(in, K::layers::Dense(2)(x)), {3, 2, 2}};
  }
  if (kind == "upsample_bilinear") {  // UpSampling2D(bilinear): factors 1-3, a one-pixel axis, edges
    auto in = K::Input({3, 1, 2});
    auto x = K::layers::Dense(3, {.activation = "tanh"})(in);
    x = K::layers::UpSampling2D({2, 3}, {.interpolation = "bilinear"})(x);
    x = K::layers::UpSampling2D({3, 1}, {.interpolation = "bilinear"})(x);
    x = K::layers::Flatten()(x);
    return {K::Model(in, K::layers::Dense(2)(x)), {3, 1, 2}};
  }
  if (kind == "global_max_pool") {  // Dense on (batch, h, w, c), then each channel's maximum
    auto in = K::Input({4, 3, 2});
    auto x = K::layers::Dense(5, {.activation = "tanh"})(in);
    x = K::layers::GlobalMaxPooling2D()(x);
    return {K::Model(in, K::layers::Dense(2)(x)), {4, 3, 2}};
  }
  if (kind == "conv1d") {  // Conv1D with every padding, strides 1 and 2
    auto in = K::Input({9, 3});
    auto x = K::layers::Conv1D(4, 3, {.activation = "tanh"})(in);                                      // valid
    x = K::layers::Conv1D(5, 3, {.strides = 2, .padding = K::Padding::same})(x);                       // same, s2
    x = K::layers::Conv1D(3, 2, {.padding = K::Padding::causal, .activation = "relu"})(x);             // causal
    x = K::layers::Conv1D(4, 3, {.strides = 2, .padding = K::Padding::causal, .use_bias = false})(x);  // causal, s2
    x = K::layers::Conv1D(2, 2, {.strides = 2})(x);                                                    // valid, s2
    return {K::Model(in, x), {9, 3}};
  }
  if (kind == "depthwise") {  // DepthwiseConv2D, valid/same, strides 1 and 2, depth_multiplier 1 and 2
    auto in = K::Input({7, 6, 3});
    auto x = K::layers::DepthwiseConv2D(3, {.depth_multiplier = 2, .activation = "tanh"})(in);
    x = K::layers::DepthwiseConv2D({3, 2}, {.strides = 2, .padding = K::Padding::same})(x);
    x = K::layers::DepthwiseConv2D(2, {.strides = {1, 2}, .depth_multiplier = 3, .use_bias = false})(x);
    return {K::Model(in, x), {7, 6, 3}};
  }
  if (kind == "conv_transpose") {  // Conv2DTranspose, valid/same, strides 1, 2 and 3 (> kernel)
    auto in = K::Input({3, 4, 2});
    auto x = K::layers::Conv2DTranspose(3, 3, {.strides = 2, .padding = K::Padding::same})(in);
    x = K::layers::Conv2DTranspose(2, {2, 3}, {.activation = "tanh"})(x);
    x = K::layers::Conv2DTranspose(2, 4, {.strides = {2, 1}, .padding = K::Padding::same, .use_bias = false})(x);
    x = K::layers::Conv2DTranspose(2, 2, {.strides = {3, 2}})(x);
    return {K::Model(in, x), {3, 4, 2}};
  }
  if (kind == "mha_self") {  // self-attention with a value_dim and output_shape of its own
    auto in = K::Input({5, 6});
    auto x = K::layers::MultiHeadAttention(2, 4, {.value_dim = 3, .output_shape = 7})(in, in);
    return {K::Model(in, K::layers::Dense(3)(x)), {5, 6}};
  }
  if (kind == "mha_causal") {  // causal self-attention, then a residual and LayerNormalization
    auto in = K::Input({5, 6});
    auto x = K::layers::Dense(6, {.activation = "tanh"})(in);
    auto a = K::layers::MultiHeadAttention(3, 2)(x, x, {.use_causal_mask = true});
    x = K::layers::LayerNormalization()(K::layers::Add()({x, a}));
    return {K::Model(in, x), {5, 6}};
  }
  // Padding masks from Embedding(mask_zero) (ids in [0, 4): about a quarter are padding, rows
  // wholly padded included); Flatten drops the mask, as in Keras, so the loss is unmasked.
  if (kind == "mha_masked" || kind == "mha_masked_dropout") {
    auto in = K::Input({6}, K::DType::int32);
    auto e = K::layers::Embedding(4, 8, {.mask_zero = true})(in);
    K::layers::MultiHeadAttentionOptions o{.use_bias = kind == "mha_masked"};
    if (kind == "mha_masked_dropout") o.dropout = 0.3;  // Keras' other masking path (inference here)
    auto x = K::layers::MultiHeadAttention(2, 4, o)(e, e, {.use_causal_mask = kind == "mha_masked_dropout"});
    x = K::layers::Dense(4, {.activation = "tanh"})(K::layers::Add()({e, x}));
    auto out = K::layers::Dense(3)(K::layers::Flatten()(x));
    return {K::Model(in, out), {6}, true, 4};
  }
  // Recurrent layers: stacked with return_sequences, go_backwards, and the mask of
  // Embedding(mask_zero) ids (leading, inner, trailing and whole-row padding) carried through.
  if (kind == "lstm") {
    auto in = K::Input({5, 4});
    // Side by side rather than stacked, so that one SGD step moves every weight measurably.
    auto seq = K::layers::Flatten()(K::layers::LSTM(4, {.return_sequences = true})(in));
    auto last = K::layers::LSTM(3, {.go_backwards = true})(in);
    return {K::Model(in, K::layers::Dense(2)(K::layers::Concatenate()({seq, last}))), {5, 4}};
  }
  if (kind == "gru") {
    auto in = K::Input({5, 4});
    auto x = K::layers::GRU(6, {.return_sequences = true, .go_backwards = true})(in);
    x = K::layers::GRU(3, {.activation = "relu", .use_bias = false})(x);
    return {K::Model(in, K::layers::Dense(2)(x)), {5, 4}};
  }
  if (kind == "lstm_masked" || kind == "gru_masked") {
    const bool lstm = kind == "lstm_masked";
    auto in = K::Input({6}, K::DType::int32);
    auto x = K::layers::Embedding(4, 5, {.mask_zero = true})(in);
    K::layers::RecurrentOptions first{.return_sequences = true, .go_backwards = !lstm};
    x = lstm ? K::layers::LSTM(4, first)(x) : K::layers::GRU(4, first)(x);
    x = lstm ? K::layers::GRU(3)(x) : K::layers::LSTM(3)(x);
    return {K::Model(in, K::layers::Dense(2)(x)), {6}, true, 4};
  }
  // SimpleRNN returning sequences backwards, and one returning its state (return_state's outputs
  // feed the model like any other).
  if (kind == "simple_rnn") {
    auto in = K::Input({5, 4});
    auto seq = K::layers::Flatten()(K::layers::SimpleRNN(4, {.return_sequences = true, .go_backwards = true})(in));
    auto with_state = K::layers::SimpleRNN(3, {.activation = "relu", .return_state = true})->call_multi({in});
    auto out = K::layers::Concatenate()({seq, with_state[0], with_state[1]});
    return {K::Model(in, K::layers::Dense(2)(out)), {5, 4}};
  }
  // Masked: zero_output_for_mask on a SimpleRNN, then an LSTM's output and both its states.
  if (kind == "simple_rnn_masked") {
    auto in = K::Input({6}, K::DType::int32);
    auto x = K::layers::Embedding(4, 5, {.mask_zero = true})(in);
    x = K::layers::SimpleRNN(4, {.return_sequences = true, .zero_output_for_mask = true})(x);
    auto outs = K::layers::LSTM(3, {.return_state = true})->call_multi({x});
    return {K::Model(in, K::layers::Dense(2)(K::layers::Concatenate()({outs[0], outs[1], outs[2]}))), {6}, true, 4};
  }
  // Bidirectional: LSTM concatenated (sequences) beside GRU summed (last output); then with a mask,
  // SimpleRNN with merge_mode None and an LSTM returning its states.
  if (kind == "bidirectional") {
    auto in = K::Input({5, 4});
    auto seq = K::layers::Bidirectional(K::layers::LSTM(3, {.return_sequences = true}))(in);
    auto last = K::layers::Bidirectional(K::layers::GRU(2), {.merge_mode = "sum"})(in);
    auto out = K::layers::Concatenate()({K::layers::Flatten()(seq), last});
    return {K::Model(in, K::layers::Dense(2)(out)), {5, 4}};
  }
  if (kind == "bidirectional_masked") {
    auto in = K::Input({6}, K::DType::int32);
    auto x = K::layers::Embedding(4, 5, {.mask_zero = true})(in);
    auto both =
        K::layers::Bidirectional(K::layers::SimpleRNN(3, {.return_sequences = true}), {.merge_mode = std::nullopt})
            ->call_multi({x});
    x = K::layers::Add()({both[0], both[1]});  // (two Concatenates here trip a naming quirk of Keras' model_from_json)
    auto states =
        K::layers::Bidirectional(K::layers::LSTM(2, {.return_state = true}), {.merge_mode = "ave"})->call_multi({x});
    auto out = K::layers::Concatenate()({states[0], states[1], states[2], states[3], states[4]});
    return {K::Model(in, K::layers::Dense(2)(out)), {6}, true, 4};
  }
  // TimeDistributed(Dense) and TimeDistributed(Conv1D) over 4 steps of (3, 2) frames.
  if (kind == "time_distributed") {
    auto in = K::Input({4, 3, 2});
    auto x = K::layers::TimeDistributed(K::layers::Dense(3, {.activation = "tanh"}))(in);
    x = K::layers::TimeDistributed(K::layers::Conv1D(2, 2))(x);
    return {K::Model(in, K::layers::Dense(2)(K::layers::Flatten()(x))), {4, 3, 2}};
  }
  // Attention: [query, value] with use_scale beside a causal [query, value, key]; then with the
  // masks of Embedding(mask_zero) on query and value (and dropout, inactive when predicting).
  if (kind == "attention") {
    auto in = K::Input({5, 4});
    auto q = K::layers::Dense(3, {.activation = "tanh"})(in);
    auto v = K::layers::Dense(2)(in);
    // (No key bias: it adds the same to each query's every score, which the softmax ignores.)
    auto k = K::layers::Dense(3, {.use_bias = false})(in);
    auto scaled = K::layers::Attention({.use_scale = true})({q, K::layers::Dense(3)(in)});
    auto causal = std::dynamic_pointer_cast<K::layers::AttentionLayer>(K::layers::Attention().get())
                      ->call({q, v, k}, {.use_causal_mask = true});
    auto out = K::layers::Concatenate()({K::layers::Flatten()(scaled), K::layers::Flatten()(causal)});
    return {K::Model(in, K::layers::Dense(2)(out)), {5, 4}};
  }
  // AdditiveAttention with its scale on [query, value, key], and without on Embedding-masked inputs.
  if (kind == "additive_attention") {
    auto in = K::Input({5, 4});
    auto q = K::layers::Dense(3, {.activation = "tanh"})(in);
    auto v = K::layers::Dense(2)(in);
    auto k = K::layers::Dense(3)(in);
    auto a = K::layers::AdditiveAttention()({q, v, k});
    return {K::Model(in, K::layers::Dense(2)(K::layers::Flatten()(a))), {5, 4}};
  }
  if (kind == "additive_attention_masked") {
    auto in = K::Input({6}, K::DType::int32);
    auto e = K::layers::Embedding(4, 5, {.mask_zero = true})(in);
    auto x = K::layers::Dense(5, {.activation = "tanh"})(e);
    auto a = K::layers::AdditiveAttention({.use_scale = false})({x, e});
    return {K::Model(in, K::layers::Dense(3)(K::layers::Flatten()(a))), {6}, true, 4};
  }
  if (kind == "attention_masked" || kind == "attention_masked_dropout") {
    auto in = K::Input({6}, K::DType::int32);
    auto e = K::layers::Embedding(4, 5, {.mask_zero = true})(in);
    auto x = K::layers::Dense(5, {.activation = "tanh"})(e);
    auto a = K::layers::Attention({.dropout = kind == "attention_masked" ? 0.0 : 0.3})({x, e});
    return {K::Model(in, K::layers::Dense(3)(K::layers::Flatten()(a))), {6}, true, 4};
  }
  // The loss weighted by the output's mask: the output keeps Embedding(mask_zero)'s [batch, steps]
  // mask, so the loss and its gradient count the unpadded steps only (Keras' apply_mask).
  if (kind == "masked_loss") {
    auto in = K::Input({6}, K::DType::int32);
    auto x = K::layers::Embedding(4, 5, {.mask_zero = true})(in);
    x = K::layers::Dense(4, {.activation = "tanh"})(x);
    return {K::Model(in, K::layers::Dense(3)(x)), {6}, true, 4};
  }
  throw K::Error("unknown model kind '" + kind + "'");
}

K::Tensor input_batch(const Case& c, std::int64_t n) {
  K::Shape shape{n};
  shape.insert(shape.end(), c.example_shape.begin(), c.example_shape.end());
  std::int64_t count = 1;
  for (auto d : shape) count *= d;
  if (!c.integer_input)
    return K::Tensor::from_vector(shape, uniform(static_cast<std::size_t>(count), 12345, -2.f, 2.f));
  std::mt19937 gen(12345);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(count));
  for (auto& id : ids) id = static_cast<std::int32_t>(gen() % static_cast<std::uint32_t>(c.vocabulary));
  return K::Tensor::from_vector(shape, ids);
}

std::vector<float> as_floats(const K::Tensor& t) {
  if (t.dtype() == K::DType::float32) return t.to_vector();
  std::vector<float> out;
  const auto* p = t.data<std::int32_t>();
  for (std::int64_t i = 0; i < t.numel(); ++i) out.push_back(static_cast<float>(p[i]));
  return out;
}

std::string shape_json(const K::Shape& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

K::Tensor predict(K::Model& model, const K::Tensor& x) {
  return model.predict(K::Dataset::from_tensor_slices(x).batch(kExamples), {.verbose = 0});
}

int save(const std::string& kind, const fs::path& dir) {
  K::set_random_seed(1);
  Case c = build(kind);
  std::vector<K::Tensor> weights = c.model.get_weights();
  std::uint32_t seed = 50;
  for (auto& w : weights)
    w = K::Tensor::from_vector(w.shape(), uniform(static_cast<std::size_t>(w.numel()), seed++, -0.9f, 1.1f));
  c.model.set_weights(weights);
  fs::create_directories(dir);
  c.model.save_weights((dir / "model.weights.h5").string());
  std::ofstream(dir / "model.json", std::ios::trunc) << c.model.to_json() << "\n";
  K::Tensor x = input_batch(c, kExamples);
  K::Tensor y = predict(c.model, x);
  write_f32(dir / "x.f32", as_floats(x));
  write_f32(dir / "y.f32", y.to_vector());
  std::ofstream json(dir / "shapes.json", std::ios::trunc);
  json << "{\"x\": " << shape_json(x.shape()) << ", \"y\": " << shape_json(y.shape())
       << ", \"integer_input\": " << (c.integer_input ? "true" : "false") << "}\n";
  if (!json) throw K::Error("cannot write shapes.json");
  return 0;
}

// <dir>/x.f32 as the model's input batch (integer ids for integer-input kinds).
K::Tensor read_input(const Case& c, const fs::path& dir) {
  std::vector<float> values = read_f32(dir / "x.f32");
  K::Tensor shape_probe = input_batch(c, kExamples);
  if (static_cast<std::int64_t>(values.size()) != shape_probe.numel())
    throw K::Error("x.f32 holds " + std::to_string(values.size()) + " floats, expected " +
                   std::to_string(shape_probe.numel()));
  K::Tensor x;
  if (c.integer_input) {
    std::vector<std::int32_t> ids(values.begin(), values.end());
    x = K::Tensor::from_vector(shape_probe.shape(), ids);
  } else {
    x = K::Tensor::from_vector(shape_probe.shape(), values);
  }
  return x;
}

int load(const std::string& kind, const fs::path& dir) {
  K::set_random_seed(1);
  Case c = build(kind);
  c.model.load_weights((dir / "model.weights.h5").string());
  write_f32(dir / "y_cpp.f32", predict(c.model, read_input(c, dir)).to_vector());
  return 0;
}

// One SGD(0.1) step on the mean squared error towards <dir>/t.f32 from the weights in
// <dir>/model.weights.h5 (written by Keras), the whole batch of <dir>/x.f32 at once; writes
// <dir>/trained.weights.h5.
int train(const std::string& kind, const fs::path& dir) {
  K::set_random_seed(1);
  Case c = build(kind);
  c.model.load_weights((dir / "model.weights.h5").string());
  K::Tensor x = read_input(c, dir);
  K::Tensor y = predict(c.model, x);
  K::Tensor t = K::Tensor::from_vector(y.shape(), read_f32(dir / "t.f32"));
  c.model.compile({.optimizer = K::optimizers::SGD(0.1), .loss = K::losses::MeanSquaredError()});
  c.model.fit(K::Dataset::from_tensor_slices(x, t).batch(kExamples), {.epochs = 1, .verbose = 0});
  c.model.save_weights((dir / "trained.weights.h5").string());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc == 4 ? argv[1] : "";
  if (command != "save" && command != "load" && command != "train") {
    std::fprintf(stderr, "usage: transformer_layers_interop save|load|train <kind> <dir>\n");
    return 2;
  }
  try {
    if (command == "train") return train(argv[2], argv[3]);
    return command == "save" ? save(argv[2], argv[3]) : load(argv[2], argv[3]);
  } catch (const K::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
