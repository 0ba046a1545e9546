"""Weights files exchanged between kerascpp and the real Keras 3, checked through predictions.

tests/tools/keras_interop.cpp builds an MLP or a small CNN (with BatchNormalization) in kerascpp.
(a) `keras_interop save` trains it a few steps and writes model.weights.h5 plus a fixed input batch
    and kerascpp's prediction; Keras loads the file into the equivalent functional model and must
    predict the same values.
(b) Keras writes a weights file (random values in every variable, BN statistics included) and
    `keras_interop load` must predict what Keras predicts.
(c) A file of another architecture is rejected with a kerascpp::Error (exit status 1, no crash)
    whose message names the layer (and the shapes when only the shapes differ).
"""

import json
import os
import subprocess
import warnings

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402  (the backend must be chosen before the import)
from keras import layers  # noqa: E402
from kerascpp_binaries import find_binary  # noqa: E402


def _run(*args):
    return subprocess.run([find_binary("keras_interop"), *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False)


def _keras_model(kind, dense_units=32):
    # A fresh session restarts Keras' automatic names (input_layer, dense, dense_1, ...), which
    # are the names kerascpp gives the same layers and the paths inside the weights file.
    keras.backend.clear_session()
    inputs = keras.Input((28, 28, 1))
    x = inputs
    if kind == "mlp":
        x = layers.Flatten()(x)
        x = layers.Dense(dense_units, activation="relu")(x)
    else:
        x = layers.Conv2D(8, 3, activation="relu")(x)
        x = layers.MaxPooling2D(2)(x)
        x = layers.Conv2D(16, 3, strides=(2, 2), padding="same", activation="relu")(x)
        x = layers.BatchNormalization()(x)
        x = layers.Flatten()(x)
    outputs = layers.Dense(10, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy")
    # The numpy backend cannot fit(); building the optimizer creates its variables (Adam's slots).
    model.optimizer.build(model.trainable_variables)
    return model


def _read_f32(path, shape):
    data = np.fromfile(path, dtype="<f4")
    assert data.size == int(np.prod(shape)), (path, data.size, shape)
    return data.reshape(shape)


def _saved_by_kerascpp(kind, directory):
    result = _run("save", kind, directory)
    assert result.returncode == 0, result.stderr
    with open(os.path.join(directory, "shapes.json")) as f:
        shapes = json.load(f)
    x = _read_f32(os.path.join(directory, "x.f32"), shapes["x"])
    y = _read_f32(os.path.join(directory, "y.f32"), shapes["y"])
    return x, y


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_keras_predicts_like_kerascpp_from_its_weights(tmp_path, kind):
    x, y = _saved_by_kerascpp(kind, tmp_path)
    assert x.shape == (5, 28, 28, 1) and y.shape == (5, 10)
    model = _keras_model(kind)
    # Strict: Keras reports a mismatch of the optimizer variables only as a UserWarning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model.load_weights(str(tmp_path / "model.weights.h5"))
    if kind == "cnn":
        bn = model.get_layer("batch_normalization")
        # Training moved the statistics away from their initial (0, 1).
        assert np.abs(keras.ops.convert_to_numpy(bn.moving_mean)).max() > 1e-3
        assert np.abs(keras.ops.convert_to_numpy(bn.moving_variance) - 1).max() > 1e-3
    assert int(keras.ops.convert_to_numpy(model.optimizer.iterations)) == 5
    expected = model.predict(x, batch_size=5, verbose=0)
    np.testing.assert_allclose(y, expected, atol=1e-5, rtol=1e-4)
    # Not a degenerate comparison: the predictions differ between examples.
    assert np.abs(y - y[0]).max() > 1e-3


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_kerascpp_predicts_like_keras_from_its_weights(tmp_path, kind):
    rng = np.random.default_rng(4 if kind == "mlp" else 5)
    model = _keras_model(kind)
    for v in model.weights:  # biases, BN gamma/beta/moving statistics: away from their defaults
        shape = tuple(v.shape)
        if "moving_variance" in v.path or "gamma" in v.path:
            v.assign(rng.uniform(0.5, 1.5, shape).astype("float32"))
        else:
            v.assign((keras.ops.convert_to_numpy(v) + rng.normal(0, 0.1, shape)).astype("float32"))
    model.optimizer.iterations.assign(3)
    model.save_weights(str(tmp_path / "model.weights.h5"))
    x = rng.uniform(0, 1, (7, 28, 28, 1)).astype("<f4")
    x.tofile(tmp_path / "x.f32")
    result = _run("load", kind, tmp_path)
    assert result.returncode == 0, result.stderr
    ours = _read_f32(tmp_path / "y_cpp.f32", (7, 10))
    expected = model.predict(x, batch_size=7, verbose=0)
    np.testing.assert_allclose(ours, expected, atol=1e-5, rtol=1e-4)
    assert np.abs(ours - ours[0]).max() > 1e-3


def test_weights_of_another_architecture_are_rejected(tmp_path):
    _saved_by_kerascpp("mlp", tmp_path)
    result = _run("load", "cnn", tmp_path)
    assert result.returncode == 1, (result.returncode, result.stderr)  # a caught Error, not a signal
    assert "error: load_weights(" in result.stderr
    assert "'conv2d'" in result.stderr and "different architecture" in result.stderr
    assert not (tmp_path / "y_cpp.f32").exists()


def test_weights_with_other_shapes_are_rejected(tmp_path):
    # Same layer names as kerascpp's MLP, but Dense(16) instead of Dense(32).
    model = _keras_model("mlp", dense_units=16)
    model.save_weights(str(tmp_path / "model.weights.h5"))
    np.zeros((1, 28, 28, 1), "<f4").tofile(tmp_path / "x.f32")
    result = _run("load", "mlp", tmp_path)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "dense/kernel" in result.stderr
    assert "(784, 32)" in result.stderr and "(784, 16)" in result.stderr
    assert not (tmp_path / "y_cpp.f32").exists()
