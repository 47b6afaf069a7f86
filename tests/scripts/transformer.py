"""A Transformer encoder classifier on padded token sequences: ``nn.TransformerEncoderLayer(
batch_first=True)`` stacked by ``nn.TransformerEncoder``, a key padding mask, learned positional
embeddings as an ``nn.Parameter``, masked mean pooling, ``AdamW`` with two parameter groups
(no weight decay on biases, LayerNorm weights and embeddings), a ``LambdaLR`` linear warmup,
and gradient accumulation over micro-batches with ``clip_grad_norm_``.

The compared runs use ``dropout=0.0`` in the encoder layers (nothing random inside).
"""

from __future__ import annotations

import math

import numpy as np

VOCAB, PAD = 13, 0


def make_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    steps, micro, batch, length = 3, 2, 4, 7
    tokens = rng.integers(1, VOCAB, size=(steps, micro, batch, length))
    lengths = rng.integers(2, length + 1, size=(steps, micro, batch))
    tokens[np.arange(length) >= lengths[..., None]] = PAD
    return {"tokens": tokens, "labels": rng.integers(0, 3, size=(steps, micro, batch))}


def main(torch, run) -> None:  # noqa: ANN001
    nn = torch.nn

    class TextClassifier(nn.Module):
        def __init__(self, d_model: int = 16, nhead: int = 4, layers: int = 2, max_len: int = 32) -> None:
            super().__init__()
            self.tok_emb = nn.Embedding(VOCAB, d_model, padding_idx=PAD)
            self.pos_emb = nn.Parameter(torch.zeros(1, max_len, d_model))
            nn.init.trunc_normal_(self.pos_emb, std=0.02)
            layer = nn.TransformerEncoderLayer(
                d_model, nhead, dim_feedforward=32, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
            )
            self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, 3)
            self.scale = math.sqrt(d_model)

        def forward(self, tokens):  # noqa: ANN001, ANN202
            pad_mask = tokens == PAD  # True where padded: ignored by attention
            x = self.tok_emb(tokens) * self.scale + self.pos_emb[:, : tokens.size(1)]
            x = self.encoder(x, src_key_padding_mask=pad_mask)
            x = self.norm(x)
            keep = (~pad_mask).unsqueeze(-1).float()
            pooled = (x * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
            return self.head(pooled)

    rows, cols = torch.where(torch.as_tensor(run.data["tokens"][0, 0]) == PAD)
    run.log("padded positions", torch.stack([rows, cols]))
    model = TextClassifier()
    run.sync("classifier", model)

    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim < 2 or "norm" in name or name.endswith(".bias") or "emb" in name:
            no_decay.append(param)
        else:
            decay.append(param)
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
        lr=3e-3,
        betas=(0.9, 0.98),
    )
    warmup = 2
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
    criterion = nn.CrossEntropyLoss()
    steps, accum = run.data["tokens"].shape[:2]

    model.train()
    optimizer.zero_grad(set_to_none=True)
    for step in range(steps):
        running = 0.0
        for micro in range(accum):
            tokens = torch.as_tensor(run.data["tokens"][step, micro])
            labels = torch.as_tensor(run.data["labels"][step, micro])
            logits = model(tokens)
            loss = criterion(logits, labels) / accum
            loss.backward()
            running += loss.item()
        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        run.log(f"loss[{step}]", running)
        run.log(f"grad norm[{step}]", grad_norm)
        run.log(f"pos_emb.grad[{step}]", model.pos_emb.grad[0, :7])
        run.log(f"lr[{step}]", [g["lr"] for g in optimizer.param_groups])
        optimizer.zero_grad(set_to_none=True)
        assert model.head.weight.grad is None
    # the padding embedding stays zero and gets no gradient
    assert float(model.tok_emb.weight[PAD].abs().sum()) == 0.0
    run.log("encoder.layers.1.linear1.weight", model.encoder.layers[1].linear1.weight)
    run.log("encoder.layers.0.self_attn.in_proj_weight", model.encoder.layers[0].self_attn.in_proj_weight)

    model.eval()
    with torch.inference_mode():
        probs = model(torch.as_tensor(run.data["tokens"][0, 0])).softmax(-1)
    run.log("probs", probs)
