"""The Keras side of the conformance suite (tests/python/test_keras_conformance.py).

CASES maps a case id to (category, Keras name, builder). A builder makes a tiny compiled Keras
model around the name under test, with arguments other than Keras' defaults, and the fixed data it
is checked on. Several cases may test one name ("SGD", "SGD.options"). The suite runs the cases of
every name docs/catalogue.md marks supported; the others wait here for their layer to land.

Run as a program, this module does one share of the Keras work in its own process (the suite
starts two, one per core; Keras on JAX is the slow half of the suite):
  python keras_conformance_cases.py generate <root> <case id>...
      for each case: <root>/<id>/model.keras (compiled, before training), the inputs and target
      (raw little-endian float32/int32), the first train_on_batch call's logs (test_on_batch's
      for the metrics' cases) and the weights after `steps` calls; case.json says which file holds what.
  python keras_conformance_cases.py check <root> <case id>...
      Keras' predictions from model.keras (keras_pred.npy) and from what kerascpp saved,
      kerascpp.keras (reloaded.npy).
"""
import json
import os
import sys
import zlib

os.environ.setdefault("KERAS_BACKEND", "jax")
import keras  # noqa: E402
import numpy as np  # noqa: E402

L = keras.layers


def _numpy_random_initial_values():
    """Draws initial weights with numpy: JAX compiles its random kernels anew for every weight
    shape, which made building the models most of the suite's time. The values only need to be
    fixed and of a sensible scale (the test compares kerascpp and Keras from the same weights)."""
    from keras.src.backend.jax import random as jax_random
    rng = np.random.default_rng(0)

    def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
        return rng.uniform(minval, maxval, shape).astype(dtype or "float32")

    def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
        return (mean + stddev * rng.standard_normal(shape)).astype(dtype or "float32")

    def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
        return (mean + stddev * np.clip(rng.standard_normal(shape), -2.0, 2.0)).astype(dtype or "float32")

    jax_random.uniform, jax_random.normal, jax_random.truncated_normal = uniform, normal, truncated_normal


if keras.backend.backend() == "jax":
    _numpy_random_initial_values()


class Case:
    """A compiled model, its inputs, its target, how many training steps; `train` is True or why not.
    `evaluate`: compare test_on_batch's logs instead of training (a metric does not change the step)."""

    def __init__(self, model, x, y, steps=1, train=True, evaluate=False):
        self.model, self.x, self.y, self.steps, self.train = model, x if isinstance(x, list) else [x], y, steps, train
        self.evaluate = evaluate


CASES = {}


def case(category, name, variant=None):
    def register(fn):
        CASES[f"{category}.{name}" + ("." + variant if variant else "")] = (category, name, fn)
        return fn
    return register


def _rng(case_id):
    return np.random.default_rng(zlib.crc32(case_id.encode()))


def _uniform(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype("float32")


def _compile(model, optimizer=None, loss="mse", metrics=None):
    model.compile(optimizer=optimizer or keras.optimizers.SGD(0.1), loss=loss, metrics=metrics, jit_compile=True)
    return model


def _fit_target(rng, model, x):
    return _uniform(rng, (x[0].shape[0],) + tuple(model.output.shape[1:]))


# ---- layers ----
N = 5  # examples per batch


def _layer_case(rng, layer, shape, pre=True, head=True, train=True, n_inputs=1, dtype="float32", x=None,
                positional=False):
    """Input(s) -> [Dense] -> layer -> [Flatten -> Dense(2)], trained with SGD on the mean squared
    error. `pre` puts a Dense before the layer so the layer's own backward carries a gradient."""
    inputs = [keras.Input(s, dtype=dtype) for s in (shape if n_inputs > 1 else [shape])]
    hidden = [L.Dense(t.shape[-1], activation="tanh")(t) if pre else t for t in inputs]
    out = layer(*hidden) if positional else layer(hidden if n_inputs > 1 else hidden[0])
    if head:
        out = L.Dense(2)(L.Flatten()(out))
    model = _compile(keras.Model(inputs, out))
    if x is None:
        shapes = [(N,) + tuple(s) for s in (shape if n_inputs > 1 else [shape])]
        x = [rng.integers(0, 10, s).astype("int32") if dtype == "int32" else _uniform(rng, s) for s in shapes]
    return Case(model, x, _fit_target(rng, model, x if isinstance(x, list) else [x]), train=train)


RANDOM_IN_TRAINING = "random in training (the round trip and inference are checked)"


def _layer(name, shape, make, **kw):
    case("layers", name)(lambda rng: _layer_case(rng, make(), shape, **kw))


_layer("Activation", (4,), lambda: L.Activation("gelu"))
_layer("ActivityRegularization", (4,), lambda: L.ActivityRegularization(l1=0.01, l2=0.02))
_layer("AdaptiveAveragePooling1D", (8, 3), lambda: L.AdaptiveAveragePooling1D(3))
_layer("AdaptiveAveragePooling2D", (6, 7, 2), lambda: L.AdaptiveAveragePooling2D((2, 3)))
_layer("AdaptiveAveragePooling3D", (4, 4, 5, 2), lambda: L.AdaptiveAveragePooling3D((2, 2, 3)))
_layer("AdaptiveMaxPooling1D", (8, 3), lambda: L.AdaptiveMaxPooling1D(3))
_layer("AdaptiveMaxPooling2D", (6, 7, 2), lambda: L.AdaptiveMaxPooling2D((2, 3)))
_layer("AdaptiveMaxPooling3D", (4, 4, 5, 2), lambda: L.AdaptiveMaxPooling3D((2, 2, 3)))
for _merge, _make in [("Add", L.Add), ("Average", L.Average), ("Maximum", L.Maximum), ("Minimum", L.Minimum),
                      ("Multiply", L.Multiply), ("Subtract", L.Subtract),
                      ("Concatenate", lambda: L.Concatenate(axis=1))]:
    _layer(_merge, [(3, 4), (3, 4)], _make, n_inputs=2)
_layer("Dot", [(3, 4), (3, 4)], lambda: L.Dot(axes=1, normalize=True), n_inputs=2)
_layer("Attention", [(4, 5), (3, 5)], lambda: L.Attention(use_scale=True), n_inputs=2)
_layer("AdditiveAttention", [(4, 5), (3, 5)], lambda: L.AdditiveAttention(use_scale=False), n_inputs=2)
_layer("AlphaDropout", (4,), lambda: L.AlphaDropout(0.2), train=RANDOM_IN_TRAINING)
_layer("AveragePooling1D", (7, 3), lambda: L.AveragePooling1D(3, strides=2, padding="same"))
_layer("AveragePooling2D", (5, 6, 2), lambda: L.AveragePooling2D((2, 3), strides=(1, 2)))
_layer("AveragePooling3D", (3, 4, 4, 2), lambda: L.AveragePooling3D(2, strides=1, padding="same"))
_layer("BatchNormalization", (3, 4), lambda: L.BatchNormalization(momentum=0.7, epsilon=0.01))
case("layers", "BatchNormalization", "center")(lambda rng: _layer_case(rng, L.BatchNormalization(center=False), (4,)))
_layer("Bidirectional", (4, 3), lambda: L.Bidirectional(L.LSTM(3, return_sequences=True), merge_mode="sum"))
_layer("Conv1D", (9, 3), lambda: L.Conv1D(4, 3, strides=2, padding="causal", activation="relu"))
case("layers", "Conv1D", "dilation")(lambda rng: _layer_case(rng, L.Conv1D(4, 3, dilation_rate=2), (9, 3)))
_layer("Conv1DTranspose", (5, 2), lambda: L.Conv1DTranspose(3, 3, strides=2, padding="same"))
_layer("Conv2D", (6, 5, 2), lambda: L.Conv2D(3, (3, 2), strides=(2, 1), padding="same", activation="relu"))
_layer("Conv2DTranspose", (3, 4, 2), lambda: L.Conv2DTranspose(3, 3, strides=2))
_layer("Conv3D", (3, 4, 4, 2), lambda: L.Conv3D(3, 2, strides=(1, 2, 1), padding="same"))
_layer("Conv3DTranspose", (2, 3, 3, 2), lambda: L.Conv3DTranspose(2, 2, strides=2))
_layer("ConvLSTM1D", (3, 5, 2), lambda: L.ConvLSTM1D(3, 2, padding="same"))
_layer("ConvLSTM2D", (3, 4, 4, 2), lambda: L.ConvLSTM2D(2, 2, return_sequences=True))
_layer("ConvLSTM3D", (2, 3, 3, 3, 1), lambda: L.ConvLSTM3D(2, 2))
_layer("Cropping1D", (7, 3), lambda: L.Cropping1D((1, 2)))
_layer("Cropping2D", (5, 6, 2), lambda: L.Cropping2D(((1, 0), (0, 2))))
_layer("Cropping3D", (4, 4, 4, 2), lambda: L.Cropping3D(((1, 0), (0, 1), (1, 1))))
_layer("Dense", (3, 5), lambda: L.Dense(4, activation="tanh", use_bias=False))
_layer("DepthwiseConv1D", (6, 3), lambda: L.DepthwiseConv1D(3, depth_multiplier=2, padding="same"))
_layer("DepthwiseConv2D", (5, 5, 2), lambda: L.DepthwiseConv2D((3, 2), depth_multiplier=2, padding="same"))
_layer("Dropout", (4,), lambda: L.Dropout(0.3), train=RANDOM_IN_TRAINING)
_layer("ELU", (4,), lambda: L.ELU(alpha=0.5))
_layer("EinsumDense", (3, 5), lambda: L.EinsumDense("abc,cd->abd", output_shape=(3, 4), bias_axes="d"))
_layer("Embedding", (6,), lambda: L.Embedding(10, 4), pre=False, dtype="int32")
_layer("Flatten", (3, 4), L.Flatten)
_layer("GRU", (4, 3), lambda: L.GRU(3, return_sequences=True, go_backwards=True))
_layer("GaussianDropout", (4,), lambda: L.GaussianDropout(0.3), train=RANDOM_IN_TRAINING)
_layer("GaussianNoise", (4,), lambda: L.GaussianNoise(0.2), train=RANDOM_IN_TRAINING)
_layer("GlobalAveragePooling1D", (5, 3), lambda: L.GlobalAveragePooling1D(keepdims=True))
_layer("GlobalAveragePooling2D", (4, 4, 3), L.GlobalAveragePooling2D)
_layer("GlobalAveragePooling3D", (3, 3, 3, 2), L.GlobalAveragePooling3D)
_layer("GlobalMaxPooling1D", (5, 3), L.GlobalMaxPooling1D)
_layer("GlobalMaxPooling2D", (4, 4, 3), lambda: L.GlobalMaxPooling2D(keepdims=True))
_layer("GlobalMaxPooling3D", (3, 3, 3, 2), L.GlobalMaxPooling3D)
_layer("GroupNormalization", (4, 6), lambda: L.GroupNormalization(groups=2, epsilon=1e-2))
_layer("GroupQueryAttention", [(4, 6), (3, 6)], lambda: L.GroupQueryAttention(2, 4, 2), n_inputs=2,
       positional=True)
_layer("MultiHeadAttention", [(4, 6), (3, 6)], lambda: L.MultiHeadAttention(2, 3, use_bias=False), n_inputs=2,
       positional=True)
_layer("Identity", (4,), L.Identity)
_layer("InputLayer", (4,), lambda: L.Dense(3))
_layer("LSTM", (4, 3), lambda: L.LSTM(3, unit_forget_bias=False, return_sequences=True))
_layer("LayerNormalization", (3, 5), lambda: L.LayerNormalization(epsilon=1e-2, center=False))
_layer("LeakyReLU", (4,), lambda: L.LeakyReLU(negative_slope=0.1))
_layer("MaxPooling1D", (7, 3), lambda: L.MaxPooling1D(3, strides=2, padding="same"))
_layer("MaxPooling2D", (5, 6, 2), lambda: L.MaxPooling2D((2, 3), strides=(1, 2)))
_layer("MaxPooling3D", (3, 4, 4, 2), lambda: L.MaxPooling3D(2, strides=1, padding="same"))
_layer("PReLU", (3, 4), lambda: L.PReLU(alpha_initializer="ones", shared_axes=[1]))
_layer("Permute", (3, 4), lambda: L.Permute((2, 1)))
_layer("RMSNormalization", (3, 5), lambda: L.RMSNormalization(epsilon=1e-3))
_layer("ReLU", (4,), lambda: L.ReLU(max_value=1.5, negative_slope=0.1, threshold=0.2))
_layer("RepeatVector", (4,), lambda: L.RepeatVector(3))
_layer("Reshape", (3, 4), lambda: L.Reshape((2, 6)))
_layer("ReversibleEmbedding", (6,), lambda: L.ReversibleEmbedding(10, 4, tie_weights=False), pre=False,
       dtype="int32")
_layer("SeparableConv1D", (6, 3), lambda: L.SeparableConv1D(4, 3, depth_multiplier=2, padding="same"))
_layer("SeparableConv2D", (5, 5, 2), lambda: L.SeparableConv2D(4, 3, activation="relu"))
_layer("SimpleRNN", (4, 3), lambda: L.SimpleRNN(3, activation="relu", return_sequences=True))
_layer("RNN", (4, 3), lambda: L.RNN(L.LSTMCell(3), return_sequences=True))
_layer("GRUCell", (4, 3), lambda: L.RNN(L.GRUCell(3, reset_after=True)))
_layer("LSTMCell", (4, 3), lambda: L.RNN(L.LSTMCell(3), go_backwards=True))
_layer("SimpleRNNCell", (4, 3), lambda: L.RNN(L.SimpleRNNCell(3, activation="relu")))
_layer("StackedRNNCells", (4, 3), lambda: L.RNN(L.StackedRNNCells([L.SimpleRNNCell(3), L.GRUCell(2)])))
_layer("Softmax", (3, 4), lambda: L.Softmax(axis=1))
_layer("SpatialDropout1D", (4, 3), lambda: L.SpatialDropout1D(0.3), train=RANDOM_IN_TRAINING)
_layer("SpatialDropout2D", (3, 3, 2), lambda: L.SpatialDropout2D(0.3), train=RANDOM_IN_TRAINING)
_layer("SpatialDropout3D", (2, 2, 2, 2), lambda: L.SpatialDropout3D(0.3), train=RANDOM_IN_TRAINING)
_layer("SpectralNormalization", (4,), lambda: L.SpectralNormalization(L.Dense(3), power_iterations=2))
_layer("TimeDistributed", (4, 5), lambda: L.TimeDistributed(L.Dense(3)))
_layer("UnitNormalization", (3, 4), lambda: L.UnitNormalization())
case("layers", "UnitNormalization", "axis")(lambda rng: _layer_case(rng, L.UnitNormalization(axis=1), (3, 4)))
_layer("UpSampling1D", (3, 2), lambda: L.UpSampling1D(2))
_layer("UpSampling2D", (3, 3, 2), lambda: L.UpSampling2D((2, 1), interpolation="bilinear"))
_layer("UpSampling3D", (2, 2, 2, 2), lambda: L.UpSampling3D((1, 2, 2)))
_layer("ZeroPadding1D", (3, 2), lambda: L.ZeroPadding1D((1, 2)))
_layer("ZeroPadding2D", (3, 3, 2), lambda: L.ZeroPadding2D(((1, 0), (2, 1))))
_layer("ZeroPadding3D", (2, 2, 2, 2), lambda: L.ZeroPadding3D(((0, 1), (1, 0), (1, 1))))
# Preprocessing layers: first, on the raw input (Keras gives them no weights to train).
_layer("Rescaling", (4,), lambda: L.Rescaling(0.5, offset=0.1), pre=False)
_layer("Normalization", (3,), lambda: L.Normalization(mean=[0.1, -0.2, 0.3], variance=[1.5, 0.5, 2.0]), pre=False)
_layer("Resizing", (3, 3, 2), lambda: L.Resizing(4, 6), pre=False)
_layer("CenterCrop", (5, 4, 2), lambda: L.CenterCrop(3, 2), pre=False)
_layer("RandomFlip", (3, 3, 2), lambda: L.RandomFlip("horizontal"), pre=False, train=RANDOM_IN_TRAINING)
_layer("RandomRotation", (4, 5, 2), lambda: L.RandomRotation(0.1, fill_mode="constant"), pre=False,
       train=RANDOM_IN_TRAINING)
_layer("RandomZoom", (4, 5, 2), lambda: L.RandomZoom(0.2, 0.1), pre=False, train=RANDOM_IN_TRAINING)
_layer("RandomTranslation", (4, 5, 2), lambda: L.RandomTranslation(0.1, 0.2, fill_mode="wrap"), pre=False,
       train=RANDOM_IN_TRAINING)
_layer("CategoryEncoding", (4,), lambda: L.CategoryEncoding(num_tokens=10, output_mode="count"), pre=False,
       dtype="int32")
_layer("Discretization", (4,), lambda: L.Discretization(bin_boundaries=[0.2, 0.5, 0.8], output_mode="one_hot"),
       pre=False)


@case("layers", "Masking")
def _masking(rng):  # whole time steps equal to the mask value are skipped by the LSTM after it
    x = _uniform(rng, (N, 4, 3))
    x[0, 1], x[2, 3], x[3, 0] = 0.0, 0.0, 0.0
    inp = keras.Input((4, 3))
    out = L.Dense(2)(L.LSTM(3)(L.Masking(0.0)(inp)))
    model = _compile(keras.Model(inp, out))
    return Case(model, [x], _fit_target(rng, model, [x]))


# ---- activations: Dense(activation=name) ----
def _activation_case(rng, name):
    inp = keras.Input((6,))
    if name == "glu":  # glu halves its axis: only as a layer of its own, and last (Keras' Activation
        out = L.Activation("glu")(L.Dense(6)(inp))  # reports the unhalved shape to a layer after it)
    else:
        out = L.Dense(2)(L.Dense(5, activation=name)(inp))
    model = _compile(keras.Model(inp, out))
    x = _uniform(rng, (N, 6), -2.0, 2.0)
    return Case(model, [x], _uniform(rng, (N, 3 if name == "glu" else 2)))


ACTIVATIONS = ["celu", "elu", "exponential", "gelu", "glu", "hard_shrink", "hard_sigmoid", "hard_silu", "hard_tanh",
               "leaky_relu", "linear", "log_sigmoid", "log_softmax", "mish", "relu", "relu6", "selu", "sigmoid",
               "silu", "soft_shrink", "softmax", "softplus", "softsign", "sparse_plus", "sparse_sigmoid", "sparsemax",
               "squareplus", "tanh", "tanh_shrink"]  # threshold has no defaults: not usable by name
for _name in ACTIVATIONS:
    case("activations", _name)(lambda rng, _n=_name: _activation_case(rng, _n))


# ---- losses and metrics: a small Dense model compiled with the loss or metric ----
def _targets(rng, kind, shape):
    """Targets the loss/metric family expects, for outputs of `shape`."""
    n, k = shape[0], shape[-1]
    if kind == "binary":
        return (rng.uniform(size=shape) < 0.5).astype("float32")
    if kind == "onehot":
        return np.eye(k, dtype="float32")[rng.integers(0, k, n)]
    if kind == "sparse":
        return rng.integers(0, k, n).astype("int32")
    if kind == "pm1":
        return np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0).astype("float32")
    if kind == "positive":
        return _uniform(rng, shape, 0.2, 2.0)
    if kind == "distribution":
        p = rng.uniform(0.1, 1.0, shape)
        return (p / p.sum(-1, keepdims=True)).astype("float32")
    return _uniform(rng, shape)


_ACTIVATION_OF = {"binary": "sigmoid", "onehot": "softmax", "sparse": "softmax", "positive": "softplus",
                  "distribution": "softmax"}


def _head_case(rng, kind, units=3, loss="mse", metrics=None, activation=None, n=8, evaluate=False):
    inp = keras.Input((4,))
    act = activation if activation is not None else _ACTIVATION_OF.get(kind)
    model = _compile(keras.Model(inp, L.Dense(units, activation=act)(L.Dense(5, activation="tanh")(inp))),
                     loss=loss, metrics=metrics)
    x = _uniform(rng, (n, 4), -2.0, 2.0)
    return Case(model, [x], _targets(rng, kind, (n, units)), evaluate=evaluate)


LOSSES = {
    "BinaryCrossentropy": ("binary", lambda: keras.losses.BinaryCrossentropy(from_logits=True, label_smoothing=0.1),
                           "linear"),
    "BinaryFocalCrossentropy": ("binary", lambda: keras.losses.BinaryFocalCrossentropy(
        apply_class_balancing=True, alpha=0.3, gamma=1.5), None),
    "CategoricalCrossentropy": ("onehot", lambda: keras.losses.CategoricalCrossentropy(
        from_logits=True, label_smoothing=0.1), "linear"),
    "CategoricalFocalCrossentropy": ("onehot", lambda: keras.losses.CategoricalFocalCrossentropy(alpha=0.3, gamma=1.5),
                                     None),
    "CategoricalGeneralizedCrossEntropy": ("sparse", lambda: keras.losses.CategoricalGeneralizedCrossEntropy(q=0.7),
                                           None),
    "CategoricalHinge": ("onehot", lambda: keras.losses.CategoricalHinge(), "linear"),
    "Circle": ("sparse", lambda: keras.losses.Circle(gamma=20.0, margin=0.3), "linear"),
    "CosineSimilarity": ("regression", lambda: keras.losses.CosineSimilarity(), None),
    "Dice": ("binary", lambda: keras.losses.Dice(), None),
    "Hinge": ("pm1", lambda: keras.losses.Hinge(), None),
    # Keras 3.15's Huber.get_config leaves delta out, so a saved Huber is always delta=1.
    "Huber": ("regression", lambda: keras.losses.Huber(), None),
    "KLDivergence": ("distribution", lambda: keras.losses.KLDivergence(), None),
    "LogCosh": ("regression", lambda: keras.losses.LogCosh(), None),
    "MeanAbsoluteError": ("regression", lambda: keras.losses.MeanAbsoluteError(), None),
    "MeanAbsolutePercentageError": ("positive", lambda: keras.losses.MeanAbsolutePercentageError(), None),
    "MeanSquaredError": ("regression", lambda: keras.losses.MeanSquaredError(), None),
    "MeanSquaredLogarithmicError": ("positive", lambda: keras.losses.MeanSquaredLogarithmicError(), None),
    "Poisson": ("positive", lambda: keras.losses.Poisson(), None),
    "SparseCategoricalCrossentropy": ("sparse", lambda: keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                                      "linear"),
    "SquaredHinge": ("pm1", lambda: keras.losses.SquaredHinge(), None),
    "Tversky": ("binary", lambda: keras.losses.Tversky(alpha=0.3, beta=0.7), None),
}
for _name, (_kind, _make, _act) in LOSSES.items():
    case("losses", _name)(lambda rng, _k=_kind, _m=_make, _a=_act: _head_case(rng, _k, loss=_m(), activation=_a))


case("losses", "MeanSquaredError", "sum")(
    lambda rng: _head_case(rng, "regression", loss=keras.losses.MeanSquaredError(reduction="sum")))


@case("losses", "CTC")
def _ctc(rng):  # 6 steps of 5 classes (class 0 is the blank), labels of up to 3 classes
    inp = keras.Input((6, 4))
    model = _compile(keras.Model(inp, L.Dense(5, activation="softmax")(inp)), loss=keras.losses.CTC())
    x = _uniform(rng, (N, 6, 4), -2.0, 2.0)
    return Case(model, [x], rng.integers(1, 5, (N, 3)).astype("int32"))


M = keras.metrics
# name -> (target kind, metric, loss, output units). Not Mean and Sum: Keras' compile() cannot take them.
METRICS = {
    "AUC": ("binary", lambda: M.AUC(num_thresholds=50, curve="PR"), "binary_crossentropy", 3),
    "Accuracy": ("binary", lambda: M.Accuracy(), "binary_crossentropy", 3),
    "BinaryAccuracy": ("binary", lambda: M.BinaryAccuracy(threshold=0.3), "binary_crossentropy", 3),
    "BinaryCrossentropy": ("binary", lambda: M.BinaryCrossentropy(label_smoothing=0.1), "binary_crossentropy", 3),
    "BinaryIoU": ("binary", lambda: M.BinaryIoU(target_class_ids=[1], threshold=0.4), "binary_crossentropy", 3),
    "CategoricalAccuracy": ("onehot", lambda: M.CategoricalAccuracy(), "categorical_crossentropy", 3),
    "CategoricalCrossentropy": ("onehot", lambda: M.CategoricalCrossentropy(label_smoothing=0.1),
                                "categorical_crossentropy", 3),
    "CategoricalHinge": ("onehot", lambda: M.CategoricalHinge(), "categorical_crossentropy", 3),
    "ConcordanceCorrelation": ("regression", lambda: M.ConcordanceCorrelation(), "mse", 3),
    "CosineSimilarity": ("regression", lambda: M.CosineSimilarity(), "mse", 3),
    "F1Score": ("binary", lambda: M.F1Score(average="macro", threshold=0.5), "binary_crossentropy", 3),
    "FBetaScore": ("binary", lambda: M.FBetaScore(average="micro", beta=2.0, threshold=0.4), "binary_crossentropy", 3),
    "FalseNegatives": ("binary", lambda: M.FalseNegatives(thresholds=0.3), "binary_crossentropy", 3),
    "FalsePositives": ("binary", lambda: M.FalsePositives(thresholds=0.6), "binary_crossentropy", 3),
    "Hinge": ("pm1", lambda: M.Hinge(), "hinge", 3),
    "IoU": ("onehot", lambda: M.IoU(3, [0, 2], sparse_y_true=False, sparse_y_pred=False), "categorical_crossentropy",
            3),
    "KLDivergence": ("distribution", lambda: M.KLDivergence(), "kl_divergence", 3),
    "LogCoshError": ("regression", lambda: M.LogCoshError(), "mse", 3),
    "MeanAbsoluteError": ("regression", lambda: M.MeanAbsoluteError(), "mse", 3),
    "MeanAbsolutePercentageError": ("positive", lambda: M.MeanAbsolutePercentageError(), "mse", 3),
    "MeanIoU": ("onehot", lambda: M.MeanIoU(3, sparse_y_true=False, sparse_y_pred=False), "categorical_crossentropy",
                3),
    "MeanMetricWrapper": ("regression", lambda: M.MeanMetricWrapper(keras.losses.mean_absolute_error, name="mmw"),
                          "mse", 3),
    "MeanSquaredError": ("regression", lambda: M.MeanSquaredError(), "mse", 3),
    "MeanSquaredLogarithmicError": ("positive", lambda: M.MeanSquaredLogarithmicError(), "mse", 3),
    "OneHotIoU": ("onehot", lambda: M.OneHotIoU(3, [1, 2]), "categorical_crossentropy", 3),
    "OneHotMeanIoU": ("onehot", lambda: M.OneHotMeanIoU(3), "categorical_crossentropy", 3),
    "PearsonCorrelation": ("regression", lambda: M.PearsonCorrelation(), "mse", 3),
    "Poisson": ("positive", lambda: M.Poisson(), "mse", 3),
    "Precision": ("binary", lambda: M.Precision(thresholds=0.4), "binary_crossentropy", 3),
    "PrecisionAtRecall": ("binary", lambda: M.PrecisionAtRecall(0.6, num_thresholds=50), "binary_crossentropy", 3),
    "R2Score": ("regression", lambda: M.R2Score(), "mse", 3),
    "Recall": ("binary", lambda: M.Recall(thresholds=0.6), "binary_crossentropy", 3),
    "RecallAtPrecision": ("binary", lambda: M.RecallAtPrecision(0.5, num_thresholds=50), "binary_crossentropy", 3),
    "RootMeanSquaredError": ("regression", lambda: M.RootMeanSquaredError(), "mse", 3),
    "SensitivityAtSpecificity": ("binary", lambda: M.SensitivityAtSpecificity(0.5, num_thresholds=50),
                                 "binary_crossentropy", 3),
    "SparseCategoricalAccuracy": ("sparse", lambda: M.SparseCategoricalAccuracy(), "sparse_categorical_crossentropy",
                                  3),
    "SparseCategoricalCrossentropy": ("sparse", lambda: M.SparseCategoricalCrossentropy(),
                                      "sparse_categorical_crossentropy", 3),
    "SparseTopKCategoricalAccuracy": ("sparse", lambda: M.SparseTopKCategoricalAccuracy(k=2),
                                      "sparse_categorical_crossentropy", 4),
    "SpecificityAtSensitivity": ("binary", lambda: M.SpecificityAtSensitivity(0.5, num_thresholds=50),
                                 "binary_crossentropy", 3),
    "SquaredHinge": ("pm1", lambda: M.SquaredHinge(), "hinge", 3),
    "TopKCategoricalAccuracy": ("onehot", lambda: M.TopKCategoricalAccuracy(k=2), "categorical_crossentropy", 4),
    "TrueNegatives": ("binary", lambda: M.TrueNegatives(thresholds=0.6), "binary_crossentropy", 3),
    "TruePositives": ("binary", lambda: M.TruePositives(), "binary_crossentropy", 3),
}
# Keras' string names of metrics: compile_config keeps them as given, so a case compiled with one
# tests the name and the default arguments; the object-only metrics are compiled as objects.
METRIC_NAMES = {"AUC": "auc", "BinaryAccuracy": "binary_accuracy", "BinaryCrossentropy": "binary_crossentropy",
                "CategoricalAccuracy": "categorical_accuracy", "CategoricalCrossentropy": "categorical_crossentropy",
                "CategoricalHinge": "categorical_hinge", "ConcordanceCorrelation": "concordance_correlation",
                "CosineSimilarity": "cosine_similarity", "FalseNegatives": "false_negatives",
                "FalsePositives": "false_positives", "Hinge": "hinge", "KLDivergence": "kl_divergence",
                "LogCoshError": "log_cosh_error", "MeanAbsoluteError": "mae", "MeanAbsolutePercentageError": "mape",
                "MeanSquaredError": "mse", "MeanSquaredLogarithmicError": "msle",
                "PearsonCorrelation": "pearson_correlation", "Poisson": "poisson", "Precision": "precision",
                "R2Score": "r2_score", "Recall": "recall", "RootMeanSquaredError": "root_mean_squared_error",
                "SparseCategoricalAccuracy": "sparse_categorical_accuracy",
                "SparseCategoricalCrossentropy": "sparse_categorical_crossentropy",
                "SparseTopKCategoricalAccuracy": "sparse_top_k_categorical_accuracy", "SquaredHinge": "squared_hinge",
                "TopKCategoricalAccuracy": "top_k_categorical_accuracy", "TrueNegatives": "true_negatives",
                "TruePositives": "true_positives"}
for _name, (_kind, _make, _loss, _units) in METRICS.items():
    if _name in METRIC_NAMES:
        case("metrics", _name, "by_name")(lambda rng, _k=_kind, _n=METRIC_NAMES[_name], _l=_loss, _u=_units: _head_case(
            rng, _k, units=_u, loss=_l, metrics=[_n], evaluate=True))
    case("metrics", _name)(lambda rng, _k=_kind, _m=_make, _l=_loss, _u=_units: _head_case(
        rng, _k, units=_u, loss=_l, metrics=[_m()], evaluate=True))


# ---- optimizers: two steps (the second uses the state the first left) ----
O = keras.optimizers


def _optimizer_model(optimizer):
    inp = keras.Input((4,))
    return _compile(keras.Model(inp, L.Dense(2)(L.Dense(3, activation="tanh")(inp))), optimizer=optimizer)


OPTIMIZERS = {
    "SGD": lambda: O.SGD(0.05, momentum=0.9, nesterov=True),
    "SGD.options": lambda: O.SGD(0.05, momentum=0.5, weight_decay=0.1, clipvalue=0.05),
    "SGD.ema": lambda: O.SGD(0.05, use_ema=True, ema_momentum=0.9, ema_overwrite_frequency=2),
    "SGD.accumulation": lambda: O.SGD(0.05, gradient_accumulation_steps=2),
    "Adam": lambda: O.Adam(0.01, beta_1=0.8, beta_2=0.99, epsilon=1e-6),
    "Adam.clipnorm": lambda: O.Adam(0.01, clipnorm=0.05),
    "AdamW": lambda: O.AdamW(0.01, weight_decay=0.05),
    "Adagrad": lambda: O.Adagrad(0.05, initial_accumulator_value=0.2),
    "RMSprop": lambda: O.RMSprop(0.01, rho=0.8),
    "Nadam": lambda: O.Nadam(0.01, beta_1=0.85),
    "Adamax": lambda: O.Adamax(0.02, beta_2=0.99),
    "Adadelta": lambda: O.Adadelta(1.0, rho=0.9),
    "Ftrl": lambda: O.Ftrl(0.05, learning_rate_power=-0.6, l1_regularization_strength=0.01,
                           l2_regularization_strength=0.02),
    "Lion": lambda: O.Lion(0.01, beta_1=0.8),
    "Lamb": lambda: O.Lamb(0.01, beta_2=0.99),
    "LossScaleOptimizer": lambda: O.LossScaleOptimizer(O.SGD(0.1), initial_scale=128.0),
    "ScheduleFreeAdamW": lambda: O.ScheduleFreeAdamW(0.01, warmup_steps=1),
    "Adafactor": lambda: O.Adafactor(0.05, relative_step=False),
    "Muon": lambda: O.Muon(0.02, adam_lr_ratio=0.5),
}
for _id, _make in OPTIMIZERS.items():
    def _opt(rng, _m=_make):
        model = _optimizer_model(_m())
        x = _uniform(rng, (N, 4), -2.0, 2.0)
        return Case(model, [x], _fit_target(rng, model, [x]), steps=2)
    _name, _, _variant = _id.partition(".")
    case("optimizers", _name, _variant or None)(_opt)


@case("optimizers", "MultiOptimizer")
def _multi_optimizer(rng):
    inp = keras.Input((4,))
    first, second = L.Dense(3, activation="tanh", name="first"), L.Dense(2, name="second")
    model = keras.Model(inp, second(first(inp)))
    _compile(model, optimizer=O.MultiOptimizer(O.OptimizerMap(O.SGD(0.1), {"first/.*": O.Adam(0.01)})))
    x = _uniform(rng, (N, 4), -2.0, 2.0)
    return Case(model, [x], _fit_target(rng, model, [x]), steps=2)


# ---- what a worker process does ----
def _write(path, array):
    array = np.asarray(array)
    dtype = "<i4" if np.issubdtype(array.dtype, np.integer) else "<f4"
    np.ascontiguousarray(array, dtype=dtype).tofile(path)
    return {"file": os.path.basename(path), "shape": list(array.shape),
            "dtype": "int32" if dtype == "<i4" else "float32"}


def generate(root, case_id):
    category, name, build = CASES[case_id]
    d = os.path.join(root, case_id)
    os.makedirs(d, exist_ok=True)
    keras.utils.set_random_seed(zlib.crc32(case_id.encode()) % 1000)
    c = build(_rng(case_id))
    c.model.save(os.path.join(d, "model.keras"))
    meta = {"inputs": [_write(os.path.join(d, f"x{i}.bin"), x) for i, x in enumerate(c.x)],
            "y": _write(os.path.join(d, "y.bin"), c.y), "evaluate": c.evaluate,
            "steps": c.steps if c.train is True and not c.evaluate else 0,
            "train_note": None if c.train is True else c.train}
    meta["keras_logs"] = None
    if c.evaluate:
        logs = c.model.test_on_batch(c.x if len(c.x) > 1 else c.x[0], c.y, return_dict=True)
        meta["keras_logs"] = {k: float(v) for k, v in logs.items()}
    for step in range(meta["steps"]):  # the first step's logs are those of the weights before it
        logs = c.model.train_on_batch(c.x if len(c.x) > 1 else c.x[0], c.y, return_dict=True)
        if step == 0:
            meta["keras_logs"] = {k: float(v) for k, v in logs.items()}
    np.savez(os.path.join(d, "keras_weights.npz"), *c.model.get_weights())
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(meta, f)


def check(root, case_id):
    """Keras' predictions from its own file and from kerascpp's (the suite runs this on Keras' numpy
    backend: inference needs no compiling there)."""
    d = os.path.join(root, case_id)
    meta = json.load(open(os.path.join(d, "case.json")))
    x = [np.fromfile(os.path.join(d, i["file"]), dtype="<i4" if i["dtype"] == "int32" else "<f4").reshape(i["shape"])
         for i in meta["inputs"]]
    for source, target in (("model.keras", "keras_pred.npy"), ("kerascpp.keras", "reloaded.npy")):
        if os.path.exists(os.path.join(d, source)):
            model = keras.models.load_model(os.path.join(d, source))
            np.save(os.path.join(d, target), np.asarray(model.predict_on_batch(x if len(x) > 1 else x[0])))


def main(argv):
    action, root, ids = argv[1], argv[2], argv[3:]
    for case_id in ids:
        try:
            (generate if action == "generate" else check)(root, case_id)
        except Exception as e:  # noqa: BLE001 - reported per case by the suite
            with open(os.path.join(root, case_id, action + ".error"), "w") as f:
                f.write(f"{type(e).__name__}: {e}")


if __name__ == "__main__":
    main(sys.argv)
