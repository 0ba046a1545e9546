"""Damaged .weights.h5 files, crafted with h5py, loaded through kerascpp's load_weights.

tests/tools/weights_guard.cpp writes a checkpoint with weights, Adam state and kerascpp's training
state (what BackupAndRestore writes), then, for each crafted copy, builds the same model with
other weights, prints a checksum of its weights and optimizer state, calls load_weights and prints
the checksum again. Every damaged file must be refused with exit status 1 (a kerascpp::Error, not a
signal or another exception), a message naming the file and the damaged entry, and the model
unchanged: the issue found SIGSEGVs, half-applied loads and silent drops here.
"""

import os
import re
import shutil
import subprocess

import h5py
import numpy as np
import pytest

from kerascpp_binaries import find_binary


def _run(*args):
    return subprocess.run([find_binary("weights_guard"), *map(str, args)], capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture(scope="module")
def good_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("good") / "good.weights.h5"
    result = _run("save", path)
    assert result.returncode == 0, result.stderr
    return path


def _replace(f, name, data):
    del f[name]
    f.create_dataset(name, data=data)


def _retype(dtype):
    def edit(f):
        old = f["layers/dense/vars/0"][()]
        _replace(f, "layers/dense/vars/0", old.astype(dtype))
    return edit


def _retype_string(f):
    del f["layers/dense/vars/0"]
    f.create_dataset("layers/dense/vars/0", data=np.array([b"not a weight"] * 4, dtype=h5py.string_dtype()))


def _shape_bomb(f):
    # 20000 x 20000 float32 = 1.6 GB declared, nothing written: the file stays tiny (chunked, fill value).
    del f["layers/dense/vars/0"]
    f.create_dataset("layers/dense/vars/0", shape=(20000, 20000), dtype="<f4", chunks=(100, 100))


# (case id, edit on the open file, entry the message must name)
CASES = [
    ("training_state_step deleted", lambda f: f.__delitem__("kerascpp/training_state_step"),
     "kerascpp/training_state_step"),
    ("training_state_totals_hi deleted", lambda f: f.__delitem__("kerascpp/training_state_totals_hi"),
     "kerascpp/training_state_totals_hi"),
    ("learning rate of shape (0,)", lambda f: _replace(f, "optimizer/vars/1", np.zeros((0,), "<f4")),
     "optimizer/vars/1"),
    ("learning rate as a 2-vector", lambda f: _replace(f, "optimizer/vars/1", np.array([1e-2, 1e-2], "<f4")),
     "optimizer/vars/1"),
    ("learning rate NaN", lambda f: _replace(f, "optimizer/vars/1", np.float32("nan")), "optimizer/vars/1"),
    ("training-state totals of the wrong length",
     lambda f: _replace(f, "kerascpp/training_state_totals_hi", np.zeros((3,), "<f4")),
     "kerascpp/training_state_totals_hi"),
    ("training-state totals NaN",
     lambda f: _replace(f, "kerascpp/training_state_totals_hi", np.full((4,), np.nan, "<f4")),
     "kerascpp/training_state_totals_hi"),
    ("non-scalar iteration", lambda f: _replace(f, "optimizer/vars/0", np.array([3, 3], "<i8")), "optimizer/vars/0"),
    ("negative iteration", lambda f: _replace(f, "optimizer/vars/0", np.int64(-4)), "optimizer/vars/0"),
    ("non-scalar training step", lambda f: _replace(f, "kerascpp/training_state_step", np.array([1, 2], "<i8")),
     "kerascpp/training_state_step"),
    ("negative training step", lambda f: _replace(f, "kerascpp/training_state_step", np.int64(-5)),
     "kerascpp/training_state_step"),
    ("unknown training-state entry", lambda f: f.create_dataset("kerascpp/training_state_future", data=np.int64(1)),
     "kerascpp/training_state_future"),
    ("optimizer slot of the wrong shape", lambda f: _replace(f, "optimizer/vars/2", np.zeros((8, 4), "<f4")),
     "optimizer/vars/2"),
    ("weight deleted", lambda f: f.__delitem__("layers/dense_1/vars/1"), "dense_1"),
    ("weight reshaped", lambda f: _replace(f, "layers/dense_1/vars/0", np.zeros((3, 8), "<f4")),
     "layers/dense_1/vars/0"),
    ("weight retyped to int32", _retype("<i4"), "layers/dense/vars/0"),
    ("weight retyped to string", _retype_string, "layers/dense/vars/0"),
    ("1.6 GB dataset declared in a tiny file", _shape_bomb, "layers/dense/vars/0"),
]


def _field(stdout, key):
    match = re.search(rf"^{key}: (.*)$", stdout, re.M)
    assert match, f"no '{key}:' line in:\n{stdout}"
    return match.group(1)


@pytest.mark.parametrize("case,edit,entry", CASES, ids=[c[0] for c in CASES])
def test_damaged_file_is_refused_and_the_model_is_unchanged(good_file, tmp_path, case, edit, entry):
    path = tmp_path / "damaged.weights.h5"
    shutil.copy(good_file, path)
    with h5py.File(path, "r+") as f:
        edit(f)
    result = _run("load", path)
    assert result.returncode >= 0, f"{case}: killed by signal {-result.returncode}\n{result.stderr}"
    assert result.returncode == 1, f"{case}: exit {result.returncode}, expected 1 (refused)\n{result.stdout}{result.stderr}"
    assert str(path) in result.stderr, f"{case}: the message does not name the file:\n{result.stderr}"
    assert entry in result.stderr, f"{case}: the message does not name '{entry}':\n{result.stderr}"
    assert _field(result.stdout, "before") == _field(result.stdout, "after"), \
        f"{case}: the model changed although the load failed"
    if case.startswith("1.6 GB"):
        assert os.path.getsize(path) < 1 << 20
        # Refused from the layout, before any data is read: fast and without the 1.6 GB buffer.
        assert float(_field(result.stdout, "load_seconds")) < 1.0
        assert int(_field(result.stdout, "peak_rss_kib")) < 700 * 1024


def test_a_float64_weight_loads_converted_like_keras(good_file, tmp_path):
    # Not damage: Keras assigns a float64 array to a float32 variable by casting, and so does
    # kerascpp (these values came from float32, so the round trip is exact).
    path = tmp_path / "float64.weights.h5"
    shutil.copy(good_file, path)
    with h5py.File(path, "r+") as f:
        _retype("<f8")(f)
    saved = _run("save", tmp_path / "again.weights.h5")
    result = _run("load", path)
    assert result.returncode == 0, result.stderr
    assert _field(result.stdout, "after") == _field(saved.stdout, "saved")


def test_the_undamaged_copy_loads(good_file, tmp_path):
    # The control: the same copy-and-load path with no edit succeeds and restores the saved state.
    path = tmp_path / "copy.weights.h5"
    shutil.copy(good_file, path)
    saved = _run("save", tmp_path / "again.weights.h5")
    result = _run("load", path)
    assert result.returncode == 0, result.stderr
    assert _field(result.stdout, "after") == _field(saved.stdout, "saved")
    assert _field(result.stdout, "before") != _field(result.stdout, "after")
