"""The Transformer workload in Keras 3 (TensorFlow backend): the same model as
examples/transformer_model.hpp (shared embedding/softmax weights, sinusoid positions from a
frozen Embedding, pre-LayerNormalization stacks, MultiHeadAttention without biases), the same
loss (label-smoothed categorical cross-entropy on logits), optimizer and schedule."""
import keras
import numpy as np
import tensorflow as tf
from keras import ops

import transformer_task as T

L = keras.layers


class SharedEmbedding(L.Layer):
    """Embeds ids (times sqrt(hidden)) or, in "linear" mode, projects hidden states to logits."""

    def build(self, _):
        self.w = self.add_weight(shape=(T.VOCAB, T.HIDDEN),
                                 initializer=keras.initializers.RandomNormal(0.0, T.HIDDEN ** -0.5))

    def call(self, x, mode="embedding"):
        if mode == "embedding":
            return ops.take(self.w, x, axis=0) * (T.HIDDEN ** 0.5)
        return ops.matmul(x, ops.transpose(self.w))


class Schedule(keras.optimizers.schedules.LearningRateSchedule):
    def __call__(self, step):
        step = ops.maximum(ops.cast(step, "float32"), 1.0)
        return T.LR * T.HIDDEN ** -0.5 * ops.minimum(1.0, step / T.WARMUP) * ops.rsqrt(ops.maximum(step, T.WARMUP))


def _pre_post(x, sublayer):
    y = L.LayerNormalization(epsilon=1e-6)(x)
    y = L.Dropout(T.DROPOUT)(sublayer(y))
    return L.Add()([x, y])


def _ffn(y):
    h = L.Dropout(T.DROPOUT)(L.Dense(T.FILTER, activation="relu")(y))
    return L.Dense(T.HIDDEN)(h)


def _attention():
    return L.MultiHeadAttention(T.HEADS, T.HIDDEN // T.HEADS, dropout=T.DROPOUT, use_bias=False)


def build():
    src = keras.Input((T.LENGTH,), dtype="int32")
    dec = keras.Input((T.LENGTH,), dtype="int32")
    pos = keras.Input((T.LENGTH,), dtype="int32")
    emb = SharedEmbedding()
    table = L.Embedding(T.LENGTH, T.HIDDEN, trainable=False)
    signal = table(pos)
    table.set_weights([T.position_encoding()])
    x = L.Dropout(T.DROPOUT)(L.Add()([emb(src), signal]))
    for _ in range(T.LAYERS):
        att = _attention()
        x = _pre_post(x, lambda y: att(y, y))
        x = _pre_post(x, _ffn)
    encoded = L.LayerNormalization(epsilon=1e-6)(x)
    x = L.Dropout(T.DROPOUT)(L.Add()([emb(dec), signal]))
    for _ in range(T.LAYERS):
        self_att, enc_att = _attention(), _attention()
        x = _pre_post(x, lambda y: self_att(y, y, use_causal_mask=True))
        x = _pre_post(x, lambda y: enc_att(y, encoded))
        x = _pre_post(x, _ffn)
    logits = emb(L.LayerNormalization(epsilon=1e-6)(x), mode="linear")
    model = keras.Model([src, dec, pos], logits)
    model.compile(optimizer=keras.optimizers.Adam(Schedule(), **T.ADAM),
                  loss=keras.losses.CategoricalCrossentropy(from_logits=True, label_smoothing=T.SMOOTHING),
                  metrics=["accuracy"])
    return model


def dataset(batch):
    src, dec, pos, tgt = T.task(20000)
    y = np.eye(T.VOCAB, dtype=np.float32)[tgt]
    return (tf.data.Dataset.from_tensor_slices(((src, dec, pos), y)).shuffle(20000)
            .batch(batch, drop_remainder=True).repeat().prefetch(tf.data.AUTOTUNE))
