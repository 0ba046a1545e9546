"""Gradient clipping (clipnorm, global_clipnorm) and learning-rate schedules driving Adam
(CosineDecay with warmup, the Transformer's inverse-square-root schedule): 20 training steps of
kerascpp against Keras 3's own optimizers.

tests/tools/regularization_steps.cpp trains its regularized two-Dense model (see
regularized_model.py) 20 steps on one batch with the optimizer named on its command line. The
reference: the same weights as Keras variables (numpy backend), the gradient of each step from the
float64 NumPy model, and Keras' optimizer applying it (apply_gradients clips and reads the schedule
at its iteration count as Keras' fit does), then the MaxNorm constraint. Weights and per-step losses
must agree to 1e-5, on one replica and under MirroredStrategy with 2 CPU replicas (which clips the
all-reduced gradient).
"""

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
from regularized_model import STEPS, loss_and_grads, max_norm, run_tool  # noqa: E402

# The tool's SGD (the clipping cases).
LR, MOMENTUM = 0.1, 0.9
# Low enough to bind: the gradients here have norms from about 0.3 (per variable) to 1 (global).
CLIPNORM, GLOBAL_CLIPNORM = 0.2, 0.4
# Warmup from 0.01 to 0.03 over 5 steps, then cosine decay over 12 to alpha = 0.1 of the peak,
# where steps 17-19 stay.
COSINE = (0.01, 12, 0.1, 0.03, 5)
# Peak 0.5 / sqrt(16 * 8) = 0.044 at step 8; the rate is 0 at step 0, as in the official model.
TRANSFORMER = (0.5, 16, 8)


class TransformerSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """The official Transformer's schedule (tensorflow/models official/legacy/transformer)."""

    def __init__(self, initial, hidden_size, warmup_steps):
        self.initial, self.hidden_size, self.warmup_steps = initial, hidden_size, warmup_steps

    def __call__(self, step):
        step = float(keras.ops.convert_to_numpy(step))
        return (self.initial * self.hidden_size**-0.5 * min(1.0, step / self.warmup_steps) /
                np.sqrt(max(step, self.warmup_steps)))


def _keras_reference(initial, x, y, optimizer):
    """The final weights, the per-step losses, and how close an L1-penalized weight came to 0."""
    variables = [keras.Variable(w.astype(np.float32)) for w in initial]
    losses, closest_to_zero = [], np.inf
    for _ in range(STEPS):
        w = [np.asarray(v.numpy(), np.float64) for v in variables]
        closest_to_zero = min(closest_to_zero, np.abs(w[0]).min(), np.abs(w[3]).min())
        loss, grads = loss_and_grads(w, x, y)
        losses.append(loss)
        optimizer.apply_gradients(zip([g.astype(np.float32) for g in grads], variables))
        variables[0].assign(max_norm(np.asarray(variables[0].numpy(), np.float64)).astype(np.float32))
    return [np.asarray(v.numpy(), np.float64) for v in variables], losses, closest_to_zero


def _sgd(**clipping):
    return keras.optimizers.SGD(LR, momentum=MOMENTUM, **clipping)


# Per case: the tool's optimizer arguments, Keras' optimizer, and a baseline that must end
# elsewhere (the same SGD without clipping; Adam at a constant rate), so the case matters.
CASES = {
    "clipnorm": (("clipnorm", CLIPNORM), lambda: _sgd(clipnorm=CLIPNORM), _sgd),
    "global_clipnorm": (("global_clipnorm", GLOBAL_CLIPNORM), lambda: _sgd(global_clipnorm=GLOBAL_CLIPNORM), _sgd),
    "adam_cosine": (("adam_cosine", *COSINE),
                    lambda: keras.optimizers.Adam(
                        keras.optimizers.schedules.CosineDecay(COSINE[0], COSINE[1], alpha=COSINE[2],
                                                               warmup_target=COSINE[3], warmup_steps=COSINE[4])),
                    lambda: keras.optimizers.Adam(COSINE[3])),
    "adam_transformer": (("adam_transformer", *TRANSFORMER),
                         lambda: keras.optimizers.Adam(TransformerSchedule(*TRANSFORMER)),
                         lambda: keras.optimizers.Adam(0.03)),
}


@pytest.mark.parametrize("replicas", [1, 2])
@pytest.mark.parametrize("case", list(CASES))
def test_twenty_steps_match_keras_optimizer(tmp_path, case, replicas):
    tool_args, make_optimizer, make_baseline = CASES[case]
    out = run_tool(tmp_path, replicas, *tool_args)
    keras.backend.clear_session()
    expected_w, expected_losses, closest_to_zero = _keras_reference(out["initial"], out["x"], out["y"],
                                                                    make_optimizer())
    # L1's gradient is sign(w): a weight passing within rounding of 0 could take different signs
    # here and in float32, and Adam would turn that into a difference of a whole step. (With a
    # warmup target of 0.05 one weight passes 1e-7 from 0; choose the parameters so none does.)
    assert closest_to_zero > 1e-4
    np.testing.assert_allclose(out["train_losses"], expected_losses, rtol=0, atol=1e-5)
    for got, want in zip(out["final"], expected_w):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    baseline, _, _ = _keras_reference(out["initial"], out["x"], out["y"], make_baseline())
    assert max(np.abs(a - b).max() for a, b in zip(baseline, expected_w)) > 1e-2
