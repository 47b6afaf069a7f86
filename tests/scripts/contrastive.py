"""A siamese encoder trained with a contrastive (InfoNCE / SimCLR-style) loss on two "views" of
each sample: ``F.normalize``, a similarity matrix by ``mm`` of the embeddings over a learnable
temperature, ``logsumexp`` written out next to ``cross_entropy`` against ``torch.arange`` labels,
``F.cosine_similarity`` and ``torch.cdist`` for monitoring and retrieval, a custom
``torch.autograd.Function`` (a scaled softplus with a hand-written backward, with
``ctx.save_for_backward`` and a non-tensor argument), ``masked_fill`` of the diagonal, and SGD.

The two views are made in numpy (no augmentation randomness inside).
"""

from __future__ import annotations

import numpy as np


def make_data(rng: np.random.Generator) -> dict[str, np.ndarray]:
    base = rng.standard_normal((3, 8, 10)).astype(np.float32)
    view1 = base + 0.1 * rng.standard_normal(base.shape).astype(np.float32)
    view2 = base + 0.1 * rng.standard_normal(base.shape).astype(np.float32)
    return {"view1": view1, "view2": view2}


def main(torch, run) -> None:  # noqa: ANN001
    nn = torch.nn
    F = torch.nn.functional

    class ScaledSoftplus(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, beta):  # noqa: ANN001, ANN205
            ctx.save_for_backward(x)
            ctx.beta = beta
            return F.softplus(x * beta) / beta

        @staticmethod
        def backward(ctx, grad_output):  # noqa: ANN001, ANN205
            (x,) = ctx.saved_tensors
            return grad_output * torch.sigmoid(x * ctx.beta), None

    class Encoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(10, 16)
            self.fc2 = nn.Linear(16, 8)
            self.log_temp = nn.Parameter(torch.tensor(np.log(0.5), dtype=torch.float32))

        def forward(self, x):  # noqa: ANN001, ANN202
            h = ScaledSoftplus.apply(self.fc1(x), 2.0)
            return F.normalize(self.fc2(h), dim=1)

    def info_nce(z1, z2, temperature):  # noqa: ANN001, ANN202
        z = torch.cat([z1, z2], dim=0)
        n = z1.shape[0]
        sim = torch.mm(z, z.t()) / temperature
        self_mask = torch.eye(2 * n, dtype=torch.bool)
        sim = sim.masked_fill(self_mask, float("-inf"))
        targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
        # the same loss two ways: logsumexp by hand, and cross_entropy
        by_hand = (torch.logsumexp(sim, dim=1) - sim[torch.arange(2 * n), targets]).mean()
        return by_hand, F.cross_entropy(sim, targets)

    model = Encoder()
    run.sync("encoder", model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)

    for step in range(run.data["view1"].shape[0]):
        x1 = torch.from_numpy(run.data["view1"][step])
        x2 = torch.from_numpy(run.data["view2"][step])
        z1, z2 = model(x1), model(x2)
        loss, ce = info_nce(z1, z2, model.log_temp.exp())
        assert torch.allclose(loss, ce, atol=1e-5)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            pos_sim = F.cosine_similarity(z1, z2, dim=-1).mean()
            dists = torch.cdist(z1, z2)
            top1 = (dists.argmin(dim=1) == torch.arange(z1.size(0))).float().mean()
        run.log(f"loss[{step}]", loss.item())
        run.log(f"positive cosine[{step}]", pos_sim)
        run.log(f"distances[{step}]", dists)
        run.log(f"retrieval top1[{step}]", top1)
        run.log(f"log_temp.grad[{step}]", model.log_temp.grad)
        run.log(f"fc1.weight.grad[{step}]", model.fc1.weight.grad)

    # the custom function's backward against autograd's own derivative of the same expression
    x = torch.linspace(-2, 2, 7, requires_grad=True)
    (g_custom,) = torch.autograd.grad(ScaledSoftplus.apply(x, 3.0).sum(), x)
    (g_auto,) = torch.autograd.grad((F.softplus(3.0 * x) / 3.0).sum(), x)
    assert torch.allclose(g_custom, g_auto, atol=1e-6)
    run.log("custom grad", g_custom)
    run.log("log_temp", model.log_temp)
