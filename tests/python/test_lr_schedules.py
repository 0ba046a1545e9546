"""CosineDecay (with and without warmup) against Keras 3's own, and TransformerSchedule against
the official Transformer's formula written out in NumPy, at every step of a run and beyond."""
import os
import subprocess

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kerascpp_binaries import find_binary  # noqa: E402

STEPS = list(range(0, 60)) + [99, 100, 101, 500, 10**6]


def ours(*params):
    out = subprocess.run([find_binary("lr_schedule_values"), *map(str, params), "--", *map(str, STEPS)],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return np.array([float(v) for v in out.split()])


@pytest.mark.parametrize("initial, decay_steps, alpha, warmup", [
    (0.1, 50, 0.0, None),
    (0.05, 37, 0.2, None),
    (0.0, 40, 0.0, (0.1, 10)),     # warmup from 0 to 0.1 over 10 steps, then cosine over 40
    (0.01, 30, 0.1, (0.5, 25)),
])
def test_cosine_decay_equals_keras(initial, decay_steps, alpha, warmup):
    kwargs = dict(alpha=alpha) if warmup is None else dict(alpha=alpha, warmup_target=warmup[0],
                                                           warmup_steps=warmup[1])
    keras_schedule = keras.optimizers.schedules.CosineDecay(initial, decay_steps, **kwargs)
    expected = np.array([float(keras_schedule(step)) for step in STEPS])
    got = ours("cosine", initial, decay_steps, alpha, *(warmup or ()))
    # Keras computes in float32; ours in double.
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    if warmup:  # the ramp really ramps and the peak is the target
        assert got[0] == pytest.approx(initial) and got[warmup[1]] == pytest.approx(warmup[0])


@pytest.mark.parametrize("initial, hidden, warmup", [(2.0, 512, 16000), (1.0, 64, 20), (0.5, 128, 7)])
def test_transformer_schedule_equals_the_official_formula(initial, hidden, warmup):
    step = np.array(STEPS, dtype=np.float64)
    # The official models' LearningRateSchedule (tf.keras), step by step.
    expected = initial * hidden ** -0.5 * np.minimum(1.0, step / warmup) / np.sqrt(np.maximum(step, warmup))
    got = ours("transformer", initial, hidden, warmup)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)
    # The closed form of "Attention Is All You Need": d^-0.5 * min(step^-0.5, step * warmup^-1.5).
    positive = step > 0
    noam = initial * hidden ** -0.5 * np.minimum(step[positive] ** -0.5, step[positive] * warmup ** -1.5)
    np.testing.assert_allclose(got[positive], noam, rtol=1e-12)
