"""Devices: ``tidu.device('cpu')`` and ``tidu.device('cuda')`` (one GPU: ``cuda`` is ``cuda:0``)."""

from __future__ import annotations

from typing import Any


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


CPU = device("cpu")
CUDA = device("cuda", 0)


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
    from ..backends.cuda.runtime import is_available

    if not is_available():
        raise RuntimeError(
            "Found no NVIDIA driver on your system (or no CUDA device), so tidu cannot create tensors on "
            f"{d}; install the driver, or set NUMBA_ENABLE_CUDASIM=1 to run CUDA code on Numba's simulator"
        )
    return CUDA
