"""Devices: ``tidu.device('cpu')``. The CUDA device arrives with its own issue."""

from __future__ import annotations

from typing import Any


class device:  # noqa: N801 - PyTorch's name
    """Where a tensor's data lives.

    >>> import tidu
    >>> tidu.device("cpu")
    device(type='cpu')
    """

    __slots__ = ("type", "index")

    def __init__(self, spec: Any = "cpu", index: int | None = None) -> None:
        if isinstance(spec, device):
            spec, index = spec.type, spec.index
        text = str(spec)
        if ":" in text:
            text, idx = text.split(":", 1)
            index = int(idx)
        if text not in ("cpu", "cuda"):
            raise RuntimeError(f"Expected one of cpu, cuda device type at start of device string: {spec}")
        self.type = text
        self.index = index

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type={self.type!r})"
        return f"device(type={self.type!r}, index={self.index})"


CPU = device("cpu")


def as_device(spec: Any) -> device:
    d = spec if isinstance(spec, device) else device(spec if spec is not None else "cpu")
    if d.type != "cpu":
        raise RuntimeError(
            f"device {d} is not available in this build of tidu: only 'cpu' is implemented so far"
        )
    return d
