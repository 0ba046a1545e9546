"""kerascpp's Huber loss, label-smoothed crossentropies and top-k accuracy against Keras 3's."""
import os
import subprocess

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kerascpp_binaries import find_binary  # noqa: E402

N, D = 16, 5


def ours(kind, param, pred, target):
    stdin = " ".join(f"{v:.9g}" for v in np.concatenate([pred.ravel(), target.ravel()]))
    out = subprocess.run([find_binary("loss_values"), kind, str(param), str(N), str(D)], input=stdin,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return np.array([float(v) for v in out.split()])


@pytest.mark.parametrize("delta", [1.0, 0.3])
def test_huber_equals_keras(delta):
    rng = np.random.default_rng(3)
    pred = rng.normal(scale=2.0, size=(N, D)).astype(np.float32)
    target = rng.normal(size=(N, D)).astype(np.float32)
    theirs = keras.losses.Huber(delta=delta, reduction=None)(target, pred)
    np.testing.assert_allclose(ours("huber", delta, pred, target), np.asarray(theirs, np.float64), rtol=1e-6,
                               atol=1e-7)


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.4])
def test_label_smoothed_categorical_crossentropy_equals_keras(smoothing):
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(N, D))
    pred = (np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).astype(np.float32)
    target = np.eye(D, dtype=np.float32)[rng.integers(0, D, N)]
    theirs = keras.losses.CategoricalCrossentropy(label_smoothing=smoothing, reduction=None)(target, pred)
    got = ours("categorical_crossentropy", smoothing, pred, target)
    np.testing.assert_allclose(got, np.asarray(theirs, np.float64), rtol=2e-6, atol=1e-6)
    if smoothing:  # smoothing really changed the loss
        plain = ours("categorical_crossentropy", 0.0, pred, target)
        assert np.max(np.abs(got - plain)) > 1e-3


@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_label_smoothed_binary_crossentropy_equals_keras(smoothing):
    rng = np.random.default_rng(5)
    pred = (1 / (1 + np.exp(-rng.normal(size=(N, D))))).astype(np.float32)
    target = rng.integers(0, 2, size=(N, D)).astype(np.float32)
    theirs = keras.losses.BinaryCrossentropy(label_smoothing=smoothing, reduction=None)(target, pred)
    np.testing.assert_allclose(ours("binary_crossentropy", smoothing, pred, target), np.asarray(theirs, np.float64),
                               rtol=2e-6, atol=1e-6)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_sparse_top_k_accuracy_equals_keras(k):
    rng = np.random.default_rng(6)
    n, classes = 50, 8
    pred = rng.normal(size=(n, classes)).astype(np.float32)
    labels = rng.integers(0, classes, n)
    stdin = " ".join([f"{v:.9g}" for v in pred.ravel()] + [str(v) for v in labels])
    out = subprocess.run([find_binary("loss_values"), "sparse_top_k", str(k), str(n), str(classes)], input=stdin,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    metric = keras.metrics.SparseTopKCategoricalAccuracy(k=k)
    metric.update_state(labels, pred)
    assert float(out) == pytest.approx(float(metric.result()) * n, abs=1e-6)
    assert 0 < float(out) < n  # neither trivially all nor none
