"""``tidu.cuda``: what a PyTorch script asks before it picks a device.

The CUDA backend (tidu/backends/cuda, docs/guides/cuda-backend.md) compiles, launches and
allocates on a GPU, but tensors cannot live on ``device='cuda'`` yet, so
``is_available()`` is False on every machine for now and scripts that test it run on the
CPU, as they would with a CPU build of PyTorch.

>>> import tidu
>>> device = "cuda" if tidu.cuda.is_available() else "cpu"
>>> tidu.zeros(2, device=device).device
device(type='cpu')
"""

from __future__ import annotations


def is_available() -> bool:
    """Whether tensors can be placed on a CUDA device (not yet: False)."""
    return False


def device_count() -> int:
    """The number of CUDA devices tensors can use (0 until CUDA tensors land)."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the CUDA generators: a no-op while there are no CUDA tensors (scripts call it freely)."""


manual_seed_all = manual_seed


def synchronize(device: object = None) -> None:
    """Wait for queued CUDA work; with no CUDA tensors, there is none (PyTorch raises here on a
    CPU build; tidu returns, so a script's timing code runs unchanged)."""
