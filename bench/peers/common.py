"""Shared by the peer benchmarks: Fashion-MNIST from the Debian package's gzip IDX files (the
same files kerascpp::datasets::fashion_mnist::load() reads), timing helpers and JSON output."""
import gzip
import json
import os
import resource
import sys
import time

import numpy as np

DATA_DIR = os.environ.get("KERASCPP_DATA", "/usr/share/datasets/fashion-mnist")
if os.path.isdir(os.path.join(DATA_DIR, "fashion-mnist")):
    DATA_DIR = os.path.join(DATA_DIR, "fashion-mnist")


def _idx(name):
    path = os.path.join(DATA_DIR, name)
    opener = gzip.open if os.path.exists(path + ".gz") else open
    with opener(path + ".gz" if opener is gzip.open else path, "rb") as f:
        data = f.read()
    ndim = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def load():
    """(x_train float32 (N,28,28,1) in [0,1], y_train int32, x_test, y_test), like kerascpp's load()."""
    def images(n):
        return (_idx(n).astype(np.float32) / 255.0)[..., None]
    return (images("train-images-idx3-ubyte"), _idx("train-labels-idx1-ubyte").astype(np.int32),
            images("t10k-images-idx3-ubyte"), _idx("t10k-labels-idx1-ubyte").astype(np.int32))


# NCF (bench/README.md, workload ncf_b2048): the official run.sh NeuMF on MovieLens-1M shapes.
NCF_USERS, NCF_ITEMS, NCF_MF_DIM, NCF_LAYERS, NCF_LR = 6040, 3706, 64, [256, 256, 128, 64], 0.0005


def ncf_data(n=1 << 20):
    """Random (user, item) ids of shape (n, 1) int32 and labels (n, 1) float32, a fifth positive
    (num_neg 4): the shapes and proportions of kerascpp_bench's ncf_dataset()."""
    rng = np.random.default_rng(3)
    users = rng.integers(0, NCF_USERS, size=(n, 1), dtype=np.int32)
    items = rng.integers(0, NCF_ITEMS, size=(n, 1), dtype=np.int32)
    labels = (np.arange(n) % 5 == 0).astype(np.float32)[:, None]
    return users, items, labels


# The CIFAR ResNets (bench/README.md, workload resnet20_b128): examples/resnet_models.hpp's
# cifar_resnet, after the official resnet_cifar_model.py. Keras' BatchNormalization momentum is the
# running statistics' decay; PyTorch's momentum is the new batch's weight: 1 - 0.997.
RESNET_CIFAR_BN_MOMENTUM, RESNET_BN_EPSILON, RESNET_CIFAR_L2 = 0.997, 1e-5, 2e-4
RESNET_LR, RESNET_MOMENTUM = 0.1, 0.9  # the official SGD at its base rate (CIFAR: per 128 images)


def synthetic_pool(image_shape, classes, pool, seed=42):
    """`pool` random images (N, *image_shape) float32, truncated normal with mean 127 and stddev 60
    cut at 2 stddev (the official get_synth_input_fn, as examples::resnet::synthetic_data), and
    random int32 labels; the workloads repeat the pool forever, so the values cost nothing in the loop."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((pool, *image_shape), dtype=np.float32)
    while (out := np.abs(z) > 2).any():
        z[out] = rng.standard_normal(int(out.sum()), dtype=np.float32)
    return 127 + 60 * z, rng.integers(0, classes, size=pool, dtype=np.int32)


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def median(v):
    return float(np.median(v)) if len(v) else 0.0


def percentile(v, p):
    return float(np.percentile(v, p)) if len(v) else 0.0


def mlp_flops_per_sample(width):
    dims = [784, width, width, 10] if width else [784, 512, 256, 10]
    return sum(2.0 * dims[i] * dims[i + 1] * (2 if i == 0 else 3) for i in range(len(dims) - 1))


def emit(record):
    print(json.dumps(record), flush=True)


def parse(argv):
    """`train|predict --name value ...` -> (command, dict)."""
    if len(argv) < 2 or argv[1] not in ("train", "predict"):
        sys.exit(f"usage: {argv[0]} train|predict [--name value ...] (see bench/README.md)")
    kv = {}
    rest = argv[2:]
    for i in range(0, len(rest), 2):
        kv[rest[i].lstrip("-").replace("-", "_")] = rest[i + 1]
    return argv[1], kv


class Timer:
    def __init__(self):
        self.t = time.perf_counter()

    def elapsed(self):
        return time.perf_counter() - self.t
