"""The Transformer workload's data and sizes, shared by the TF-Keras and PyTorch peers: the
official Transformer's tiny config (6 layers, hidden 32, 4 heads, filter 256) on
examples/transformer.cpp's reversal task (10 tokens, vocabulary 18, id 1 starts the decoder)."""
import numpy as np

LENGTH, VOCAB = 10, 18
HIDDEN, HEADS, FILTER, LAYERS = 32, 4, 256, 6
DROPOUT, SMOOTHING = 0.1, 0.1
LR, WARMUP = 2.0, 200
ADAM = dict(beta_1=0.9, beta_2=0.997, epsilon=1e-9)


def task(n, seed=2):
    """(source, decoder inputs, positions, target ids), int32 [n, LENGTH] each."""
    rng = np.random.default_rng(seed)
    src = rng.integers(2, VOCAB, size=(n, LENGTH), dtype=np.int32)
    tgt = np.ascontiguousarray(src[:, ::-1])
    dec = np.concatenate([np.ones((n, 1), np.int32), tgt[:, :-1]], axis=1)
    pos = np.tile(np.arange(LENGTH, dtype=np.int32), (n, 1))
    return src, dec, pos, tgt


def position_encoding():
    """The official sinusoid table [LENGTH, HIDDEN]: sin in the first half, cos in the second."""
    half = HIDDEN // 2
    inv = np.exp(np.arange(half) * -(np.log(1.0e4) / max(half - 1, 1)))
    t = np.arange(LENGTH)[:, None] * inv[None, :]
    return np.concatenate([np.sin(t), np.cos(t)], axis=1).astype(np.float32)


def learning_rate(step):
    """The official schedule (kerascpp's TransformerSchedule)."""
    step = max(float(step), 1.0)
    return LR * HIDDEN ** -0.5 * min(1.0, step / WARMUP) * max(step, WARMUP) ** -0.5
