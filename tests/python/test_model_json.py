"""Model::to_json() read back by the real Keras 3 with keras.models.model_from_json.

tests/tools/keras_interop.cpp `config <kind> <dir>` writes kerascpp's to_json() to model.json.
(a) The MLP and CNN of test_keras_interop.py: Keras rebuilds the model from kerascpp's JSON, loads
    the weights kerascpp trained and predicts what kerascpp predicted, so every layer came back
    with its class, arguments (kernel sizes, strides, padding, activations) and connections.
(b) Layer and model names with quotes and backslashes, a shared layer and layers called on lists
    (Add, Concatenate): the JSON parses, and Keras rebuilds the same names and the same graph.
(c) A Sequential model, with a rectangular Conv2D kernel and `same` padding.
"""

import json
import os
import subprocess

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402  (the backend must be chosen before the import)
from kerascpp_binaries import find_binary  # noqa: E402


def _run(*args):
    result = subprocess.run([find_binary("keras_interop"), *map(str, args)], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return result


def _config_text(kind, directory):
    _run("config", kind, directory)
    with open(os.path.join(directory, "model.json")) as f:
        return f.read()


def _read_f32(path, shape):
    data = np.fromfile(path, dtype="<f4")
    assert data.size == int(np.prod(shape)), (path, data.size, shape)
    return data.reshape(shape)


def _inbound_layer_names(layer):
    """The names of the layers whose outputs each call of `layer` takes, per call."""
    calls = []
    for node in layer._inbound_nodes:
        calls.append([t._keras_history.operation.name for t in node.input_tensors])
    return calls


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_keras_rebuilds_the_model_and_predicts_like_kerascpp(tmp_path, kind):
    _run("save", kind, tmp_path)
    text = _config_text(kind, tmp_path)
    keras.backend.clear_session()
    model = keras.models.model_from_json(text)
    ours = json.loads(text)
    assert [layer.name for layer in model.layers] == [entry["name"] for entry in ours["config"]["layers"]]
    assert [type(layer).__name__ for layer in model.layers] == [
        entry["class_name"] for entry in ours["config"]["layers"]]
    if kind == "cnn":
        conv = model.get_layer("conv2d_1")
        assert conv.kernel_size == (3, 3) and conv.strides == (2, 2) and conv.padding == "same"
    # The weights kerascpp trained fit the rebuilt model, which predicts what kerascpp predicted.
    model.load_weights(str(tmp_path / "model.weights.h5"), skip_mismatch=False)
    with open(tmp_path / "shapes.json") as f:
        shapes = json.load(f)
    x = _read_f32(tmp_path / "x.f32", shapes["x"])
    y = _read_f32(tmp_path / "y.f32", shapes["y"])
    np.testing.assert_allclose(model.predict(x, batch_size=5, verbose=0), y, atol=1e-5, rtol=1e-4)


def test_names_with_quotes_and_backslashes_round_trip(tmp_path):
    text = _config_text("quoted", tmp_path)
    ours = json.loads(text)  # valid JSON: the names are escaped
    classes = {entry["name"]: entry["class_name"] for entry in ours["config"]["layers"]}
    assert classes == {'in "a"': "InputLayer", "in\\b": "InputLayer", 'shared "dense"': "Dense", "sum\\": "Add",
                       "dropout": "Dropout", 'cat "\\ "': "Concatenate", 'my "head"\\1': "Dense"}
    assert ours["config"]["name"] == 'model "quoted"'

    keras.backend.clear_session()
    model = keras.models.model_from_json(text)
    assert model.name == 'model "quoted"'
    # Keras lists a functional model's layers in its own (depth) order.
    assert {layer.name: type(layer).__name__ for layer in model.layers} == classes
    assert [t._keras_history.operation.name for t in model.inputs] == ['in "a"', "in\\b"]
    assert [t._keras_history.operation.name for t in model.outputs] == ['my "head"\\1']
    # The graph: the shared Dense is called twice, the merge layers on lists of tensors.
    assert _inbound_layer_names(model.get_layer('shared "dense"')) == [['in "a"'], ["in\\b"]]
    assert _inbound_layer_names(model.get_layer("sum\\")) == [['shared "dense"', 'shared "dense"']]
    assert _inbound_layer_names(model.get_layer('cat "\\ "')) == [["sum\\", "dropout"]]
    assert _inbound_layer_names(model.get_layer('my "head"\\1')) == [['cat "\\ "']]
    head = model.get_layer('my "head"\\1')
    assert head.units == 3 and head.activation.__name__ == "softmax"
    assert model.get_layer("dropout").rate == 0.25
    assert tuple(model.output.shape) == (None, 3)
    assert model.get_layer('cat "\\ "').output.shape == (None, 10)

    # Keras writes the rebuilt model with the same names, classes and arguments.
    again = {entry["name"]: entry for entry in json.loads(model.to_json())["config"]["layers"]}
    assert set(again) == set(classes)
    for mine in ours["config"]["layers"]:
        theirs = again[mine["name"]]
        assert mine["class_name"] == theirs["class_name"]
        for key, value in mine["config"].items():
            assert theirs["config"][key] == value, (mine["name"], key)


def test_sequential_round_trips_with_a_rectangular_kernel(tmp_path):
    text = _config_text("sequential", tmp_path)
    keras.backend.clear_session()
    model = keras.models.model_from_json(text)
    assert isinstance(model, keras.Sequential)
    assert model.name == 'sequential "model"'
    assert [type(layer).__name__ for layer in model.layers] == ["Conv2D", "AveragePooling2D", "Flatten", "Dense"]
    conv = model.layers[0]
    assert conv.kernel_size == (3, 5) and conv.strides == (2, 1) and conv.padding == "same"
    pool = model.layers[1]
    assert pool.pool_size == (2, 2) and pool.strides == (1, 1) and pool.padding == "valid"
    assert model.layers[-1].name == 'seq "out"'
    assert [tuple(t.shape) for t in model.inputs] == [(None, 8, 8, 1)]
    assert [tuple(t.shape) for t in model.outputs] == [(None, 2)]
    # kerascpp's Conv2D config is the JSON Keras writes for the same arguments.
    reference = json.loads(json.dumps(keras.layers.Conv2D(4, (3, 5), strides=(2, 1), padding="same").get_config()))
    ours = json.loads(text)["config"]["layers"][1]["config"]
    for key in ["filters", "kernel_size", "strides", "padding", "activation", "use_bias"]:
        assert ours[key] == reference[key], key


def test_keras_reads_the_dtype_policies_kerascpp_writes(tmp_path):
    text = _config_text("mixed", tmp_path)
    keras.backend.clear_session()
    model = keras.models.model_from_json(text)
    policies = {type(layer).__name__: layer.dtype_policy.name for layer in model.layers
                if not isinstance(layer, keras.layers.InputLayer)}
    assert policies == {"Conv2D": "mixed_bfloat16", "Flatten": "mixed_bfloat16", "Dense": "float32"}
    # Keras writes the same policy object for a layer it makes with that policy.
    reference = keras.layers.Conv2D(4, 3, dtype="mixed_bfloat16").get_config()["dtype"]
    ours = [entry["config"] for entry in json.loads(text)["config"]["layers"] if entry["class_name"] == "Conv2D"][0]
    assert ours["dtype"] == json.loads(json.dumps(reference))
