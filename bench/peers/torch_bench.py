"""PyTorch side of the benchmark (bench/README.md); same workloads and JSON as kerascpp_bench.
Idiomatic eager loop: tensors in memory, a shuffled index permutation per pass (what a
TensorDataset DataLoader does, without its per-sample collate), Adam, CrossEntropyLoss on logits
(the idiomatic equivalent of softmax + sparse categorical cross-entropy).

--device cuda: the model on the GPU, each batch copied to it in the loop (as kerascpp uploads
each batch), strict float32 (TF32 off for matmuls and cuDNN convolutions, as kerascpp keeps
it), cudnn.benchmark on (PyTorch's fastest eager setting for fixed shapes); every window ends
with torch.cuda.synchronize(). --model resnet50: torchvision's ResNet-50 (v1.5, as kerascpp's)
on synthetic 224x224 images, SGD with momentum 0.9; --model resnet20: kerascpp's CIFAR ResNet-20
(CifarResNet below) on synthetic 32x32 images, the same SGD."""
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
device = torch.device(a.get("device", "cpu"))
if device.type == "cuda":
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True


def sync():
    """Waits for the GPU's queued work, so a window's time includes it."""
    if device.type == "cuda":
        torch.cuda.synchronize()


def build(kind, width=0):
    if kind == "mlp":
        w1, w2 = (width, width) if width else (512, 256)
        return nn.Sequential(nn.Flatten(), nn.Linear(784, w1), nn.ReLU(), nn.Linear(w1, w2), nn.ReLU(),
                             nn.Linear(w2, 10))
    # NCHW (PyTorch's native layout); the data is permuted once at load time.
    if kind == "official_cnn":  # the official models' MNIST CNN; padding 2 is Keras' "same" for 5x5,
        # and 2x2 pools of 28 and 14 need no "same" padding
        return nn.Sequential(nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(64 * 7 * 7, 1024), nn.ReLU(), nn.Dropout(0.4), nn.Linear(1024, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(64 * 5 * 5, 128), nn.ReLU(), nn.Linear(128, 10))


class NeuMF(nn.Module):
    """examples/ncf_model.hpp's NeuMF: GMF and MLP tables per id (Xavier-uniform, Keras'
    glorot_uniform), GMF product, MLP relu stack, one logit."""

    def __init__(self):
        super().__init__()
        half = common.NCF_LAYERS[0] // 2
        self.mf_user, self.mf_item = (nn.Embedding(n, common.NCF_MF_DIM) for n in (common.NCF_USERS, common.NCF_ITEMS))
        self.mlp_user, self.mlp_item = (nn.Embedding(n, half) for n in (common.NCF_USERS, common.NCF_ITEMS))
        for e in (self.mf_user, self.mf_item, self.mlp_user, self.mlp_item):
            nn.init.xavier_uniform_(e.weight)
        dims = common.NCF_LAYERS
        self.mlp = nn.Sequential(*[m for i in range(1, len(dims)) for m in (nn.Linear(dims[i - 1], dims[i]), nn.ReLU())])
        self.out = nn.Linear(common.NCF_MF_DIM + dims[-1], 1)

    def forward(self, users, items):
        mf = self.mf_user(users) * self.mf_item(items)
        mlp = self.mlp(torch.cat([self.mlp_user(users), self.mlp_item(items)], dim=1))
        return self.out(torch.cat([mf, mlp], dim=1))


class ConvBN(nn.Sequential):
    """Conv2d (with bias, He-normal like Keras' he_normal) then BatchNorm2d with kerascpp's CIFAR
    settings (PyTorch's momentum weighs the new batch: 1 - Keras' 0.997). Padding 1 for 3x3 gives
    the "same" output sizes."""

    def __init__(self, cin, cout, kernel, stride):
        conv = nn.Conv2d(cin, cout, kernel, stride, padding=kernel // 2)
        nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
        nn.init.zeros_(conv.bias)
        super().__init__(conv, nn.BatchNorm2d(cout, eps=common.RESNET_BN_EPSILON,
                                              momentum=1 - common.RESNET_CIFAR_BN_MOMENTUM))


class BasicBlock(nn.Module):
    """Two 3x3 ConvBNs; a stage's first block has a strided 1x1 ConvBN projection shortcut."""

    def __init__(self, cin, cout, stride, projection):
        super().__init__()
        self.a, self.b = ConvBN(cin, cout, 3, stride), ConvBN(cout, cout, 3, 1)
        self.shortcut = ConvBN(cin, cout, 1, stride) if projection else nn.Identity()

    def forward(self, x):
        return torch.relu(self.b(torch.relu(self.a(x))) + self.shortcut(x))


class CifarResNet(nn.Module):
    """examples/resnet_models.hpp's cifar_resnet(depth): 3x3 conv16 stem, 3 stages of (depth - 2) / 6
    basic blocks with 16/32/64 filters, each opening with a projection block (stride 1, then 2),
    global average pooling, one Linear (logits). NCHW."""

    def __init__(self, depth=20, classes=10):
        super().__init__()
        n, cin, blocks = (depth - 2) // 6, 16, []
        for stage, cout in enumerate((16, 32, 64)):
            for b in range(n):
                blocks.append(BasicBlock(cin, cout, 2 if b == 0 and stage > 0 else 1, b == 0))
                cin = cout
        self.stem, self.blocks = ConvBN(3, 16, 3, 1), nn.Sequential(*blocks)
        self.fc = nn.Linear(64, classes)
        nn.init.kaiming_normal_(self.fc.weight, nonlinearity="relu")
        nn.init.zeros_(self.fc.bias)

    def forward(self, x):
        return self.fc(self.blocks(torch.relu(self.stem(x))).mean((2, 3)))


def cifar_sgd(model):
    """The official SGD; Keras' L2(2e-4) on every conv and dense kernel and bias (not on BatchNorm)
    adds 2e-4 * sum(w^2) to the loss, whose gradient PyTorch's weight_decay gives as 2 * 2e-4 * w."""
    decay = [p for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear)) for p in m.parameters()]
    rest = [p for m in model.modules() if isinstance(m, nn.BatchNorm2d) for p in m.parameters()]
    return torch.optim.SGD([{"params": decay, "weight_decay": 2 * common.RESNET_CIFAR_L2}, {"params": rest}],
                           lr=common.RESNET_LR, momentum=common.RESNET_MOMENTUM)


def count_params(model):
    """Keras' count_params: the parameters and the BatchNorm running statistics (not its step counter)."""
    return sum(p.numel() for p in model.parameters()) + sum(
        b.numel() for b in model.buffers() if b.is_floating_point())


def synthetic_batches(image_shape, classes, batch):
    """One batch made of a pool of min(batch, 64) random images and labels repeated (as kerascpp's
    synthetic_data), given every step; NCHW; on CUDA copied from pinned memory each step."""
    pool = min(batch, 64)
    xs, ys = (torch.from_numpy(v) for v in common.synthetic_pool(image_shape, classes, pool))
    xs, ys = xs.permute(0, 3, 1, 2).contiguous(), ys.long()
    reps = (batch + pool - 1) // pool
    xs, ys = xs.repeat(reps, 1, 1, 1)[:batch], ys.repeat(reps)[:batch]
    if device.type == "cuda":
        xs, ys = xs.pin_memory(), ys.pin_memory()
    return iter(lambda: ((xs.to(device, non_blocking=True),), ys.to(device, non_blocking=True)), None)


def train_ncf():
    batch, windows, steps = int(a.get("batch", 2048)), int(a.get("windows", 5)), int(a.get("window_steps", 100))
    warmup = int(a.get("warmup_steps", steps))
    users, items, labels = (torch.from_numpy(v) for v in common.ncf_data())
    users, items = users[:, 0].long(), items[:, 0].long()
    model = NeuMF()
    opt = torch.optim.Adam(model.parameters(), lr=common.NCF_LR, eps=1e-8)
    loss_fn = nn.BCEWithLogitsLoss()
    first, start = None, 0

    def window(n):
        nonlocal first, start
        t = time.perf_counter()
        for _ in range(n):
            if start + batch > len(users):
                start = 0
            sl = slice(start, start + batch)
            start += batch
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(users[sl], items[sl]), labels[sl])
            loss.backward()
            opt.step()
            if first is None:
                first = time.perf_counter() - T0
        return time.perf_counter() - t

    warmup_s = window(warmup)
    sps = [steps * batch / window(steps) for _ in range(windows)]
    common.emit({"framework": "pytorch", "workload": a.get("workload", "ncf"), "model": "ncf", "batch": batch,
                 "width": 0, "replicas": 1, "threads": threads, "samples_per_s": common.median(sps), "windows": sps,
                 "window_steps": steps, "warmup_s": warmup_s, "time_to_first_step_s": first,
                 "peak_rss_mb": common.peak_rss_mb(), "gflops": 0, "version": torch.__version__})


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
    elif kind == "resnet50":
        import torchvision
        model = torchvision.models.resnet50(num_classes=1000)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        loss_fn = nn.CrossEntropyLoss()
        it = synthetic_batches((224, 224, 3), 1000, batch)
    elif kind == "resnet20":
        model = CifarResNet(20, 10)
        opt = cifar_sgd(model)
        loss_fn = nn.CrossEntropyLoss()
        it = synthetic_batches((32, 32, 3), 10, batch)
    else:
        x, y, _, _ = common.load()
        x = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous()
        y = torch.from_numpy(y).long()
        model = build(kind, width)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        loss_fn = nn.CrossEntropyLoss()
        it = (((xb.to(device),), yb.to(device)) for xb, yb in batches(x, y, batch))
    model.to(device)  # in place: the optimizer keeps the same parameters
    first = first_loss = None
    correct = torch.zeros((), dtype=torch.long, device=device)
    loss_sum = torch.zeros((), device=device)  # the window's losses, for its mean (as Keras' epoch logs)
    model.train()

    def window(n):
        nonlocal first, first_loss, correct
        t = time.perf_counter()
        loss_sum.zero_()
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
            loss_sum.add_(loss.detach())
            if first is None:
                sync()
                first, first_loss = time.perf_counter() - T0, float(loss)
        sync()
        return time.perf_counter() - t

    warmup_s = window(warmup)
    sps = [steps * batch / window(steps) for _ in range(windows)]
    med = common.median(sps)
    common.emit({"framework": "pytorch", "workload": a.get("workload", kind), "model": kind, "batch": batch,
                 "width": width, "replicas": 1, "threads": threads, "samples_per_s": med, "windows": sps,
                 "window_steps": steps, "warmup_s": warmup_s, "time_to_first_step_s": first,
                 "peak_rss_mb": common.peak_rss_mb(),
                 "gflops": med * common.mlp_flops_per_sample(width) / 1e9 if kind == "mlp" else 0,
                 "version": torch.__version__, "device": device.type, "params": count_params(model),
                 "first_loss": first_loss, "last_loss": float(loss_sum) / steps})


def predict():
    samples, warm = int(a.get("samples", 1000)), int(a.get("warmup", 50))
    _, _, xt, _ = common.load()
    xt = torch.from_numpy(xt).permute(0, 3, 1, 2).contiguous()
    model = build("cnn").to(device).eval()
    lat, first = [], None
    with torch.inference_mode():
        for i in range(warm + samples):
            t = time.perf_counter()
            out = model(xt[i % len(xt)][None].to(device))
            float(out[0, 0])
            dt = time.perf_counter() - t
            if first is None:
                first = time.perf_counter() - T0
            if i >= warm:
                lat.append(dt * 1e3)
    common.emit({"framework": "pytorch", "workload": "predict1", "api": "module(x) eager", "threads": threads,
                 "device": device.type,
                 "p50_ms": common.percentile(lat, 50), "p99_ms": common.percentile(lat, 99),
                 "mean_ms": float(np.mean(lat)), "samples": len(lat), "time_to_first_step_s": first,
                 "peak_rss_mb": common.peak_rss_mb()})


if cmd == "predict":
    predict()
elif a.get("model") == "ncf":
    train_ncf()
else:
    train()
