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

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
from regularized_model import MAX_NORM, STEPS, loss_and_grads, max_norm, penalty_and_grads, run_tool  # noqa: E402

LR, MOMENTUM = 0.1, 0.9


def _reference(initial, x, y):
    w = [v.copy() for v in initial]
    velocity = [np.zeros_like(v) for v in w]
    losses = []
    for _ in range(STEPS):
        loss, grads = loss_and_grads(w, x, y)
        losses.append(loss)
        for i, g in enumerate(grads):
            velocity[i] = MOMENTUM * velocity[i] - LR * g
            w[i] = w[i] + velocity[i]
        w[0] = max_norm(w[0])
    return w, losses


@pytest.mark.parametrize("replicas", [1, 2])
def test_twenty_sgd_steps_match_a_numpy_reference(tmp_path, replicas):
    out = run_tool(tmp_path, replicas)
    expected_w, expected_losses = _reference(out["initial"], out["x"], out["y"])
    np.testing.assert_allclose(out["train_losses"], expected_losses, rtol=0, atol=1e-5)
    for got, want in zip(out["final"], expected_w):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    # The constraint binds: every column of the first kernel ends at norm <= 0.9.
    assert np.sqrt((out["final"][0]**2).sum(axis=0)).max() <= MAX_NORM + 1e-6
    # The penalty is a large part of the loss here, so leaving it out would fail the comparison.
    assert penalty_and_grads(out["initial"])[0] > 0.1


def test_keras_reads_the_regularizers_and_reports_the_same_loss(tmp_path):
    out = run_tool(tmp_path, 1)
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
    assert keras_penalty == pytest.approx(penalty_and_grads(out["initial"])[0], abs=1e-5)
    # Keras' training loss is compiled loss + sum(model.losses) (Trainer.compute_loss). Its
    # evaluate() cannot add them up on the numpy backend (ops.sum of a Python list fails there),
    # so the two terms are taken from Keras separately and added here.
    pred = model.predict(out["x"].astype("float32"), batch_size=16, verbose=0)
    data_loss = float(keras.losses.SparseCategoricalCrossentropy()(out["y"], pred))
    assert data_loss + keras_penalty == pytest.approx(out["eval_loss"], abs=1e-5)
    assert out["train_losses"][0] == pytest.approx(out["eval_loss"], abs=1e-6)
