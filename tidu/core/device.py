"""Devices: ``tidu.device('cpu')`` and ``tidu.device('cuda')`` (one GPU: ``cuda`` is ``cuda:0``),
and the default device of the creation functions (``set_default_device``, ``with tidu.device(...)``).
"""

from __future__ import annotations

import threading
from typing import Any

from .imports import module


class device:  # noqa: N801 - PyTorch's name
    """Where a tensor's data lives.

    >>> import tidu
    >>> tidu.device("cpu")
    device(type='cpu')
    """

    __slots__ = ("type", "index", "_hash")

    def __init__(self, spec: Any = "cpu", index: int | None = None) -> None:
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        text = str(spec)
        if ":" in text:
            text, idx = text.split(":", 1)
            index = int(idx)
        if text not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {spec}")
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type = text
        self.index = index
        self._hash = hash((text, index))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __reduce__(self) -> Any:
        return (_named, (str(self),))

    def __copy__(self) -> device:
        return self

    def __deepcopy__(self, memo: dict) -> device:
        return self  # immutable; tensors test their device by identity (``is CPU``)

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index})"

    def __enter__(self) -> device:
        """``with tidu.device("cuda"):`` makes this device the creation functions' default until
        the block ends (the default before it is restored), as in PyTorch."""
        _DEFAULT.stack.append(_DEFAULT.device)
        _DEFAULT.device = self
        return self

    def __exit__(self, *exc: object) -> None:
        _DEFAULT.device = _DEFAULT.stack.pop()


CPU = device("cpu")
CUDA = device("cuda", 0)
_Device = device  # for the functions whose argument is named ``device``


class _Default(threading.local):
    """The default device, per thread (PyTorch's is too), and the ones ``with`` blocks replaced."""

    def __init__(self) -> None:
        self.device: device = CPU
        self.stack: list[device] = []


_DEFAULT = _Default()


def set_default_device(device: Any) -> None:  # noqa: A002 - PyTorch's name
    """The device that the creation functions (``tensor``, ``zeros``, ``arange``, ``rand``...,
    and the modules' parameters made with them) use when they are given none; ``None`` is the
    CPU again. ``*_like`` functions and ``from_numpy`` keep their own rule, as in PyTorch.

    >>> import tidu
    >>> tidu.set_default_device("cpu")
    >>> tidu.get_default_device()
    device(type='cpu')
    >>> with tidu.device("cpu"):
    ...     tidu.zeros(2).device
    device(type='cpu')
    """
    _DEFAULT.device = CPU if device is None else _named(str(_Device(device)))


def get_default_device() -> device:
    """The creation functions' default device (``cuda`` is ``cuda:0``, as PyTorch reports it).

    >>> import tidu
    >>> tidu.get_default_device()
    device(type='cpu')
    """
    d = _DEFAULT.device
    return CUDA if d.type == "cuda" else CPU


def factory_device(spec: Any) -> device:
    """``as_device`` of a creation function's ``device`` argument: ``None`` is the default device."""
    return as_device(_DEFAULT.device if spec is None else spec)


def _named(text: str) -> device:
    """The device ``text`` names, the shared ``CPU``/``CUDA`` objects for theirs (unpickling)."""
    return CPU if text == "cpu" else CUDA if text in ("cuda", "cuda:0") else device(text)


def as_device(spec: Any) -> device:
    """The device ``spec`` names (``None`` is the CPU); ``cuda`` must be available."""
    if spec is None or spec is CPU:
        return CPU
    d = spec if isinstance(spec, device) else device(spec)
    if d.type == "cpu":
        return CPU
    if d.index not in (None, 0):
        raise RuntimeError(f"CUDA error: invalid device ordinal (tidu uses one GPU, cuda:0; got {d})")
    if not module("tidu.backends.cuda.runtime").is_available():
        raise RuntimeError(
            "Found no NVIDIA driver on your system (or no CUDA device), so tidu cannot create tensors on "
            f"{d}; install the driver, or set NUMBA_ENABLE_CUDASIM=1 to run CUDA code on Numba's simulator"
        )
    return CUDA
