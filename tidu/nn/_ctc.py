"""``ctc_loss``: the connectionist temporal classification loss, the forward algorithm in log space
composed from recorded ops, so its gradient (reverse mode, forward mode, any order) is the
derivative of the loss itself.

Per sample, the extended label sequence ``l'`` puts a blank before, between and after the
target's labels (``2 L + 1`` states). The forward variables are

    alpha_0(0) = lp_0(blank),  alpha_0(1) = lp_0(l_1)
    alpha_t(s) = lp_t(l'_s) + logsumexp(alpha_{t-1}(s), alpha_{t-1}(s-1), alpha_{t-1}(s-2))

(the third term only where ``l'_s`` is a label that differs from ``l'_{s-2}``), and the loss is
``-logsumexp(alpha_{T-1}(2L), alpha_{T-1}(2L-1))``. The batch runs together, each sample's
alpha frozen after its own input length. Unreachable states hold a large negative number
instead of ``-inf``, so their (zero) gradients stay finite; a sample whose target cannot fit
its input (fewer steps than labels plus repeats) gets ``inf`` (0 with ``zero_infinity``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops
from ..core.autocast import policy as autocast_policy
from ..core.half import computed_in_float32
from ..tensor import Tensor

_UNREACHABLE = -1e30


def _as_lengths(lengths: Any, name: str) -> np.ndarray:
    if isinstance(lengths, Tensor):
        if lengths.dtype.is_floating_point:
            raise RuntimeError(f"{name} must be integral")
        return lengths.detach().cpu().numpy().astype(np.int64).reshape(-1)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


@autocast_policy("fp32")
@computed_in_float32
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Any, target_lengths: Any, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The CTC loss of ``log_probs`` (``(T, N, C)`` or unbatched ``(T, C)``, log-probabilities over
    ``C`` classes) against ``targets``: padded ``(N, S)`` or the ``N`` targets concatenated (1-D,
    ``sum(target_lengths)``). ``input_lengths`` and ``target_lengths`` give each sample's lengths.

    ``reduction='mean'`` divides each loss by its target length (at least 1) and averages over the
    batch; ``'sum'`` adds; ``'none'`` gives one loss per sample. ``zero_infinity`` turns the infinite
    losses of targets that cannot fit (and their gradients) into zeros.

    Gradient: the derivative of the loss in ``log_probs`` (composed from recorded ops). PyTorch's
    kernel returns that plus ``exp(log_probs)`` within each input length, which only agrees after
    ``log_softmax``'s backward (where it vanishes); see docs/guides/pytorch-differences.md.

    >>> import tidu
    >>> log_probs = tidu.tensor([[0.6, 0.4], [0.5, 0.5], [0.3, 0.7]]).log().unsqueeze(1)  # T=3, N=1, C=2
    >>> loss = tidu.nn.functional.ctc_loss(log_probs, tidu.tensor([[1]]), [3], [1], reduction="sum")
    >>> round(loss.exp().item() ** -1, 4)  # P(collapse to [1]) = 1 - P(0,0,0) - P(1,0,1) = 1 - 0.09 - 0.14
    0.77
    """
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.ndim == 1 else targets
    if log_probs.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs to be 2-D or 3-D, but got {log_probs.ndim}-D")
    steps, batch, classes = log_probs.shape
    in_lens, tgt_lens = _as_lengths(input_lengths, "input_lengths"), _as_lengths(target_lengths, "target_lengths")
    if len(in_lens) != batch:
        raise RuntimeError(f"input_lengths must be of size batch_size, but got {len(in_lens)} for batch size {batch}")
    if len(tgt_lens) != batch:
        raise RuntimeError(f"target_lengths must be of size batch_size, but got {len(tgt_lens)} for batch size {batch}")
    if (in_lens > steps).any():
        n = int(np.argmax(in_lens > steps))
        raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value {in_lens[n]} "
                           f"(while checking arguments for ctc_loss_cpu)")
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    flat = targets.detach().cpu().numpy().astype(np.int64)
    if flat.ndim == 1 and not unbatched:  # concatenated targets
        starts = np.concatenate([[0], np.cumsum(tgt_lens)[:-1]])
        labels = [flat[s:s + n] for s, n in zip(starts, tgt_lens, strict=True)]
    else:
        for length in tgt_lens:
            if length > flat.shape[1]:
                raise RuntimeError(f"Expected tensor to have size at least {length} at dimension 1, but got size "
                                   f"{flat.shape[1]} for argument #2 'targets' (while checking arguments for "
                                   "ctc_loss_cpu)")
        labels = [flat[n, :length] for n, length in enumerate(tgt_lens)]

    states = 2 * int(tgt_lens.max(initial=0)) + 1
    ext = np.full((batch, states), blank, np.int64)  # the extended labels, blanks between
    skip = np.zeros((batch, states), bool)  # may alpha(s) come from alpha(s-2)?
    feasible = np.zeros(batch, bool)
    for n, lab in enumerate(labels):
        ext[n, 1:2 * len(lab):2] = lab
        skip[n, 3:2 * len(lab):2] = lab[1:] != lab[:-1]
        feasible[n] = in_lens[n] >= len(lab) + int(np.sum(lab[1:] == lab[:-1]))

    dtype, device = log_probs.dtype, log_probs.device
    index = ops.tensor(np.broadcast_to(ext, (steps, batch, states)).copy(), device=device)
    emit = ops.gather(log_probs, 2, index)  # (T, N, S'): lp_t(l'_s)
    unreachable = ops.full((batch, 1), _UNREACHABLE, dtype=dtype, device=device)
    skip_mask = ops.tensor(skip, device=device)
    start = np.zeros((batch, states), bool)
    start[:, 0] = True
    start[:, 1] = tgt_lens > 0 if states > 1 else False
    alpha = ops.where(ops.tensor(start, device=device), emit[0], _UNREACHABLE)
    for t in range(1, steps):
        stay = alpha
        step = ops.cat([unreachable, alpha[:, :-1]], dim=1)
        jump = ops.where(skip_mask, ops.cat([unreachable, unreachable, alpha[:, :-2]], dim=1)[:, :states],
                         _UNREACHABLE)
        new = ops.logsumexp(ops.stack([stay, step, jump]), dim=0) + emit[t]
        running = ops.tensor((in_lens > t)[:, None], device=device)
        alpha = ops.where(running, new, alpha)

    last = ops.tensor((2 * tgt_lens)[:, None], device=device)
    ends = [ops.gather(alpha, 1, last)]
    ends.append(ops.where(ops.tensor((tgt_lens > 0)[:, None], device=device),
                          ops.gather(alpha, 1, (last - 1).clamp(min=0)), _UNREACHABLE))
    loss = -ops.logsumexp(ops.cat(ends, dim=1), dim=1)
    if zero_infinity:  # the targets that cannot fit, and the losses made infinite by -inf log-probabilities
        feasible &= np.isfinite(loss._values())
    if not feasible.all():
        loss = ops.where(ops.tensor(feasible, device=device), loss, 0.0 if zero_infinity else float("inf"))

    if reduction == "none":
        return loss[0] if unbatched else loss
    if reduction == "sum":
        return loss.sum()
    divisor = ops.tensor(np.maximum(tgt_lens, 1), dtype=dtype, device=device)
    return (loss / divisor).mean()

