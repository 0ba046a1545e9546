"""TensorFlow-Keras side of the benchmark (bench/README.md); same workloads and JSON as
kerascpp_bench. Idiomatic fast path: Keras model.fit on a tf.data pipeline (shuffle, batch,
repeat, prefetch), predict via model.predict and model(x)."""
import time

T0 = time.perf_counter()  # process start (before the framework import) for time to first step

import os  # noqa: E402
import sys  # noqa: E402

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402

import common  # noqa: E402

cmd, a = common.parse(sys.argv)
threads = int(a.get("threads", 2))
mirrored = int(a.get("replicas", 1)) > 1
tf.config.threading.set_intra_op_parallelism_threads(threads)
tf.config.threading.set_inter_op_parallelism_threads(1)
if mirrored:  # TF's own MirroredStrategy over 2 logical CPUs (sharing the 2-thread pools)
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * int(a["replicas"]))
keras.utils.set_random_seed(1)


def build(kind, width=0):
    L = keras.layers
    if kind == "mlp":
        hidden = [width, width] if width else [512, 256]
        layers = [L.Input((28, 28, 1)), L.Flatten()] + [L.Dense(u, activation="relu") for u in hidden]
    elif kind == "official_cnn":  # the official models' MNIST CNN: examples::fashion_mnist_model("cnn")
        layers = [L.Input((28, 28, 1)), L.Conv2D(32, 5, padding="same", activation="relu"),
                  L.MaxPooling2D(2, padding="same"), L.Conv2D(64, 5, padding="same", activation="relu"),
                  L.MaxPooling2D(2, padding="same"), L.Flatten(), L.Dense(1024, activation="relu"), L.Dropout(0.4)]
    else:
        layers = [L.Input((28, 28, 1)), L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(2),
                  L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2), L.Flatten(),
                  L.Dense(128, activation="relu")]
    return keras.Sequential(layers + [L.Dense(10, activation="softmax")])


def build_ncf():
    """NeuMF as examples/ncf_model.hpp builds it: GMF and MLP tables per id, Multiply, Concatenate,
    Dense(256, 128, 64, relu), Concatenate, Dense(1) logits."""
    L = keras.layers
    user, item = L.Input((1,), dtype="int32"), L.Input((1,), dtype="int32")

    def table(ids, width, x):
        return L.Flatten()(L.Embedding(ids, width, embeddings_initializer="glorot_uniform")(x))

    mf = L.Multiply()([table(common.NCF_USERS, common.NCF_MF_DIM, user), table(common.NCF_ITEMS, common.NCF_MF_DIM, item)])
    half = common.NCF_LAYERS[0] // 2
    mlp = L.Concatenate()([table(common.NCF_USERS, half, user), table(common.NCF_ITEMS, half, item)])
    for units in common.NCF_LAYERS[1:]:
        mlp = L.Dense(units, activation="relu")(mlp)
    logits = L.Dense(1, kernel_initializer="lecun_uniform")(L.Concatenate()([mf, mlp]))
    model = keras.Model([user, item], logits)
    model.compile(optimizer=keras.optimizers.Adam(common.NCF_LR, epsilon=1e-8),
                  loss=keras.losses.BinaryCrossentropy(from_logits=True))
    return model


def build_cifar_resnet(depth=20, classes=10):
    """examples/resnet_models.hpp's cifar_resnet (the official resnet_cifar_model.py) in Keras layers:
    ZeroPadding2D(1) + "valid" 3x3 conv16 stem, 3 stages of (depth - 2) / 6 basic blocks with 16/32/64
    filters, each stage opening with a 1x1 projection shortcut (stride 1, then 2); convs with biases,
    he_normal, L2(2e-4) on kernels and biases; BatchNormalization(0.997, 1e-5);
    GlobalAveragePooling2D and a he_normal, L2 Dense(classes, softmax). Compiled with the official SGD."""
    L, l2 = keras.layers, keras.regularizers.L2(common.RESNET_CIFAR_L2)

    def conv_bn(x, filters, kernel, stride, padding=None):
        x = L.Conv2D(filters, kernel, strides=stride, padding=padding or ("valid" if kernel == 1 else "same"),
                     kernel_initializer="he_normal", kernel_regularizer=l2, bias_regularizer=l2)(x)
        return L.BatchNormalization(momentum=common.RESNET_CIFAR_BN_MOMENTUM, epsilon=common.RESNET_BN_EPSILON)(x)

    def block(x, filters, stride, projection):
        shortcut = conv_bn(x, filters, 1, stride) if projection else x
        y = L.ReLU()(conv_bn(x, filters, 3, stride))
        return L.ReLU()(L.Add()([conv_bn(y, filters, 3, 1), shortcut]))

    inputs = L.Input((32, 32, 3))
    x = L.ReLU()(conv_bn(L.ZeroPadding2D(1)(inputs), 16, 3, 1, "valid"))
    for stage, filters in enumerate((16, 32, 64)):
        for b in range((depth - 2) // 6):
            x = block(x, filters, 2 if b == 0 and stage > 0 else 1, b == 0)
    x = L.GlobalAveragePooling2D()(x)
    outputs = L.Dense(classes, activation="softmax", kernel_initializer="he_normal", kernel_regularizer=l2,
                      bias_regularizer=l2)(x)
    model = keras.Model(inputs, outputs, name=f"resnet{depth}")
    model.compile(optimizer=keras.optimizers.SGD(common.RESNET_LR, momentum=common.RESNET_MOMENTUM),
                  loss=keras.losses.SparseCategoricalCrossentropy(), metrics=["accuracy"])
    return model


def compile_(model):
    model.compile(optimizer=keras.optimizers.Adam(1e-3), loss=keras.losses.SparseCategoricalCrossentropy(),
                  metrics=["accuracy"])


class WindowTimer(keras.callbacks.Callback):
    """Times each fit() epoch (a window); keeps the first step's loss and the last window's mean loss."""

    def __init__(self):
        super().__init__()
        self.seconds, self.first_step_s, self.first_loss, self.last_loss = [], None, None, None

    def on_epoch_begin(self, epoch, logs=None):
        self.t = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self.t)
        self.last_loss = float(logs["loss"]) if logs and "loss" in logs else None

    def on_train_batch_end(self, batch, logs=None):
        if self.first_step_s is None:
            self.first_step_s = time.perf_counter() - T0
            self.first_loss = float(logs["loss"]) if logs and "loss" in logs else None


def train():
    kind, batch, width = a.get("model", "mlp"), int(a.get("batch", 128)), int(a.get("width", 0))
    windows, steps = int(a.get("windows", 5)), int(a.get("window_steps", 100))
    warmup = int(a.get("warmup_steps", steps))
    if kind == "transformer":  # one replica: the workload compares single-process training
        import transformer_tf
        ds = transformer_tf.dataset(batch)
        model = transformer_tf.build()
    elif kind == "ncf":  # one replica, like the transformer workload
        users, items, labels = common.ncf_data()
        ds = tf.data.Dataset.from_tensor_slices(((users, items), labels)).batch(batch).repeat()
        ds = ds.prefetch(tf.data.AUTOTUNE)
        model = build_ncf()
    elif kind == "resnet20":  # synthetic CIFAR-10 shapes, a pool of 64 images repeated (as kerascpp_bench)
        x, y = common.synthetic_pool((32, 32, 3), 10, min(batch, 64))
        ds = tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(batch, drop_remainder=True)
        ds = ds.prefetch(tf.data.AUTOTUNE)
        model = build_cifar_resnet()
    else:
        x, y, _, _ = common.load()
        ds = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(60000).batch(batch).repeat().prefetch(tf.data.AUTOTUNE)
        if mirrored:
            strategy = tf.distribute.MirroredStrategy([d.name for d in tf.config.list_logical_devices("CPU")])
            with strategy.scope():
                model = build(kind, width)
                compile_(model)
        else:
            model = build(kind, width)
            compile_(model)
    timer = WindowTimer()
    model.fit(ds, epochs=1, steps_per_epoch=warmup, callbacks=[timer], verbose=0)
    warmup_s = timer.seconds.pop()
    model.fit(ds, epochs=windows, steps_per_epoch=steps, callbacks=[timer], verbose=0)
    sps = [steps * batch / s for s in timer.seconds]
    med = common.median(sps)
    common.emit({"framework": "tensorflow", "workload": a.get("workload", kind), "model": kind, "batch": batch,
                 "width": width, "replicas": int(a.get("replicas", 1)), "threads": threads, "samples_per_s": med,
                 "windows": sps, "window_steps": steps, "warmup_s": warmup_s,
                 "time_to_first_step_s": timer.first_step_s, "peak_rss_mb": common.peak_rss_mb(),
                 "gflops": med * common.mlp_flops_per_sample(width) / 1e9 if kind == "mlp" else 0,
                 "strategy": "MirroredStrategy(2 logical CPUs)" if mirrored else "default",
                 "version": tf.__version__, "params": model.count_params(), "first_loss": timer.first_loss,
                 "last_loss": timer.last_loss})


def predict():
    samples, warm = int(a.get("samples", 1000)), int(a.get("warmup", 50))
    dsamples = int(a.get("dataset_samples", 200))
    _, _, xt, _ = common.load()
    model = build("cnn")
    compile_(model)

    def measure(fn, n):
        lat, first = [], None
        for i in range(warm + n):
            t = time.perf_counter()
            out = fn(xt[i % len(xt)][None])
            np.asarray(out)[0, 0]
            dt = time.perf_counter() - t
            if first is None:
                first = time.perf_counter() - T0
            if i >= warm:
                lat.append(dt * 1e3)
        return lat, first

    for api, fn, n in (("model(x)", lambda x: model(x, training=False), samples),
                       ("predict", lambda x: model.predict(x, verbose=0), dsamples)):
        lat, first = measure(fn, n)
        common.emit({"framework": "tensorflow", "workload": "predict1", "api": api, "threads": threads,
                     "p50_ms": common.percentile(lat, 50), "p99_ms": common.percentile(lat, 99),
                     "mean_ms": float(np.mean(lat)), "samples": len(lat), "time_to_first_step_s": first,
                     "peak_rss_mb": common.peak_rss_mb()})


train() if cmd == "train" else predict()
