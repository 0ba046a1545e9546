"""kerascpp's .weights.h5 files against the real Keras 3 and h5py.

tests/tools/h5_roundtrip.cpp writes the weights of a Sequential([Input((3,)), Dense(4), Dense(2)])
compiled with Adam (known values, see _mlp_value) and reads any weights file back as JSON.
Here: (a) Keras loads what kerascpp wrote, and the tree matches the one Keras writes itself;
(b) kerascpp reads what Keras wrote (a trained functional model with its optimizer) exactly as
h5py sees it; (c) kerascpp's own `kerascpp` group does not disturb Keras' loader; plus the
reader's errors on files that are not Keras 3 weights.
"""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import warnings

import h5py
import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402  (the backend must be chosen before the import)
from kerascpp_binaries import find_binary  # noqa: E402


def _run(*args):
    return subprocess.run([find_binary("h5_roundtrip", "KERASCPP_H5_ROUNDTRIP"), *args], capture_output=True, text=True,
                          timeout=120, check=False)


def _write(path, *flags):
    result = _run("write", str(path), *flags)
    assert result.returncode == 0, result.stderr
    return str(path)


def _read(path):
    result = _run("read", str(path))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# --- the values h5_roundtrip writes (keep in step with mlp_value() in h5_roundtrip.cpp) ---

_MLP_SHAPES = [(3, 4), (4,), (4, 2), (2,)]  # dense kernel, dense bias, dense_1 kernel, dense_1 bias


def _mlp_value(k, shape, scale=1.0, absolute=False):
    j = np.arange(int(np.prod(shape)), dtype=np.float32)
    magnitude = np.float32(k + 1) + np.float32(0.125) * j
    values = np.where(j % 2 == 1, -magnitude, magnitude)
    if absolute:
        values = np.abs(values)
    return (np.float32(scale) * values).astype(np.float32).reshape(shape)


def _keras_mlp(compiled=True):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4), keras.layers.Dense(2)])
    if compiled:
        model.compile(optimizer=keras.optimizers.Adam(), loss="mse")
        # The numpy backend cannot fit(); building the optimizer creates the same variables.
        model.optimizer.build(model.trainable_variables)
    return model


def _load_strictly(model, path):
    # Keras reports a variable-count mismatch of the optimizer only as a UserWarning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        model.load_weights(path)


def _check_mlp_weights(model):
    weights = model.get_weights()
    assert [w.shape for w in weights] == _MLP_SHAPES
    for k, w in enumerate(weights):
        np.testing.assert_array_equal(w, _mlp_value(k, _MLP_SHAPES[k]))


def _check_mlp_optimizer(model):
    variables = model.optimizer.variables
    assert len(variables) == 10
    assert int(np.asarray(variables[0])) == 7  # iteration (written as int64, Keras holds int32)
    assert np.asarray(variables[1]) == np.float32(0.001)  # learning_rate
    for k, shape in enumerate(_MLP_SHAPES):
        np.testing.assert_array_equal(np.asarray(variables[2 + 2 * k]), _mlp_value(k, shape, 0.5))
        np.testing.assert_array_equal(np.asarray(variables[3 + 2 * k]),
                                      _mlp_value(k, shape, 0.25, absolute=True))


def _tree(path):
    """Every group and dataset of an HDF5 file: path -> (kind, shape, dtype, attribute names)."""
    tree = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                tree[name] = ("dataset", obj.shape, obj.dtype.str, sorted(obj.attrs))
            else:
                tree[name] = ("group", None, None, sorted(obj.attrs))
        f.visititems(visit)
        tree["/"] = ("group", None, None, sorted(f.attrs))
    return tree


# --- (a) Keras reads kerascpp's file ---

def test_keras_loads_kerascpp_weights_and_optimizer(tmp_path):
    path = _write(tmp_path / "mlp.weights.h5", "--no-extra")
    model = _keras_mlp()
    _load_strictly(model, path)
    _check_mlp_weights(model)
    _check_mlp_optimizer(model)


def test_keras_loads_weights_only_file_into_uncompiled_model(tmp_path):
    path = _write(tmp_path / "mlp.weights.h5", "--no-optimizer", "--no-extra")
    model = _keras_mlp(compiled=False)
    _load_strictly(model, path)
    _check_mlp_weights(model)
    with h5py.File(path, "r") as f:
        assert "optimizer" not in f


def test_kerascpp_tree_matches_the_tree_keras_writes(tmp_path):
    ours = _tree(_write(tmp_path / "ours.weights.h5", "--no-extra"))
    model = _keras_mlp()
    model.save_weights(str(tmp_path / "keras.weights.h5"))
    theirs = _tree(str(tmp_path / "keras.weights.h5"))
    assert sorted(ours) == sorted(theirs)
    for name, entry in theirs.items():
        if name == "optimizer/vars/0":
            # iteration: int32 from Keras on numpy/jax/torch, int64 on TensorFlow and from us.
            assert ours[name][:2] == entry[:2] and ours[name][2] in ("<i4", "<i8")
        else:
            assert ours[name] == entry, name
    with h5py.File(tmp_path / "ours.weights.h5", "r") as f:
        assert f["vars"].attrs["name"] == "sequential"
        assert f["optimizer/vars"].attrs["name"] == "adam"
        assert f["layers/dense_1/vars"].attrs["name"] == "dense_1"
        assert f["layers/dense/vars/0"].dtype == np.dtype("<f4")
        assert f["optimizer/vars/0"].shape == ()


# --- (c) kerascpp's own group is invisible to Keras ---

def test_keras_loads_file_with_kerascpp_state_group(tmp_path):
    path = _write(tmp_path / "state.weights.h5")
    with h5py.File(path, "r") as f:
        assert sorted(f["kerascpp"]) == ["data_order", "epoch", "loss_scale", "rng", "step"]
        assert f["kerascpp/epoch"][()] == 3 and f["kerascpp/epoch"].dtype == np.int64
        np.testing.assert_array_equal(f["kerascpp/rng"][()], np.array([1, 2, 254, 255], np.uint8))
    model = _keras_mlp()
    _load_strictly(model, path)
    _check_mlp_weights(model)
    _check_mlp_optimizer(model)
    uncompiled = _keras_mlp(compiled=False)
    _load_strictly(uncompiled, path)
    _check_mlp_weights(uncompiled)

    data = _read(path)
    assert sorted(data["extra"]) == ["data_order", "epoch", "loss_scale", "rng", "step"]
    assert data["extra"]["data_order"] == {"dtype": "int64", "shape": [5], "values": [4, 0, 3, 1, 2]}


# --- (b) kerascpp reads Keras' file ---

_SAVE_FUNCTIONAL = textwrap.dedent("""
    import sys
    import numpy as np
    import keras
    from keras import layers
    rng = np.random.default_rng(0)
    inputs = keras.Input((6, 6, 1))
    x = layers.Conv2D(2, 3, activation="relu")(inputs)
    x = layers.BatchNormalization()(x)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Flatten()(x)
    x = layers.Dense(4, activation="relu")(x)
    x = layers.Dropout(0.5)(x)
    outputs = layers.Dense(3, activation="softmax")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss="sparse_categorical_crossentropy")
    if keras.backend.backend() == "numpy":
        # No fit() on numpy: build the optimizer and give every variable a distinct value.
        model.optimizer.build(model.trainable_variables)
        for v in model.variables + model.optimizer.variables[1:]:
            v.assign(rng.uniform(0.1, 1.0, v.shape).astype("float32"))
        model.optimizer.iterations.assign(5)
    else:
        x = rng.uniform(size=(8, 6, 6, 1)).astype("float32")
        y = rng.integers(0, 3, 8)
        model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    model.save_weights(sys.argv[1])
""")


def _keras_backends():
    backends = [pytest.param("numpy", id="numpy")]
    jax_missing = importlib.util.find_spec("jax") is None
    backends.append(pytest.param("jax", id="jax-trained",
                                 marks=pytest.mark.skipif(jax_missing, reason="jax not installed")))
    return backends


@pytest.mark.parametrize("backend", _keras_backends())
def test_kerascpp_reads_keras_functional_file(tmp_path, backend):
    path = str(tmp_path / "functional.weights.h5")
    env = dict(os.environ, KERAS_BACKEND=backend)
    saved = subprocess.run([sys.executable, "-c", _SAVE_FUNCTIONAL, path], env=env,
                           capture_output=True, text=True, timeout=300, check=False)
    assert saved.returncode == 0, saved.stderr
    data = _read(path)

    def check_vars(group, ours):
        assert len(ours) == len(group)
        for i, var in enumerate(ours):
            expected = group[str(i)][()]  # numeric order: "10" comes after "9"
            assert var["shape"] == list(expected.shape)
            kind = {"f": "float32", "i": "int64" if expected.dtype.itemsize == 8 else "int32"}
            assert var["dtype"] == kind[expected.dtype.kind]
            values = np.asarray(var["values"], dtype=expected.dtype).reshape(expected.shape)
            np.testing.assert_array_equal(values, expected)  # %.9g round-trips float32 exactly

    with h5py.File(path, "r") as f:
        layer_names = sorted(f["layers"])
        assert sorted(layer["name"] for layer in data["layers"]) == layer_names
        assert layer_names == ["batch_normalization", "conv2d", "dense", "dense_1", "dropout",
                               "flatten", "input_layer", "max_pooling2d"]
        for layer in data["layers"]:
            group = f["layers"][layer["name"]]["vars"]
            check_vars(group, layer["vars"])
        assert data["has_optimizer"] is True
        assert len(data["optimizer_vars"]) == 18  # iteration, lr, (m, v) for 8 trainable vars
        check_vars(f["optimizer/vars"], data["optimizer_vars"])
        assert data["extra"] == {}
    iteration = data["optimizer_vars"][0]
    assert iteration["shape"] == [] and iteration["values"] == [5 if backend == "numpy" else 1]


# --- the reader's errors on files that are not Keras 3 weights ---

def _read_error(path):
    result = _run("read", str(path))
    assert result.returncode == 1, result.stdout
    assert str(path) in result.stderr
    return result.stderr


def test_reader_errors_name_the_file_and_the_problem(tmp_path):
    no_layers = tmp_path / "no_layers.weights.h5"
    with h5py.File(no_layers, "w") as f:
        f.create_group("vars")
    assert "no 'layers' group" in _read_error(no_layers)

    legacy = tmp_path / "legacy.h5"
    with h5py.File(legacy, "w") as f:
        f.create_group("model_weights/dense/dense").create_dataset("kernel:0", data=np.zeros((2, 2)))
        f.attrs["layer_names"] = [b"dense"]
    assert "legacy Keras 2" in _read_error(legacy)

    linked = tmp_path / "linked.weights.h5"
    with h5py.File(linked, "w") as f:
        f.create_dataset("layers/dense/vars/0", data=np.zeros(2, np.float32))
        f["layers/dense/vars"]["1"] = h5py.SoftLink("/layers/dense/vars/0")
    assert "link" in _read_error(linked)

    gap = tmp_path / "gap.weights.h5"
    with h5py.File(gap, "w") as f:
        f.create_dataset("layers/dense/vars/0", data=np.zeros(2, np.float32))
        f.create_dataset("layers/dense/vars/2", data=np.zeros(2, np.float32))
    assert "no variable 1" in _read_error(gap)

    text = tmp_path / "text.weights.h5"
    text.write_text("not hdf5")
    assert "not an HDF5 file" in _read_error(text)
    assert "does not exist" in _read_error(tmp_path / "missing.weights.h5")


def test_reader_converts_other_numeric_types(tmp_path):
    path = tmp_path / "types.weights.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("layers/dense/vars/0", data=np.array([[1.5, -2.25]], np.float64))
        f.create_dataset("layers/dense/vars/1", data=np.array([3, -4], np.int16))
        f.create_dataset("layers/dense/vars/2", data=np.array(9, np.uint32))
    (layer,) = _read(path)["layers"]
    assert [v["dtype"] for v in layer["vars"]] == ["float32", "int32", "int64"]
    assert [v["values"] for v in layer["vars"]] == [[1.5, -2.25], [3, -4], [9]]
    assert layer["vars"][2]["shape"] == []
