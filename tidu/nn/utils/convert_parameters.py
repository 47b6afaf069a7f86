"""Parameters to and from one flat vector."""

from __future__ import annotations

from collections.abc import Iterable

from ... import ops
from ...core.grad_mode import no_grad
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """Every parameter flattened and concatenated, in order, into one vector (recorded: its
    gradient reaches the parameters).

    >>> import tidu
    >>> tidu.nn.utils.parameters_to_vector(tidu.nn.Linear(2, 1).parameters()).shape
    tidu.Size([3])
    """
    params = list(parameters)
    _one_device(params)
    return ops.cat([p.reshape(-1) for p in params])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Write consecutive slices of ``vec`` into the parameters' data, in order (not recorded).

    >>> import tidu
    >>> layer = tidu.nn.Linear(2, 1)
    >>> tidu.nn.utils.vector_to_parameters(tidu.tensor([1.0, 2.0, 3.0]), layer.parameters())
    >>> layer.weight.tolist(), layer.bias.tolist()
    ([[1.0, 2.0]], [3.0])
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    params = list(parameters)
    _one_device([vec, *params])
    start = 0
    with no_grad():
        for p in params:
            n = p.numel()
            p.data = vec[start:start + n].reshape(tuple(p.shape)).to(p.dtype).clone()
            start += n


def _one_device(tensors: list[Tensor]) -> None:
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        first, other = tensors[0].device, next(t.device for t in tensors if t.device != tensors[0].device)
        raise TypeError(f"Found two parameters on different devices, this is currently not supported: {first} and {other}")
