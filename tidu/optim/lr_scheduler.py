"""Learning-rate schedulers: ``StepLR``, ``ExponentialLR``, ``CosineAnnealingLR``, ``LambdaLR``.

Each follows PyTorch's recursive definition (the new rate is computed from the group's
current ``lr``), so the rates match PyTorch's to the last bit, chaining included.
"""

from __future__ import annotations

import math
import types
import warnings
from collections.abc import Callable
from typing import Any

from .optimizer import Optimizer


class LRScheduler:
    """Base class: sets ``initial_lr`` on the groups, steps ``last_epoch`` and writes ``lr``.

    Call ``scheduler.step()`` after ``optimizer.step()``, once per epoch (or per step).
    A subclass defines ``get_lr()``, the rates for ``self.last_epoch``:

    >>> import tidu
    >>> class Halving(tidu.optim.lr_scheduler.LRScheduler):
    ...     def get_lr(self):
    ...         return [base / 2**self.last_epoch for base in self.base_lrs]
    >>> opt = tidu.optim.SGD([tidu.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = Halving(opt)
    >>> opt.step(); sched.step(); opt.param_groups[0]["lr"]
    0.5
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler "
                        "with last_epoch >= 0."
                    )
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._get_lr_called_within_step = False
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list[float]:
        """The rates for ``self.last_epoch`` (called by ``step``)."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The rates ``step`` set last, one per parameter group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and set every group's ``lr``."""
        self._step_count += 1
        self._get_lr_called_within_step = True
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(
                "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
                "possible. Please use `scheduler.step()` to step the scheduler.",
                UserWarning,
                stacklevel=2,
            )
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def _group_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]


class LambdaLR(LRScheduler):
    """``lr = initial_lr * lr_lambda(epoch)``, one function or one per group.

    >>> import tidu
    >>> opt = tidu.optim.SGD([tidu.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tidu.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.5 ** epoch)
    >>> for _ in range(2):
    ...     opt.step(); sched.step()
    >>> sched.get_last_lr()
    [0.25]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.optimizer = optimizer
        if isinstance(lr_lambda, list | tuple):
            if len(lr_lambda) != len(optimizer.param_groups):
                raise ValueError(f"Expected {len(optimizer.param_groups)} lr_lambdas, but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * len(optimizer.param_groups)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs, strict=True)]

    def state_dict(self) -> dict[str, Any]:
        """As PyTorch: functions are not saved; a callable object's ``__dict__`` is."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy() for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        lambdas = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, saved in zip(self.lr_lambdas, lambdas, strict=True):
            if saved is not None:
                fn.__dict__.update(saved)


class StepLR(LRScheduler):
    """Multiply the rate by ``gamma`` every ``step_size`` epochs.

    >>> import tidu
    >>> opt = tidu.optim.SGD([tidu.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tidu.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> lrs = []
    >>> for _ in range(5):
    ...     opt.step(); sched.step(); lrs.append(sched.get_last_lr()[0])
    >>> lrs
    [1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the rate by ``gamma`` every epoch.

    >>> import tidu
    >>> opt = tidu.optim.SGD([tidu.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tidu.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> opt.step(); sched.step(); sched.get_last_lr()
    [0.5]
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        if self._is_initial:
            return self._group_lrs()
        return [lr * self.gamma for lr in self._group_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from the initial rate to ``eta_min`` over ``T_max`` epochs (SGDR
    without restarts), with PyTorch's recursive formula (it keeps oscillating after ``T_max``).

    >>> import tidu
    >>> opt = tidu.optim.SGD([tidu.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tidu.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=2)
    >>> lrs = []
    >>> for _ in range(2):
    ...     opt.step(); sched.step(); lrs.append(round(sched.get_last_lr()[0], 6))
    >>> lrs
    [0.5, 0.0]
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:  # noqa: N803
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        self._warn_outside_step()
        if self._is_initial:
            return self._group_lrs()
        t, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._step_count == 1 and t > 0:
            return [eta_min + (base - eta_min) * (1 + math.cos(t * math.pi / t_max)) / 2 for base in self.base_lrs]
        if (t - 1 - t_max) % (2 * t_max) == 0:
            return [
                lr + (base - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                for base, lr in zip(self.base_lrs, self._group_lrs(), strict=True)
            ]
        return [
            (1 + math.cos(math.pi * t / t_max)) / (1 + math.cos(math.pi * (t - 1) / t_max)) * (lr - eta_min) + eta_min
            for lr in self._group_lrs()
        ]

    def _get_closed_form_lr(self) -> list[float]:
        return [
            self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
            for base in self.base_lrs
        ]


_LRScheduler = LRScheduler
