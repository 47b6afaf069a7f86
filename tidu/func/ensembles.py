"""``stack_module_state``: the parameters and buffers of several copies of a model, stacked, for
running an ensemble with ``vmap`` over ``functional_call``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import ops


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(params, buffers)``: each name of the models' ``named_parameters()`` / ``named_buffers()``
    mapped to the models' tensors stacked along a new first dim. The stacked parameters are new
    leaves that require grad (detached from the models), as in PyTorch.

    >>> import tidu
    >>> models = [tidu.nn.Linear(3, 2) for _ in range(4)]
    >>> params, buffers = tidu.func.stack_module_state(models)
    >>> params["weight"].shape, params["weight"].requires_grad, buffers
    (tidu.Size([4, 2, 3]), True, {})
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    kinds = {type(m) for m in models}
    if len(kinds) != 1:
        raise RuntimeError(f"stack_module_state: Expected all models to be of the same class, got: {kinds}")

    def stacked(named: Any, requires_grad: bool) -> dict[str, Any]:
        entries = [dict(named(m)) for m in models]
        out = {}
        for name in entries[0]:
            value = ops.stack([e[name].detach() for e in entries])
            out[name] = value.requires_grad_(entries[0][name].requires_grad) if requires_grad else value
        return out

    return stacked(lambda m: m.named_parameters(), True), stacked(lambda m: m.named_buffers(), False)
