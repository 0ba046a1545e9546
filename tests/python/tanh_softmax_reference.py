"""A float64 NumPy reference of the two-Dense classifier several tools build:
x -> Dense(tanh) -> Dense(softmax), sparse categorical crossentropy reduced as Keras'
sum_over_batch_size (sum of sample_weight * loss over the batch, divided by N, not by the
weights' sum)."""

import numpy as np


def loss_and_grads(w, x, y, sample_weight=None):
    """The loss and its gradient for [kernel1, bias1, kernel2, bias2]."""
    w1, b1, w2, b2 = w
    n = x.shape[0]
    sw = np.ones(n) if sample_weight is None else sample_weight
    h = np.tanh(x @ w1 + b1)
    z = h @ w2 + b2
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    loss = (sw * -np.log(p[np.arange(n), y])).sum() / n
    dz = p.copy()
    dz[np.arange(n), y] -= 1
    dz *= sw[:, None] / n
    dh = dz @ w2.T * (1 - h**2)
    return loss, [x.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0)]
