"""``tidu.amp``: ``autocast`` and ``GradScaler``, PyTorch's mixed-precision pair.

Inside ``autocast`` the products (``matmul``, ``addmm``, ``linear``, the convolutions...) run in
``bfloat16`` (on the CPU; ``float16`` on CUDA by default), the losses, ``prod``, ``cdist`` and the
decompositions in float32, other ops in their inputs' dtype: PyTorch's CPU lists
(``tidu.core.autocast.policy``).
``GradScaler`` works as PyTorch's does: the loss is multiplied by the scale, the
gradients divided by it before the step, a step whose gradients hold an inf or NaN is skipped, and
the scale adapts. In float32 it seldom finds an overflow, so it seldom changes a step.

>>> import tidu
>>> w = tidu.tensor([1.0, 2.0], requires_grad=True)
>>> opt = tidu.optim.SGD([w], lr=0.1)
>>> scaler = tidu.amp.GradScaler()
>>> with tidu.autocast("cpu"):
...     loss = (w * w).sum()
>>> scaler.scale(loss).backward()
>>> scaler.step(opt)
>>> scaler.update()
>>> w
tensor([0.8000, 1.6000], requires_grad=True)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .core import autocast as _autocast
from .core import dtypes
from .core.grad_mode import no_grad
from .tensor import Tensor

__all__ = ["GradScaler", "autocast"]


class autocast:  # noqa: N801 - PyTorch's name
    """A region whose products run in a lower precision, as PyTorch's autocast: ``matmul``,
    ``mm``, ``bmm``, ``addmm``, ``linear``, the convolutions and the rest of PyTorch's CPU list on
    floating-point tensors of ``device_type`` convert their operands to ``dtype`` (``bfloat16`` on
    ``cpu``, ``float16`` on ``cuda`` by default) and give results of that dtype; the functions of
    its float32 list (the losses, ``prod``, the decompositions...) compute half operands in
    float32; other ops keep their inputs' dtype. Also a decorator.

    >>> import tidu
    >>> a = tidu.ones(2, 3)
    >>> with tidu.autocast("cpu", dtype=tidu.bfloat16):
    ...     y = a @ a.T
    ...     z = a + 1
    >>> y.dtype, z.dtype
    (tidu.bfloat16, tidu.float32)
    >>> with tidu.autocast(device_type="cuda", enabled=False):
    ...     y = tidu.ones(2) * 2
    >>> y.dtype
    tidu.float32
    """

    def __init__(self, device_type: str = "cuda", dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if dtype is None:
            dtype = dtypes.bfloat16 if device_type == "cpu" else dtypes.float16
        self.device_type, self.fast_dtype, self.enabled = device_type, dtypes.as_dtype(dtype), enabled
        self._previous: list[Any] = []

    def __enter__(self) -> autocast:
        self._previous.append(_autocast.set_dtype(self.device_type, self.fast_dtype if self.enabled else None))
        return self

    def __exit__(self, *exc: Any) -> None:
        _autocast.set_dtype(self.device_type, self._previous.pop())

    def __call__(self, fn: Any) -> Any:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapped


class GradScaler:
    """Loss scaling with PyTorch's schedule: ``scale(loss)``, ``step(optimizer)`` (which unscales the
    gradients and skips the step if any is inf or NaN), ``update()`` (the scale times
    ``backoff_factor`` after a skipped step, times ``growth_factor`` after ``growth_interval``
    steps without one). ``enabled=False`` passes everything through.
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000, enabled: bool = True) -> None:
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if backoff_factor >= 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        self._enabled = enabled
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._found_inf: dict[int, bool] = {}  # by optimizer, since its last update
        self._unscaled: set[int] = set()

    def is_enabled(self) -> bool:
        return self._enabled

    def get_scale(self) -> float:
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def scale(self, outputs: Any) -> Any:
        """``outputs`` (a tensor, or a list or tuple of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, list | tuple):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def unscale_(self, optimizer: Any) -> None:
        """Divide ``optimizer``'s gradients by the scale (once per step) and note any inf or NaN."""
        if not self._enabled:
            return
        key = id(optimizer)
        if key in self._unscaled:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        inverse = 1.0 / self._scale
        found = False
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    p.grad.mul_(inverse)
                    found = found or not bool(np.isfinite(p.grad._values()).all())
        self._found_inf[key] = found
        self._unscaled.add(key)

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """``optimizer.step()``, unless its gradients hold an inf or NaN (then ``None``)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if id(optimizer) not in self._unscaled:
            self.unscale_(optimizer)
        if self._found_inf[id(optimizer)]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Set the scale for the next step: ``new_scale``, or the schedule's."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale)
        elif any(self._found_inf.values()):
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        else:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                grown = self._scale * self._growth_factor
                self._scale = grown if math.isfinite(grown) else self._scale
                self._growth_tracker = 0
        self._found_inf.clear()
        self._unscaled.clear()

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if not state_dict:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])
