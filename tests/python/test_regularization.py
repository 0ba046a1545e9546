"""Weight regularizers (L1, L2, L1L2) and the MaxNorm constraint against Keras 3 and NumPy.

tests/tools/regularization_steps.cpp builds a two-Dense model with regularized kernels and biases
and a max-norm kernel, evaluates it, trains it 20 SGD steps and writes everything down. Here:
(a) Keras 3 (numpy backend) rebuilds the model from kerascpp's JSON (the regularizer and
    constraint configs are Keras'), loads the weights, and its evaluate() loss, which includes
    sum(model.losses), equals the loss kerascpp reports;
(b) a float64 NumPy reference of the same 20 steps (Keras' formulas: penalty gradients added to
    the loss gradient, SGD with momentum, MaxNorm after each update) gives the same weights and
    the same per-step losses, on one replica and under MirroredStrategy with 2 CPU replicas.
"""

import json
import os
import subprocess

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
from kerascpp_binaries import find_binary  # noqa: E402

L1L2_KERNEL1 = (0.01, 0.02)
L2_BIAS1 = 0.05
L2_KERNEL2 = 0.03
L1_BIAS2 = 0.01
MAX_NORM = 0.9
LR, MOMENTUM, STEPS = 0.1, 0.9, 20


def _run(directory, replicas):
    result = subprocess.run([find_binary("regularization_steps"), str(directory), str(replicas)], capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    with open(os.path.join(directory, "result.json")) as f:
        out = json.load(f)
    read = lambda name, shape: np.fromfile(os.path.join(directory, name), dtype="<f4").reshape(shape)  # noqa: E731
    out["x"] = read("x.f32", (16, 6)).astype(np.float64)
    out["y"] = read("y.f32", (16,)).astype(np.int64)
    out["initial"] = [read(f"w{i}_initial.f32", s).astype(np.float64) for i, s in enumerate(out["shapes"])]
    out["final"] = [read(f"w{i}_final.f32", s).astype(np.float64) for i, s in enumerate(out["shapes"])]
    return out


def _penalty_and_grads(w):
    w1, b1, w2, b2 = w
    penalty = (L1L2_KERNEL1[0] * np.abs(w1).sum() + L1L2_KERNEL1[1] * (w1**2).sum() + L2_BIAS1 * (b1**2).sum() +
               L2_KERNEL2 * (w2**2).sum() + L1_BIAS2 * np.abs(b2).sum())
    grads = [L1L2_KERNEL1[0] * np.sign(w1) + 2 * L1L2_KERNEL1[1] * w1, 2 * L2_BIAS1 * b1, 2 * L2_KERNEL2 * w2,
             L1_BIAS2 * np.sign(b2)]
    return penalty, grads


def _loss_and_grads(w, x, y):
    w1, b1, w2, b2 = w
    h = np.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.log(p[np.arange(n), y]).mean()
    dz = p.copy()
    dz[np.arange(n), y] -= 1
    dz /= n
    dh = dz @ w2.T * (1 - h**2)
    penalty, pgrads = _penalty_and_grads(w)
    grads = [x.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0)]
    return loss + penalty, [g + pg for g, pg in zip(grads, pgrads)]


def _max_norm(w):
    norms = np.sqrt((w**2).sum(axis=0, keepdims=True))
    return w * np.clip(norms, 0, MAX_NORM) / (1e-7 + norms)


def _reference(initial, x, y):
    w = [v.copy() for v in initial]
    velocity = [np.zeros_like(v) for v in w]
    losses = []
    for _ in range(STEPS):
        loss, grads = _loss_and_grads(w, x, y)
        losses.append(loss)
        for i, g in enumerate(grads):
            velocity[i] = MOMENTUM * velocity[i] - LR * g
            w[i] = w[i] + velocity[i]
        w[0] = _max_norm(w[0])
    return w, losses


@pytest.mark.parametrize("replicas", [1, 2])
def test_twenty_sgd_steps_match_a_numpy_reference(tmp_path, replicas):
    out = _run(tmp_path, replicas)
    expected_w, expected_losses = _reference(out["initial"], out["x"], out["y"])
    np.testing.assert_allclose(out["train_losses"], expected_losses, rtol=0, atol=1e-5)
    for got, want in zip(out["final"], expected_w):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    # The constraint binds: every column of the first kernel ends at norm <= 0.9.
    assert np.sqrt((out["final"][0]**2).sum(axis=0)).max() <= MAX_NORM + 1e-6
    # The penalty is a large part of the loss here, so leaving it out would fail the comparison.
    assert _penalty_and_grads(out["initial"])[0] > 0.1


def test_keras_reads_the_regularizers_and_reports_the_same_loss(tmp_path):
    out = _run(tmp_path, 1)
    keras.backend.clear_session()
    with open(tmp_path / "model.json") as f:
        model = keras.models.model_from_json(f.read())
    model.load_weights(str(tmp_path / "initial.weights.h5"))
    dense, dense_1 = model.layers[1], model.layers[2]
    assert isinstance(dense.kernel_regularizer, keras.regularizers.L1L2)
    assert dense.kernel_regularizer.get_config() == pytest.approx({"l1": 0.01, "l2": 0.02})
    assert isinstance(dense.kernel_constraint, keras.constraints.MaxNorm)
    assert dense.kernel_constraint.get_config() == pytest.approx({"max_value": 0.9, "axis": 0})
    assert isinstance(dense_1.bias_regularizer, keras.regularizers.L1)
    # Keras' model.losses on the same weights: the penalty kerascpp adds to the loss.
    keras_penalty = float(sum(np.asarray(loss) for loss in model.losses))
    assert keras_penalty == pytest.approx(_penalty_and_grads(out["initial"])[0], abs=1e-5)
    # Keras' training loss is compiled loss + sum(model.losses) (Trainer.compute_loss). Its
    # evaluate() cannot add them up on the numpy backend (ops.sum of a Python list fails there),
    # so the two terms are taken from Keras separately and added here.
    pred = model.predict(out["x"].astype("float32"), batch_size=16, verbose=0)
    data_loss = float(keras.losses.SparseCategoricalCrossentropy()(out["y"], pred))
    assert data_loss + keras_penalty == pytest.approx(out["eval_loss"], abs=1e-5)
    assert out["train_losses"][0] == pytest.approx(out["eval_loss"], abs=1e-6)
