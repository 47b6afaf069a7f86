"""Stochastic weight averaging and exponential moving averages of a model's weights
(``torch.optim.swa_utils``): ``AveragedModel``, the averaging functions, ``SWALR`` and
``update_bn``.

>>> import tidu
>>> from tidu.optim.swa_utils import AveragedModel
>>> model = tidu.nn.Linear(1, 1, bias=False)
>>> swa = AveragedModel(model)
>>> for w in (1.0, 2.0, 6.0):
...     with tidu.no_grad():
...         _ = model.weight.fill_(w)
...     swa.update_parameters(model)
>>> swa.module.weight, swa.n_averaged
(Parameter containing:
tensor([[3.]], requires_grad=True), tensor(3))
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable, Iterable
from copy import deepcopy
from typing import Any

from ..core import dtypes
from ..core.grad_mode import no_grad
from ..nn.modules.module import Module
from ..ops.creation import tensor
from ..tensor import Tensor
from .lr_scheduler import LRScheduler
from .optimizer import Optimizer

__all__ = [
    "SWALR", "AveragedModel", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn", "get_swa_multi_avg_fn",
    "update_bn",
]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> Callable[[list, list, Any], None]:
    """An in-place EMA over lists of tensors: ``ema = lerp(ema, current, 1 - decay)``.

    >>> import tidu
    >>> ema, cur = [tidu.zeros(2)], [tidu.ones(2)]
    >>> tidu.optim.swa_utils.get_ema_multi_avg_fn(0.75)(ema, cur, 1)
    >>> ema[0]
    tensor([0.2500, 0.2500])
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: list, current_param_list: list, _: Any) -> None:
        if ema_param_list[0].dtype.is_floating_point:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.lerp_(p_model, 1 - decay)
        else:
            for p_ema, p_model in zip(ema_param_list, current_param_list, strict=True):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


_ADDCDIV_INTEGER = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true "
    "division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * "
    "torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
    "tensor2), for all dtypes."
)


def get_swa_multi_avg_fn() -> Callable[[list, list, Any], None]:
    """An in-place running mean over lists of tensors: ``avg += (current - avg) / (n + 1)``.

    Integer tensors raise, as in PyTorch (its ``addcdiv_`` and ``add_`` refuse them; so
    ``AveragedModel(..., multi_avg_fn=get_swa_multi_avg_fn(), use_buffers=True)`` fails on a
    BatchNorm's ``num_batches_tracked``, in both).

    >>> import tidu
    >>> avg, cur = [tidu.zeros(2)], [tidu.ones(2)]
    >>> tidu.optim.swa_utils.get_swa_multi_avg_fn()(avg, cur, tidu.tensor(3))
    >>> avg[0]
    tensor([0.2500, 0.2500])
    """

    @no_grad()
    def swa_update(averaged_param_list: list, current_param_list: list, num_averaged: Any) -> None:
        if averaged_param_list[0].dtype.is_floating_point:
            weight = 1 / (num_averaged + 1)
            weight = float(weight) if isinstance(weight, Tensor) else weight
            for p_avg, p_model in zip(averaged_param_list, current_param_list, strict=True):
                p_avg.lerp_(p_model, weight)
        else:
            # PyTorch's integer path (addcdiv_ or add_ with a float alpha) refuses integers
            raise RuntimeError(_ADDCDIV_INTEGER if isinstance(num_averaged, Tensor)
                               else "For integral input tensors, argument alpha must not be a floating point number.")

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The EMA of one tensor: returns ``decay * ema + (1 - decay) * current``.

    >>> import tidu
    >>> tidu.optim.swa_utils.get_ema_avg_fn(0.5)(tidu.tensor(0.0), tidu.tensor(1.0), 1)
    tensor(0.5000)
    """
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> Callable[[Tensor, Tensor, Any], Tensor]:
    """The running mean of one tensor: returns ``avg + (current - avg) / (n + 1)``.

    >>> import tidu
    >>> tidu.optim.swa_utils.get_swa_avg_fn()(tidu.tensor(1.0), tidu.tensor(4.0), 2)
    tensor(2.)
    """

    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Any) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are a running average of ``model``'s
    (SWA by default; EMA with ``multi_avg_fn=get_ema_multi_avg_fn(decay)``).

    Args:
        model: the module to average (deep-copied into ``self.module``).
        device: where the copy lives.
        avg_fn: ``avg_fn(averaged, current, n_averaged) -> new averaged``, per tensor.
        multi_avg_fn: ``multi_avg_fn(averaged_list, current_list, n_averaged)``, in place.
        use_buffers: average the buffers too (else they are copied from ``model``).

    The first ``update_parameters`` copies ``model``'s values; each later one averages.
    ``n_averaged`` (an int64 buffer) counts the calls.

    >>> import tidu
    >>> from tidu.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
    >>> model = tidu.nn.Linear(1, 1, bias=False)
    >>> ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.5))
    >>> for w in (4.0, 0.0):
    ...     with tidu.no_grad():
    ...         _ = model.weight.fill_(w)
    ...     ema.update_parameters(model)
    >>> ema(tidu.ones(1, 1))
    tensor([[2.]], grad_fn=<dot_general>)
    """

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: Callable[[Tensor, Tensor, Any], Tensor] | None = None,
        multi_avg_fn: Callable[[list, list, Any], None] | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        n_averaged = tensor(0, dtype=dtypes.int64)
        self.register_buffer("n_averaged", n_averaged if device is None else n_averaged.to(device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    def update_parameters(self, model: Module) -> None:
        """Average ``model``'s current parameters (and buffers, with ``use_buffers``) into this one's."""
        if self.use_buffers:
            self_params = itertools.chain(self.module.parameters(), self.module.buffers())
            model_params = itertools.chain(model.parameters(), model.buffers())
        else:
            self_params, model_params = self.parameters(), model.parameters()
        averaged, current = [], []
        copy_param = bool(self.n_averaged == 0)
        for p_averaged, p_model in zip(self_params, model_params, strict=False):
            p_model_ = p_model.detach().to(p_averaged.device)
            averaged.append(p_averaged.detach())
            current.append(p_model_)
            if copy_param:
                with no_grad():
                    p_averaged.detach().copy_(p_model_)
        if self.n_averaged > 0:
            if self.multi_avg_fn is not None or self.avg_fn is None:
                groups: dict[tuple, tuple[list, list]] = {}  # PyTorch groups by device and dtype
                for a, c in zip(averaged, current, strict=True):
                    pair = groups.setdefault((a.device, a.dtype), ([], []))
                    pair[0].append(a)
                    pair[1].append(c)
                for (device, _), (self_group, model_group) in groups.items():
                    n_averaged = self.n_averaged.to(device)
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(self_group, model_group, n_averaged)
                    elif device.type == "cuda":  # PyTorch's foreach path: lerp by a float32 1 / (n + 1)
                        get_swa_multi_avg_fn()(self_group, model_group, n_averaged)
                    else:  # on the CPU, PyTorch divides by the int64 n + 1
                        avg_fn = get_swa_avg_fn()
                        with no_grad():
                            for p_averaged, p_model in zip(self_group, model_group, strict=True):
                                p_averaged.copy_(avg_fn(p_averaged, p_model, n_averaged))
            else:
                with no_grad():
                    for p_averaged, p_model in zip(averaged, current, strict=True):
                        n_averaged = self.n_averaged.to(p_averaged.device)
                        p_averaged.copy_(self.avg_fn(p_averaged, p_model, n_averaged))
        if not self.use_buffers:
            with no_grad():
                for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                    b_swa.copy_(b_model.detach().to(b_swa.device))
        with no_grad():
            self.n_averaged += 1


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute the running statistics of ``model``'s BatchNorm layers with one pass over ``loader``
    (a cumulative average: momentum ``None`` during the pass). A batch that is a list or tuple
    feeds its first element to the model.

    >>> import tidu
    >>> model = tidu.nn.Sequential(tidu.nn.BatchNorm1d(1))
    >>> loader = [tidu.tensor([[0.0], [2.0]]), tidu.tensor([[4.0], [6.0]])]
    >>> tidu.optim.swa_utils.update_bn(loader, model)
    >>> model[0].running_mean, model[0].momentum
    (tensor([3.]), 0.1)
    """
    from ..nn.modules.normalization import _BatchNorm, _InstanceNorm

    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for batch in loader:
        if isinstance(batch, list | tuple):
            batch = batch[0]
        if device is not None:
            batch = batch.to(device)
        model(batch)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps (cosine or
    linear), then hold it there; PyTorch's recursive schedule.

    Args:
        optimizer: the wrapped optimizer.
        swa_lr: the target rate, for all groups or a list with one per group.
        anneal_epochs: steps of the annealing phase (default 10; 0 jumps at once).
        anneal_strategy: ``"cos"`` (default) or ``"linear"``.
        last_epoch: the index of the last epoch (default -1).

    >>> import tidu
    >>> opt = tidu.optim.SGD([tidu.zeros(1, requires_grad=True)], lr=1.0)
    >>> sched = tidu.optim.swa_utils.SWALR(opt, swa_lr=0.5, anneal_epochs=2, anneal_strategy="linear")
    >>> lrs = []
    >>> for _ in range(3):
    ...     opt.step(); sched.step(); lrs.append(round(opt.param_groups[0]["lr"], 4))
    >>> lrs
    [0.75, 0.5, 0.5]
    """

    def __init__(
        self,
        optimizer: Optimizer,
        swa_lr: float | list[float],
        anneal_epochs: int = 10,
        anneal_strategy: str = "cos",
        last_epoch: int = -1,
    ) -> None:
        if isinstance(swa_lr, list | tuple):
            if len(swa_lr) != len(optimizer.param_groups):
                raise ValueError(
                    f"swa_lr must have the same length as optimizer.param_groups. swa_lr has {len(swa_lr)} values, "
                    f"param_groups has {len(optimizer.param_groups)}."
                )
            swa_lrs = list(swa_lr)
        else:
            swa_lrs = [swa_lr] * len(optimizer.param_groups)
        for lr, group in zip(swa_lrs, optimizer.param_groups, strict=True):
            group["swa_lr"] = lr.clone() if isinstance(lr, Tensor) else lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=2,
            )
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(self.optimizer.param_groups, prev_lrs,
                                                                          strict=True)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Every attribute except the optimizer and the annealing function."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
