"""The Transformer-path layers against the real Keras 3 (numpy backend), both directions.

tests/tools/transformer_layers_interop.cpp builds a small model per kind in kerascpp:
(a) `save`: kerascpp sets fixed pseudo-random weights, writes model.weights.h5, model.json and its
    prediction; Keras rebuilds the model from the JSON (keras.models.model_from_json: the layer
    configs carry Keras' keys), loads the weights strictly and must predict the same values.
(b) `load`: Keras writes random weights of its own; kerascpp loads them and must predict what
    Keras predicts (the .weights.h5 names and layouts agree both ways).
"""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402  (the backend must be chosen before the import)
from kerascpp_binaries import find_binary  # noqa: E402

KINDS = ["lnorm", "dense3d", "embedding", "merges", "global_max_pool", "pad_upsample", "upsample_bilinear", "conv1d",
         "depthwise", "conv_transpose", "mha_self", "mha_causal", "mha_masked", "mha_masked_dropout", "dot",
         "lstm", "gru", "lstm_masked", "gru_masked", "simple_rnn", "simple_rnn_masked", "bidirectional",
         "bidirectional_masked", "time_distributed", "attention", "attention_masked", "attention_masked_dropout",
         "additive_attention", "additive_attention_masked", "masked_loss"]


def _run(*args):
    result = subprocess.run([find_binary("transformer_layers_interop"), *map(str, args)], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return result


def _read_f32(path, shape):
    data = np.fromfile(path, dtype="<f4")
    assert data.size == int(np.prod(shape)), (path, data.size, shape)
    return data.reshape(shape)


def _saved_by_kerascpp(kind, directory):
    _run("save", kind, directory)
    with open(os.path.join(directory, "shapes.json")) as f:
        shapes = json.load(f)
    x = _read_f32(os.path.join(directory, "x.f32"), shapes["x"])
    if shapes["integer_input"]:
        x = x.astype("int32")
    y = _read_f32(os.path.join(directory, "y.f32"), shapes["y"])
    with open(os.path.join(directory, "model.json")) as f:
        text = f.read()
    return x, y, text


def _keras_model(text):
    keras.backend.clear_session()
    return keras.models.model_from_json(text)


def _assert_written_as(theirs, mine, key, where):
    """Keras wrote `key` as kerascpp did. A wrapped layer's entry (Bidirectional's "layer" and
    "backward_layer", TimeDistributed's "layer") is compared on kerascpp's keys only: Keras adds
    the ones kerascpp leaves to their defaults (initializers, build_config)."""
    if key in ("layer", "backward_layer") and isinstance(mine, dict):
        for k, v in mine.items():
            if k == "config":
                for ck, cv in v.items():
                    _assert_written_as(theirs["config"][ck], cv, ck, (*where, ck))
            else:
                assert theirs[k] == v, (*where, k)
        return
    assert theirs == mine, where


@pytest.mark.parametrize("kind", KINDS)
def test_keras_predicts_like_kerascpp_from_its_json_and_weights(tmp_path, kind):
    x, y, text = _saved_by_kerascpp(kind, tmp_path)
    model = _keras_model(text)
    ours = json.loads(text)
    # The same layers with the same classes, in the same order: Keras names the .weights.h5 groups
    # by class and position in model.layers (dense, dense_1, ...), so branches listed in another
    # order would load each other's weights.
    assert [(layer.name, type(layer).__name__) for layer in model.layers] == [
        (entry["name"], entry["class_name"]) for entry in ours["config"]["layers"]]
    # Keras writes the rebuilt layers with the same arguments kerascpp wrote.
    again = {entry["name"]: entry for entry in json.loads(model.to_json())["config"]["layers"]}
    for mine in ours["config"]["layers"]:
        for key, value in mine["config"].items():
            if key in ("batch_shape", "dtype"):
                continue
            _assert_written_as(again[mine["name"]]["config"][key], value, key, (mine["name"], key))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model.load_weights(str(tmp_path / "model.weights.h5"))
    np.testing.assert_allclose(model.predict(x, batch_size=5, verbose=0), y, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("kind", KINDS)
def test_kerascpp_predicts_like_keras_from_keras_weights(tmp_path, kind):
    x, _, text = _saved_by_kerascpp(kind, tmp_path)
    model = _keras_model(text)
    rng = np.random.default_rng(7)
    model.set_weights([rng.uniform(-1.0, 1.0, w.shape).astype("float32") for w in model.get_weights()])
    model.save_weights(str(tmp_path / "model.weights.h5"))
    expected = model.predict(x, batch_size=5, verbose=0)
    _run("load", kind, tmp_path)
    got = _read_f32(tmp_path / "y_cpp.f32", expected.shape)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-4)


# One training step. The numpy backend cannot differentiate, so Keras trains under JAX in a
# child process (the backend is fixed per process) and both trained weight files are compared.
# (Not mha_self: JAX's dot_product_attention refuses a value_dim other than key_dim.)
TRAIN_KINDS = ["lnorm", "dense3d", "merges", "global_max_pool", "pad_upsample", "conv1d", "depthwise", "conv_transpose",
               "mha_causal", "mha_masked", "dot", "upsample_bilinear",
               "lstm", "gru", "lstm_masked", "gru_masked", "simple_rnn", "simple_rnn_masked", "bidirectional",
               "bidirectional_masked", "time_distributed", "attention", "attention_masked", "additive_attention",
               "additive_attention_masked", "masked_loss"]

_JAX_STEP = """
import sys
import numpy as np
import keras
directory = sys.argv[1]
with open(directory + "/model.json") as f:
    model = keras.models.model_from_json(f.read())
model.load_weights(directory + "/model.weights.h5")
x = np.load(directory + "/x.npy")
t = np.load(directory + "/t.npy")
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
model.train_on_batch(x, t)
model.save_weights(directory + "/keras_trained.weights.h5")
"""


@pytest.mark.parametrize("kind", TRAIN_KINDS)
def test_one_training_step_matches_keras(tmp_path, kind):
    pytest.importorskip("jax")
    x, y, text = _saved_by_kerascpp(kind, tmp_path)
    model = _keras_model(text)
    rng = np.random.default_rng(11)
    model.set_weights([rng.uniform(-0.5, 0.5, w.shape).astype("float32") for w in model.get_weights()])
    model.save_weights(str(tmp_path / "model.weights.h5"))
    before = model.get_weights()
    t = rng.uniform(-1.0, 1.0, y.shape).astype("float32")
    t.tofile(tmp_path / "t.f32")
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "t.npy", t)
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")
    result = subprocess.run([sys.executable, "-c", _JAX_STEP, str(tmp_path)], capture_output=True, text=True,
                            timeout=300, env=env, check=False)
    assert result.returncode == 0, result.stderr
    _run("train", kind, tmp_path)
    model.load_weights(str(tmp_path / "keras_trained.weights.h5"))
    expected = model.get_weights()
    model.load_weights(str(tmp_path / "trained.weights.h5"))
    got = model.get_weights()
    for variable, w_before, w_expected, w_got in zip(model.weights, before, expected, got):
        # The step moved every weight tensor, and kerascpp moved it the same way. (Attention's
        # key bias adds the same amount to a query's every score, which the softmax ignores: it
        # has no gradient.)
        if not variable.path.endswith("/key/bias"):
            assert np.abs(w_expected - w_before).max() > 1e-4, variable.path
        np.testing.assert_allclose(w_got, w_expected, atol=2e-6, rtol=1e-4)
