"""PyTorch side of the benchmark (bench/README.md); same workloads and JSON as kerascpp_bench.
Idiomatic eager loop: tensors in memory, a shuffled index permutation per pass (what a
TensorDataset DataLoader does, without its per-sample collate), Adam, CrossEntropyLoss on logits
(the idiomatic equivalent of softmax + sparse categorical cross-entropy)."""
import time

T0 = time.perf_counter()  # process start (before the framework import) for time to first step

import os  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import common  # noqa: E402

cmd, a = common.parse(sys.argv)
threads = int(a.get("threads", 2))
torch.set_num_threads(threads)
torch.manual_seed(1)


def build(kind, width=0):
    if kind == "mlp":
        w1, w2 = (width, width) if width else (512, 256)
        return nn.Sequential(nn.Flatten(), nn.Linear(784, w1), nn.ReLU(), nn.Linear(w1, w2), nn.ReLU(),
                             nn.Linear(w2, 10))
    # NCHW (PyTorch's native layout); the data is permuted once at load time.
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, 10))


def batches(x, y, batch):
    """Endless shuffled mini-batches, indexing in-memory tensors (data loading in the loop)."""
    while True:
        perm = torch.randperm(len(x))
        for i in range(0, len(x), batch):
            idx = perm[i:i + batch]
            yield x[idx], y[idx]


def train():
    kind, batch, width = a.get("model", "mlp"), int(a.get("batch", 128)), int(a.get("width", 0))
    windows, steps = int(a.get("windows", 5)), int(a.get("window_steps", 100))
    warmup = int(a.get("warmup_steps", steps))
    schedule = None
    if kind == "transformer":
        import transformer_torch
        model, opt, schedule, loss_fn = transformer_torch.build()
        sequences = transformer_torch.batches(batch)
        it = (((s, d), t) for s, d, t in sequences)
    else:
        x, y, _, _ = common.load()
        x = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()
        y = torch.from_numpy(y).long()
        model = build(kind, width)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = nn.CrossEntropyLoss()
        it = (((xb,), yb) for xb, yb in batches(x, y, batch))
    first = None
    correct = torch.zeros((), dtype=torch.long)
    model.train()

    def window(n):
        nonlocal first, correct
        t = time.perf_counter()
        for _ in range(n):
            xb, yb = next(it)
            opt.zero_grad(set_to_none=True)
            logits = model(*xb)
            # [batch, classes] (or [batch, steps, vocab] for the Transformer: one row per token)
            logits, yb = logits.reshape(-1, logits.shape[-1]), yb.reshape(-1)
            loss = loss_fn(logits, yb)
            loss.backward()
            opt.step()
            if schedule is not None:
                schedule.step()
            correct += (logits.detach().argmax(1) == yb).sum()  # the accuracy metric the others keep
            if first is None:
                first = time.perf_counter() - T0
        return time.perf_counter() - t

    warmup_s = window(warmup)
    sps = [steps * batch / window(steps) for _ in range(windows)]
    med = common.median(sps)
    common.emit({"framework": "pytorch", "workload": a.get("workload", kind), "model": kind, "batch": batch,
                 "width": width, "replicas": 1, "threads": threads, "samples_per_s": med, "windows": sps,
                 "window_steps": steps, "warmup_s": warmup_s, "time_to_first_step_s": first,
                 "peak_rss_mb": common.peak_rss_mb(),
                 "gflops": med * common.mlp_flops_per_sample(width) / 1e9 if kind == "mlp" else 0,
                 "version": torch.__version__})


def predict():
    samples, warm = int(a.get("samples", 1000)), int(a.get("warmup", 50))
    _, _, xt, _ = common.load()
    xt = torch.from_numpy(xt).permute(0, 3, 1, 2).contiguous()
    model = build("cnn").eval()
    lat, first = [], None
    with torch.inference_mode():
        for i in range(warm + samples):
            t = time.perf_counter()
            out = model(xt[i % len(xt)][None])
            float(out[0, 0])
            dt = time.perf_counter() - t
            if first is None:
                first = time.perf_counter() - T0
            if i >= warm:
                lat.append(dt * 1e3)
    common.emit({"framework": "pytorch", "workload": "predict1", "api": "module(x) eager", "threads": threads,
                 "p50_ms": common.percentile(lat, 50), "p99_ms": common.percentile(lat, 99),
                 "mean_ms": float(np.mean(lat)), "samples": len(lat), "time_to_first_step_s": first,
                 "peak_rss_mb": common.peak_rss_mb()})


train() if cmd == "train" else predict()
