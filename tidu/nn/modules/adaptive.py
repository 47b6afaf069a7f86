"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016), PyTorch's layout."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ... import ops
from .. import functional as F  # noqa: N812 - PyTorch's name
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module


class _ASMoutput(NamedTuple):
    output: Any
    loss: Any


class AdaptiveLogSoftmaxWithLoss(Module):
    """An adaptive softmax: a head over the ``cutoffs[0]`` most frequent classes plus one entry per
    cluster, and one smaller two-layer tail per cluster (its hidden size ``in_features //
    div_value**(i + 1)``). ``forward(input, target)`` returns ``(output, loss)``: the target's
    log-probability per example and their negated mean; ``log_prob`` gives every class's,
    ``predict`` the most likely class.

    >>> import tidu
    >>> asm = tidu.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7])
    >>> out = asm(tidu.randn(3, 8), tidu.tensor([0, 5, 9]))
    >>> out.output.shape, out.loss.shape, asm.log_prob(tidu.randn(3, 8)).exp().sum(1).round()
    (tidu.Size([3]), tidu.Size([]), tensor([1., 1., 1.], grad_fn=<round>))
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > (n_classes - 1)
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, dtype=dtype),
                                        Linear(hsz, osz, bias=False, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Any, target_: Any) -> _ASMoutput:
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        inp = input_ if batched else input_.unsqueeze(0)
        target = (target_ if batched else target_.unsqueeze(0)).detach().cpu().numpy().astype(np.int64)
        batch = target.shape[0]
        output = ops.zeros(batch, dtype=inp.dtype, device=inp.device)
        gather_inds = np.zeros(batch, np.int64)
        used_rows = 0
        bounds = [0, *self.cutoffs]
        for i in range(len(bounds) - 1):
            mask = (target >= bounds[i]) & (target < bounds[i + 1])
            rows = np.flatnonzero(mask)
            if rows.size == 0:
                continue
            if i == 0:
                gather_inds[rows] = target[rows]
            else:
                row_index = ops.tensor(rows, device=inp.device)
                cluster_logprob = F.log_softmax(self.tail[i - 1](ops.index_select(inp, 0, row_index)), dim=1)
                relative = ops.tensor((target[rows] - bounds[i])[:, None], device=inp.device)
                local = cluster_logprob.gather(1, relative).squeeze(1)
                gather_inds[rows] = self.shortlist_size + i - 1
                output = ops.index_add(output, 0, row_index, local)
            used_rows += rows.size
        if used_rows != batch:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min()}, {target.max()}] were found. ")
        head_logprob = F.log_softmax(self.head(inp), dim=1)
        output = output + head_logprob.gather(1, ops.tensor(gather_inds[:, None], device=inp.device)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Any, head_output: Any) -> Any:  # noqa: A002
        head_logprob = F.log_softmax(head_output, dim=1)
        pieces = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            pieces.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return ops.cat(pieces, dim=1)

    def log_prob(self, input: Any) -> Any:  # noqa: A002
        """The log-probability of every class, ``(N, n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Any) -> Any:  # noqa: A002
        """The most likely class of each example (``log_prob(input).argmax(1)``, computing the
        tails only for the examples whose head picks a cluster)."""
        head_output = self.head(input)
        output = ops.argmax(head_output, dim=1)
        outside = (output >= self.shortlist_size).numpy()
        if not outside.any():
            return output
        if outside.all():
            return ops.argmax(self._get_full_log_prob(input, head_output), dim=1)
        rows = ops.tensor(np.flatnonzero(outside), device=input.device)
        best = ops.argmax(self._get_full_log_prob(ops.index_select(input, 0, rows),
                                                  ops.index_select(head_output, 0, rows)), dim=1)
        return ops.index_copy(output.detach(), 0, rows, best)
