"""The regularized model of tests/tools/regularization_steps.cpp in NumPy, shared by
test_regularization.py and test_clipping_and_schedules.py: the tool's runner, the float64 forward
and backward pass with the penalties, and the MaxNorm constraint.

The model: Input(6) -> Dense(8, tanh, L1L2 kernel, L2 bias, MaxNorm kernel) -> Dense(3, softmax,
L2 kernel, L1 bias), sparse categorical crossentropy on one batch of 16 examples.
"""

import json
import os
import subprocess

import numpy as np

import tanh_softmax_reference
from kerascpp_binaries import find_binary

L1L2_KERNEL1 = (0.01, 0.02)
L2_BIAS1 = 0.05
L2_KERNEL2 = 0.03
L1_BIAS2 = 0.01
MAX_NORM = 0.9
STEPS = 20


def run_tool(directory, replicas, *optimizer):
    """Runs the tool (optionally with an optimizer and its parameters) and reads what it wrote."""
    result = subprocess.run([find_binary("regularization_steps"), str(directory), str(replicas), *map(str, optimizer)],
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    with open(os.path.join(directory, "result.json")) as f:
        out = json.load(f)
    read = lambda name, shape: np.fromfile(os.path.join(directory, name), dtype="<f4").reshape(shape)  # noqa: E731
    out["x"] = read("x.f32", (16, 6)).astype(np.float64)
    out["y"] = read("y.f32", (16,)).astype(np.int64)
    out["initial"] = [read(f"w{i}_initial.f32", s).astype(np.float64) for i, s in enumerate(out["shapes"])]
    out["final"] = [read(f"w{i}_final.f32", s).astype(np.float64) for i, s in enumerate(out["shapes"])]
    return out


def penalty_and_grads(w):
    w1, b1, w2, b2 = w
    penalty = (L1L2_KERNEL1[0] * np.abs(w1).sum() + L1L2_KERNEL1[1] * (w1**2).sum() + L2_BIAS1 * (b1**2).sum() +
               L2_KERNEL2 * (w2**2).sum() + L1_BIAS2 * np.abs(b2).sum())
    grads = [L1L2_KERNEL1[0] * np.sign(w1) + 2 * L1L2_KERNEL1[1] * w1, 2 * L2_BIAS1 * b1, 2 * L2_KERNEL2 * w2,
             L1_BIAS2 * np.sign(b2)]
    return penalty, grads


def loss_and_grads(w, x, y):
    """The training loss (mean crossentropy plus the penalties) and its gradient per weight."""
    loss, grads = tanh_softmax_reference.loss_and_grads(w, x, y)
    penalty, pgrads = penalty_and_grads(w)
    return loss + penalty, [g + pg for g, pg in zip(grads, pgrads)]


def max_norm(w):
    norms = np.sqrt((w**2).sum(axis=0, keepdims=True))
    return w * np.clip(norms, 0, MAX_NORM) / (1e-7 + norms)
