"""kerascpp's Huber loss against Keras 3's: the per-example values and the logged mean over a
model's predictions (evaluate), for the default delta and another one."""
import os
import subprocess

os.environ.setdefault("KERAS_BACKEND", "numpy")
import keras  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from kerascpp_binaries import find_binary  # noqa: E402


@pytest.mark.parametrize("delta", [1.0, 0.3])
def test_huber_equals_keras(delta):
    rng = np.random.default_rng(3)
    pred = rng.normal(scale=2.0, size=(16, 5)).astype(np.float32)
    target = rng.normal(size=(16, 5)).astype(np.float32)
    args = [find_binary("loss_values"), "huber", str(delta), "16", "5"]
    stdin = " ".join(f"{v:.9g}" for v in np.concatenate([pred.ravel(), target.ravel()]))
    out = subprocess.run(args, input=stdin, capture_output=True, text=True, timeout=60, check=True).stdout
    ours = np.array([float(v) for v in out.split()])
    theirs = keras.losses.Huber(delta=delta, reduction=None)(target, pred)
    np.testing.assert_allclose(ours, np.asarray(theirs, np.float64), rtol=1e-6, atol=1e-7)
