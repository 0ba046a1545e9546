"""`.keras` archives both ways with Python Keras 3: what kerascpp's Model::save writes, Keras'
load_model rebuilds and predicts the same; what Keras' model.save writes, kerascpp's load_model
rebuilds and predicts the same. Models: an MLP (Sequential), a CNN with BatchNormalization, L2 and
a frozen layer, a branching functional model with a shared layer, a model of the separable
convolutions (SeparableConv2D/1D, DepthwiseConv1D, Conv1DTranspose, GroupNormalization), the Transformer example with its
custom layer (custom_objects in Keras, register_layer_class in kerascpp), the NCF example's
NeuMF (two int32 id inputs, embeddings, Multiply and Concatenate), the preprocessing layers,
Discretization (given and adapted boundaries, the adapted ones equal to Keras' adapt on the same
values) with CategoryEncoding, and the augmentation layers RandomRotation, RandomZoom and
RandomTranslation (identity in predict)."""
import json
import os
import subprocess

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kerascpp_binaries import find_binary  # noqa: E402

KINDS = ["mlp", "cnn_bn", "branching", "separable", "preprocessing", "encoding", "augmentation"]


def _tool(*args):
    result = subprocess.run([find_binary("keras_archive_interop"), *map(str, args)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _read(path, shape):
    return np.fromfile(path, dtype="<f4").reshape(shape)


@pytest.mark.parametrize("kind", KINDS)
def test_keras_loads_what_kerascpp_saves(tmp_path, kind):
    _tool("save", kind, tmp_path)
    shapes = json.loads((tmp_path / "shapes.json").read_text())
    x, y = _read(tmp_path / "x.f32", shapes["x"]), _read(tmp_path / "y.f32", shapes["y"])
    model = keras.models.load_model(tmp_path / "model.keras")
    np.testing.assert_allclose(model.predict(x, verbose=0), y, rtol=1e-5, atol=1e-6)
    if kind == "cnn_bn":  # the frozen layer and the regularizer survive the trip
        assert [layer.trainable for layer in model.layers if isinstance(layer, keras.layers.Dense)] == [False, True]
        conv = next(layer for layer in model.layers if isinstance(layer, keras.layers.Conv2D))
        assert conv.kernel_regularizer.get_config()["l2"] == pytest.approx(1e-4)
    if kind == "mlp":  # compiled and trained one step in kerascpp: Keras comes back compiled alike
        assert isinstance(model.optimizer, keras.optimizers.Adam)
        assert float(model.optimizer.learning_rate) == pytest.approx(0.003)
        assert model.optimizer.beta_1 == pytest.approx(0.85)
        assert int(model.optimizer.iterations) == 1
        assert isinstance(model.loss, keras.losses.SparseCategoricalCrossentropy)
    if kind == "augmentation":  # the augmentation settings survive the trip
        config = {type(layer).__name__: layer.get_config() for layer in model.layers}
        assert config["RandomRotation"]["factor"] == [-0.1, 0.1] or tuple(config["RandomRotation"]["factor"]) == (-0.1, 0.1)
        assert config["RandomRotation"]["fill_mode"] == "constant" and config["RandomRotation"]["fill_value"] == 0.5
        assert list(config["RandomZoom"]["height_factor"]) == [-0.2, 0.3] and config["RandomZoom"]["width_factor"] == 0.1
        assert config["RandomTranslation"]["interpolation"] == "nearest" and config["RandomTranslation"]["seed"] == 4
    if kind == "encoding":  # kerascpp's adapt found Keras' boundaries for the same values
        adapted = next(layer for layer in model.layers if getattr(layer, "num_bins", None) == 3)
        np.testing.assert_array_equal(np.float32(adapted.bin_boundaries),
                                      np.float32(_adapted_discretization(np.fromfile(tmp_path / "adapt.f32", "<f4"))
                                                 .bin_boundaries))


def test_keras_loads_kerascpps_loss_scale_optimizer_and_its_state(tmp_path):
    _tool("save", "mlp_lso", tmp_path)
    optimizer = keras.models.load_model(tmp_path / "model.keras").optimizer
    assert isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    assert isinstance(optimizer.inner_optimizer, keras.optimizers.Adam)
    assert float(optimizer.inner_optimizer.learning_rate) == pytest.approx(0.01)
    assert optimizer.dynamic_growth_steps == 2
    assert float(optimizer.dynamic_scale) == 2048  # 1024, doubled after 2 finite steps
    assert int(optimizer.iterations) == 3


def _adapted_discretization(values, **kwargs):
    """Keras' Discretization(num_bins=3) adapted on `values` as its adapt() does on an array
    (adapt itself needs TensorFlow, which the peers do not install)."""
    layer = keras.layers.Discretization(num_bins=3, **kwargs)
    layer.reset_state()
    layer.update_state(values)
    layer.finalize_state()
    return layer


def _keras_model(kind):
    keras.utils.set_random_seed(3)
    if kind == "mlp":
        return keras.Sequential([keras.Input((12,)), keras.layers.Dense(16, activation="relu"),
                                 keras.layers.Dropout(0.2), keras.layers.Dense(4, activation="softmax")])
    if kind == "cnn_bn":
        inp = keras.Input((8, 8, 2))
        x = keras.layers.ZeroPadding2D(1)(inp)
        x = keras.layers.Conv2D(4, 3, use_bias=False, kernel_regularizer=keras.regularizers.L2(1e-4))(x)
        x = keras.layers.BatchNormalization(momentum=0.9, epsilon=1e-5)(x)
        x = keras.layers.Activation("relu")(x)
        x = keras.layers.MaxPooling2D(2, padding="same")(x)
        x = keras.layers.Flatten()(x)
        x = keras.layers.Dense(6, activation="tanh", trainable=False)(x)
        return keras.Model(inp, keras.layers.Dense(3, activation="softmax")(x))
    if kind == "sequence":  # Keras-saved only: Conv1D (causal), LSTM, GRU (go_backwards)
        inp = keras.Input((7, 3))
        x = keras.layers.Conv1D(4, 3, padding="causal", activation="relu")(inp)
        x = keras.layers.LSTM(5, return_sequences=True)(x)
        x = keras.layers.GRU(3, go_backwards=True)(x)
        return keras.Model(inp, keras.layers.Dense(2)(x))
    if kind == "recurrent_wrappers":  # Keras-saved only: SimpleRNN, Bidirectional, TimeDistributed
        inp = keras.Input((6, 3))
        x = keras.layers.TimeDistributed(keras.layers.Dense(4, activation="tanh"))(inp)
        x = keras.layers.Bidirectional(keras.layers.LSTM(3, return_sequences=True))(x)
        x = keras.layers.SimpleRNN(4, return_sequences=True, go_backwards=True)(x)
        x = keras.layers.Bidirectional(keras.layers.GRU(2), merge_mode="mul")(x)
        return keras.Model(inp, keras.layers.Dense(2)(x))
    if kind == "recurrent_masked":  # Keras-saved only: masks (Keras writes them as call keywords), several
        # outputs, Attention's use_causal_mask
        inp = keras.Input((6, 3))
        x = keras.layers.Masking()(inp)  # the all-zero steps the test puts in x
        x = keras.layers.Attention(use_scale=True)([x, x], use_causal_mask=True)
        x = keras.layers.AdditiveAttention()([x, x])
        a, b = keras.layers.Bidirectional(keras.layers.SimpleRNN(3, return_sequences=True), merge_mode=None)(x)
        y, h, c = keras.layers.LSTM(2, return_state=True)(keras.layers.Add()([a, b]))
        return keras.Model(inp, keras.layers.Dense(2)(keras.layers.Concatenate()([y, h, c])))
    if kind == "image_ops":  # Keras-saved only: DepthwiseConv2D, Conv2DTranspose, UpSampling2D, Dot
        inp = keras.Input((4, 4, 2))
        x = keras.layers.DepthwiseConv2D(3, padding="same", depth_multiplier=2)(inp)
        x = keras.layers.Conv2DTranspose(2, 2, strides=2)(x)
        x = keras.layers.UpSampling2D((2, 1), interpolation="bilinear")(x)
        g = keras.layers.GlobalAveragePooling2D()(x)
        a, b = keras.layers.Dense(3)(g), keras.layers.Dense(3, activation="tanh")(g)
        d = keras.layers.Dot(axes=1, normalize=True)([a, b])
        return keras.Model(inp, keras.layers.Dense(2)(keras.layers.Concatenate()([d, a])))
    if kind == "separable":  # SeparableConv2D/1D, DepthwiseConv1D, Conv1DTranspose, GroupNormalization
        inp = keras.Input((6, 6, 3))
        x = keras.layers.SeparableConv2D(4, 3, strides=2, padding="same", depth_multiplier=2, activation="relu")(inp)
        x = keras.layers.GroupNormalization(groups=2, epsilon=1e-4)(x)
        x = keras.layers.SeparableConv2D(3, (2, 1), use_bias=False, activation="gelu")(x)
        x = keras.layers.Reshape((6, 3))(x)
        x = keras.layers.DepthwiseConv1D(3, padding="same", depth_multiplier=2, activation="tanh")(x)
        x = keras.layers.SeparableConv1D(4, 3, strides=2, depth_multiplier=3)(x)
        x = keras.layers.Conv1DTranspose(3, 3, strides=2, padding="same", activation="swish")(x)
        x = keras.layers.Conv1DTranspose(2, 2, strides=3)(x)
        return keras.Model(inp, keras.layers.Dense(2)(keras.layers.Flatten()(x)))
    if kind == "activations":  # Keras-saved only: every keras.activations name, Dense's and Activation's
        inp = keras.Input((10,))
        h = keras.layers.Dense(12, activation="gelu")(inp)
        h = keras.layers.Dense(12, activation="swish")(h)
        # threshold has no defaults, so Keras cannot apply it by name; glu halves its axis, which
        # Keras' Activation does not tell its output shape: it goes last.
        names = [n for n in dir(keras.activations) if not n.startswith("_") and n not in
                 ("get", "serialize", "deserialize", "threshold", "glu")]
        branches = [keras.layers.Activation(n)(h) for n in sorted(names)]
        # The activation layers (ELU with its default: Keras 3.15 does not save ELU's alpha).
        branches += [keras.layers.ReLU(max_value=1.5, negative_slope=0.1, threshold=0.2)(h),
                     keras.layers.LeakyReLU(0.15)(h), keras.layers.ELU()(h), keras.layers.PReLU()(h)]
        x = keras.layers.Dense(4, activation="hard_swish")(keras.layers.Concatenate()(branches))
        return keras.Model(inp, keras.layers.Activation("glu")(x))
    if kind == "preprocessing":  # Rescaling, Normalization (weights set below, count an integer),
        inp = keras.Input((7, 6, 3))  # Resizing, CenterCrop, RandomFlip (identity in predict)
        x = keras.layers.Rescaling(1 / 127.5, offset=-1)(inp)
        x = keras.layers.Normalization()(x)
        x = keras.layers.Normalization(mean=[0.1, -0.2, 0.3], variance=[2.0, 0.5, 1.0])(x)
        x = keras.layers.Resizing(9, 8)(x)
        x = keras.layers.Resizing(5, 7, interpolation="nearest", crop_to_aspect_ratio=True)(x)
        x = keras.layers.CenterCrop(4, 5)(x)
        x = keras.layers.RandomFlip("horizontal", seed=3)(x)
        x = keras.layers.Conv2D(2, 3)(x)
        return keras.Model(inp, keras.layers.Dense(2)(keras.layers.Flatten()(x)))
    if kind == "encoding":  # Discretization (given and adapted boundaries) and CategoryEncoding
        inp = keras.Input((4,))
        counts = keras.layers.CategoryEncoding(4, output_mode="count")(
            keras.layers.Discretization(bin_boundaries=[-0.5, 0.0, 0.5])(inp))
        values = np.random.default_rng(2).uniform(-1, 1, 40).astype("float32")
        adapted = _adapted_discretization(values, output_mode="multi_hot")(inp)
        return keras.Model(inp, keras.layers.Dense(2)(keras.layers.Concatenate()([counts, adapted])))
    if kind == "augmentation":  # RandomRotation, RandomZoom, RandomTranslation (identity in predict)
        inp = keras.Input((6, 5, 2))
        x = keras.layers.RandomRotation(0.1, fill_mode="constant", fill_value=0.5, seed=1)(inp)
        x = keras.layers.RandomZoom((-0.2, 0.3), 0.1)(x)
        x = keras.layers.RandomTranslation(0.1, (-0.2, 0.3), fill_mode="wrap", interpolation="nearest", seed=4)(x)
        x = keras.layers.Conv2D(2, 3)(x)
        return keras.Model(inp, keras.layers.Dense(2)(keras.layers.Flatten()(x)))
    if kind == "attention":  # Keras-saved only: causal self-attention, then cross-attention with a key
        inp = keras.Input((5, 6))
        a = keras.layers.MultiHeadAttention(2, 3)(inp, inp, use_causal_mask=True)
        x = keras.layers.LayerNormalization()(keras.layers.Add()([inp, a]))
        k = keras.layers.Dense(6)(inp)
        y = keras.layers.MultiHeadAttention(3, 2, value_dim=4, output_shape=5)(x, inp, key=k)
        return keras.Model(inp, keras.layers.Dense(2)(y))
    inp = keras.Input((6, 6, 3))
    a = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    b = keras.layers.Conv2D(4, 1)(inp)
    s = keras.layers.Add()([a, b])
    shared = keras.layers.Dense(5, activation="tanh")
    c = keras.layers.Concatenate()([shared(keras.layers.GlobalAveragePooling2D()(s)),
                                    shared(keras.layers.GlobalMaxPooling2D()(a))])
    c = keras.layers.LayerNormalization()(c)
    return keras.Model(inp, keras.layers.Dense(2)(c))


@pytest.mark.parametrize("kind", KINDS + ["sequence", "recurrent_wrappers", "recurrent_masked", "image_ops", "attention",
                                           "activations"])
def test_kerascpp_loads_what_keras_saves(tmp_path, kind):
    model = _keras_model(kind)
    rng = np.random.default_rng(5)
    # Non-default weights everywhere (BatchNormalization's moving variance stays positive).
    model.set_weights([(np.abs(w) + 0.5 if "variance" in v.path else w).astype("float32")
                       for v, w in zip(model.weights, (rng.uniform(-0.5, 0.5, w.shape) for w in model.get_weights()))])
    x = rng.uniform(-1, 1, (5, *model.inputs[0].shape[1:])).astype("float32")
    if kind == "recurrent_masked":  # padding: trailing, leading, inner and a whole row
        x[0, 4:], x[1, :2], x[2, 3], x[3] = 0, 0, 0, 0
    if kind == "mlp":  # a compiled model: kerascpp compiles what load_model rebuilds alike
        model.compile(optimizer=keras.optimizers.Adam(0.004), loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
    model.save(tmp_path / "keras.keras")
    x.tofile(tmp_path / "x.f32")
    config = json.loads(_tool("load", tmp_path / "keras.keras", tmp_path / "x.f32", tmp_path / "y.f32", *x.shape))
    if kind == "preprocessing":  # Normalization applies set_weights' statistics only once reloaded
        model = keras.saving.load_model(tmp_path / "keras.keras")
    expected = model.predict(x, verbose=0)
    np.testing.assert_allclose(_read(tmp_path / "y.f32", expected.shape), expected, rtol=1e-5, atol=1e-6)
    if kind == "mlp":
        assert config["kerascpp_compiled"]["optimizer"] == "Adam"
        assert config["kerascpp_compiled"]["learning_rate"] == pytest.approx(0.004)
        assert config["kerascpp_compiled"]["metrics_names"] == ["loss", "accuracy"]
    else:
        assert "kerascpp_compiled" not in config
    # kerascpp kept the layers' names (its topological order may differ) and the frozen flag.
    names = {layer["config"]["name"] for layer in config["config"]["layers"] if layer["class_name"] != "InputLayer"}
    assert names == {layer.name for layer in model.layers if not isinstance(layer, keras.layers.InputLayer)}
    if kind == "cnn_bn":
        trainable = {layer["config"]["name"]: layer["config"].get("trainable", True)
                     for layer in config["config"]["layers"]}
        assert trainable[model.layers[-2].name] is False


def test_kerascpp_names_the_layer_it_cannot_rebuild(tmp_path):
    inp = keras.Input((4, 3, 2))  # (time, rows, channels): a class kerascpp has not got yet
    x = keras.layers.Flatten()(keras.layers.ConvLSTM1D(2, 2, name="my_rnn")(inp))
    model = keras.Model(inp, keras.layers.Dense(2)(x))
    model.save(tmp_path / "rnn.keras")
    args = ["load", tmp_path / "rnn.keras", tmp_path / "x.f32", tmp_path / "y.f32", 1, 4, 3, 2]
    result = subprocess.run([find_binary("keras_archive_interop"), *map(str, args)], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 1
    assert "my_rnn" in result.stderr and "ConvLSTM1D" in result.stderr, result.stderr


class EmbeddingSharedWeights(keras.layers.Layer):
    """The Transformer example's custom layer, as a Python Keras user would write it: int ids embed
    (times sqrt(hidden)), float hidden states project to logits through the same matrix."""

    def __init__(self, vocab_size, hidden_size, **kwargs):
        super().__init__(**kwargs)
        self.vocab_size, self.hidden_size = vocab_size, hidden_size

    def build(self, input_shape):
        self.shared_weights = self.add_weight(shape=(self.vocab_size, self.hidden_size), initializer="zeros")

    def call(self, x):
        if "int" in str(x.dtype):
            return keras.ops.take(self.shared_weights, x, axis=0) * self.hidden_size ** 0.5
        return keras.ops.matmul(x, keras.ops.transpose(self.shared_weights))

    def compute_output_spec(self, x):
        if "int" in str(x.dtype):
            return keras.KerasTensor((*x.shape, self.hidden_size), dtype="float32")
        return keras.KerasTensor((*x.shape[:-1], self.vocab_size), dtype="float32")

    def get_config(self):
        return {**super().get_config(), "vocab_size": self.vocab_size, "hidden_size": self.hidden_size}


def _both_ways_on_ids(tmp_path, kind, custom_objects=None):
    """kerascpp's archive of a model on int32 ids loads in Keras and predicts the same; Keras saves it
    again, and kerascpp loads that archive and predicts the same. Returns Keras' model and the config
    kerascpp read back."""
    _tool("save", kind, tmp_path)
    shapes = json.loads((tmp_path / "shapes.json").read_text())
    paths = [tmp_path / f"ids{i}.i32" for i in range(shapes["inputs"])]
    ids = [np.fromfile(path, dtype="<i4").reshape(shapes["ids"]) for path in paths]
    y = _read(tmp_path / "y.f32", shapes["y"])
    model = keras.models.load_model(tmp_path / "model.keras", custom_objects=custom_objects)
    np.testing.assert_allclose(model.predict(ids, verbose=0), y, rtol=1e-5, atol=1e-5)
    model.save(tmp_path / "keras.keras")
    config = json.loads(_tool("load_ids", tmp_path / "keras.keras", tmp_path / "y2.f32", *shapes["ids"], *paths))
    np.testing.assert_allclose(_read(tmp_path / "y2.f32", y.shape), y, rtol=1e-5, atol=1e-5)
    return model, config


def test_transformer_with_a_custom_layer_both_ways(tmp_path):
    """The custom layer goes to Keras in custom_objects and comes back registered in kerascpp."""
    model, config = _both_ways_on_ids(tmp_path, "transformer",
                                      {"EmbeddingSharedWeights": EmbeddingSharedWeights})
    assert any(isinstance(layer, EmbeddingSharedWeights) for layer in model.layers)
    assert "EmbeddingSharedWeights" in {layer["class_name"] for layer in config["config"]["layers"]}


def test_ncf_both_ways(tmp_path):
    """The NCF example's NeuMF: its four embedding tables, Multiply and the two id inputs by name."""
    model, config = _both_ways_on_ids(tmp_path, "ncf")
    assert [t.name for t in model.inputs] == ["user_id", "item_id"]
    assert sum(isinstance(layer, keras.layers.Embedding) for layer in model.layers) == 4
    assert {"Multiply", "Concatenate", "Embedding"} <= {layer["class_name"] for layer in config["config"]["layers"]}
