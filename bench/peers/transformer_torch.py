"""The Transformer workload in PyTorch (eager): the same model as examples/transformer_model.hpp
(shared embedding/softmax weights, sinusoid positions, pre-LayerNorm stacks, attention without
biases, dropout 0.1), CrossEntropyLoss with label smoothing 0.1, Adam(0.9, 0.997, 1e-9) and the
official schedule."""
import torch
from torch import nn

import transformer_task as T


class _Block(nn.Module):
    def __init__(self, cross):
        super().__init__()
        self.norms = nn.ModuleList([nn.LayerNorm(T.HIDDEN, eps=1e-6) for _ in range(3 if cross else 2)])
        self.self_att = nn.MultiheadAttention(T.HIDDEN, T.HEADS, dropout=T.DROPOUT, bias=False, batch_first=True)
        self.cross_att = (nn.MultiheadAttention(T.HIDDEN, T.HEADS, dropout=T.DROPOUT, bias=False, batch_first=True)
                          if cross else None)
        self.ffn = nn.Sequential(nn.Linear(T.HIDDEN, T.FILTER), nn.ReLU(), nn.Dropout(T.DROPOUT),
                                 nn.Linear(T.FILTER, T.HIDDEN))
        self.drop = nn.Dropout(T.DROPOUT)

    def forward(self, x, causal=None, memory=None):
        y = self.norms[0](x)
        x = x + self.drop(self.self_att(y, y, y, attn_mask=causal, need_weights=False)[0])
        if self.cross_att is not None:
            y = self.norms[1](x)
            x = x + self.drop(self.cross_att(y, memory, memory, need_weights=False)[0])
        return x + self.drop(self.ffn(self.norms[-1](x)))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Parameter(torch.randn(T.VOCAB, T.HIDDEN) * T.HIDDEN ** -0.5)
        self.register_buffer("signal", torch.from_numpy(T.position_encoding()))
        self.encoder = nn.ModuleList([_Block(False) for _ in range(T.LAYERS)])
        self.decoder = nn.ModuleList([_Block(True) for _ in range(T.LAYERS)])
        self.enc_norm = nn.LayerNorm(T.HIDDEN, eps=1e-6)
        self.dec_norm = nn.LayerNorm(T.HIDDEN, eps=1e-6)
        self.drop = nn.Dropout(T.DROPOUT)
        self.register_buffer("causal", torch.triu(torch.ones(T.LENGTH, T.LENGTH, dtype=torch.bool), 1))

    def forward(self, src, dec):
        x = self.drop(self.emb[src] * T.HIDDEN ** 0.5 + self.signal)
        for block in self.encoder:
            x = block(x)
        memory = self.enc_norm(x)
        x = self.drop(self.emb[dec] * T.HIDDEN ** 0.5 + self.signal)
        for block in self.decoder:
            x = block(x, causal=self.causal, memory=memory)
        return self.dec_norm(x) @ self.emb.t()


def build():
    model = Transformer()
    opt = torch.optim.Adam(model.parameters(), lr=1.0, betas=(T.ADAM["beta_1"], T.ADAM["beta_2"]),
                           eps=T.ADAM["epsilon"])
    schedule = torch.optim.lr_scheduler.LambdaLR(opt, T.learning_rate)
    return model, opt, schedule, nn.CrossEntropyLoss(label_smoothing=T.SMOOTHING)


def batches(batch):
    src, dec, _, tgt = (torch.from_numpy(a).long() for a in T.task(20000))
    while True:
        perm = torch.randperm(len(src))
        for i in range(0, len(src) - batch + 1, batch):
            idx = perm[i:i + batch]
            yield src[idx], dec[idx], tgt[idx]
