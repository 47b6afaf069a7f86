"""``Optimizer``: parameter groups, per-parameter state and PyTorch's state_dict layout.

Each optimizer writes its update straight into the parameters' storage (numpy arrays,
a few in-place array operations per parameter) under ``no_grad`` and bumps each written
parameter's version counter, as PyTorch's in-place ``add_`` does.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..backends.cpu.elementwise import axpy_ as cpu_axpy_
from ..core import dtypes
from ..core.device import CPU
from ..core.grad_mode import enable_grad, no_grad
from ..core.imports import module
from ..core.inplace import written
from ..ops.creation import full_like, zeros_like
from ..tensor import RemovableHandle, Tensor, of_array


class _RequiredParameter:
    """The default of an option that every parameter group must set (SGD's ``lr``)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj: Any) -> str:
    cls = type(obj)
    return cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"


# hooks of every optimizer's step (``register_optimizer_step_pre_hook``/``_post_hook``), by handle id
_GLOBAL_STEP_PRE_HOOKS: dict[int, Callable[..., Any]] = {}
_GLOBAL_STEP_POST_HOOKS: dict[int, Callable[..., Any]] = {}


def register_optimizer_step_pre_hook(hook: Callable[..., Any]) -> Any:
    """Call ``hook(optimizer, args, kwargs)`` before every optimizer's ``step`` (it may return new
    ``(args, kwargs)``); the handle's ``remove()`` takes it out.

    >>> import tidu
    >>> from tidu.optim.optimizer import register_optimizer_step_pre_hook
    >>> w = tidu.ones(1, requires_grad=True)
    >>> handle = register_optimizer_step_pre_hook(lambda opt, args, kwargs: print("stepping"))
    >>> tidu.optim.SGD([w], lr=0.1).step()
    stepping
    >>> handle.remove()
    """
    return _hook_handle(_GLOBAL_STEP_PRE_HOOKS, hook)


def register_optimizer_step_post_hook(hook: Callable[..., Any]) -> Any:
    """Call ``hook(optimizer, args, kwargs)`` after every optimizer's ``step``."""
    return _hook_handle(_GLOBAL_STEP_POST_HOOKS, hook)


def _hook_handle(hooks: dict, hook: Callable[..., Any], prepend: bool = False) -> Any:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:  # a dict keeps insertion order: rebuild it with this one first
        items = list(hooks.items())
        hooks.clear()
        hooks.update([items[-1], *items[:-1]])
    return handle


def _with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` running the step pre- and post-hooks (the optimizer's and the global ones) around
    it, once per call even when a subclass's ``step`` calls its base's."""

    @functools.wraps(step)
    def hooked(self: Optimizer, *args: Any, **kwargs: Any) -> Any:
        own = self.__dict__
        pre, post = own.get("_step_pre_hooks"), own.get("_step_post_hooks")
        if not (pre or post or _GLOBAL_STEP_PRE_HOOKS or _GLOBAL_STEP_POST_HOOKS) or own.get("_in_step"):
            return step(self, *args, **kwargs)
        args = (self, *args)  # as PyTorch's: the hooks see the optimizer among the arguments
        for hook in [*_GLOBAL_STEP_PRE_HOOKS.values(), *(pre or {}).values()]:
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {result}.")
                args, kwargs = result
        own["_in_step"] = True
        try:
            out = step(*args, **kwargs)
        finally:
            own["_in_step"] = False
        for hook in [*(post or {}).values(), *_GLOBAL_STEP_POST_HOOKS.values()]:
            hook(self, args, kwargs)
        return out

    return hooked


class Optimizer:
    """Base class of the optimizers: holds ``param_groups`` and ``state``.

    Args:
        params: an iterable of tensors (or of ``(name, tensor)`` pairs, as ``named_parameters()``
            gives), or of dicts (parameter groups) with a ``"params"`` entry and per-group options.
        defaults: the options a group takes when it does not set them.

    Subclasses implement ``_update(param, grad, state, group)`` on numpy arrays; ``step``
    calls it for each parameter that has a gradient.

    >>> import tidu
    >>> w = tidu.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = tidu.optim.SGD([w], lr=0.5)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0., 0.], requires_grad=True)
    >>> opt.zero_grad(); w.grad is None
    True
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:  # every optimizer's own step runs the step hooks
            cls.step = _with_step_hooks(cls.__dict__["step"])

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or dicts, "
                f"but got {_typename(params)}"
            )
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {key}: {group[key]}" for key in sorted(group) if key != "params"]
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (fine-tuning, unfrozen layers...).

        >>> import tidu
        >>> a, b = tidu.zeros(2, requires_grad=True), tidu.zeros(3, requires_grad=True)
        >>> opt = tidu.optim.SGD([a], lr=0.1)
        >>> opt.add_param_group({"params": [b], "lr": 0.01})
        >>> [g["lr"] for g in opt.param_groups]
        [0.1, 0.01]
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the ordering of "
                "tensors in sets will change between runs. Please use a list instead."
            )
        params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            group["param_names"] = names
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}")
            if not (p.is_leaf or p._retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            group.setdefault(name, default)
        if len({id(p) for p in group["params"]}) != len(group["params"]):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in future, this will cause an error",
                stacklevel=3,
            )
        for g in self.param_groups:
            if ("param_names" in g) != ("param_names" in group):
                kind = "with names" if "param_names" in group else "without names"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {kind} to the optimizer"
                )
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of every parameter: to ``None`` (default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:  # PyTorch's detach_() then zero_(): the same tensor, cut from any graph
                    grad = p._grad
                    grad._trace, grad._key, grad._requires_grad = None, None, False
                    if grad._data.flags.writeable:
                        grad.zero_()
                    else:  # an expanded (read-only) view: give it storage of its own
                        grad._data = zeros_like(grad)._data

    @no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; return ``closure()``'s loss if given."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            numbers = _as_numbers(group)
            if group.get("capturable") and any(p._device.type == "cpu" for p in group["params"]):
                raise AssertionError("If capturable=True, params and state_steps must be on supported devices: "
                                     "['cuda', 'xpu', 'hpu', 'privateuseone'].")
            for p in group["params"]:
                if p._grad is None:
                    continue
                if not p._data.flags.writeable:
                    raise RuntimeError(
                        f"{type(self).__name__}.step: a parameter of shape {tuple(p.shape)} is a read-only "
                        "(expanded) view; optimize a tensor that owns its memory"
                    )
                param, grad = buffer(p), buffer(p._grad)
                if group.get("maximize", False):
                    grad = -grad
                state = self.state.get(p)
                if state is None:
                    state = {}
                self._update(param, grad, state, numbers)
                if state and p not in self.state:
                    self.state[p] = state
                written(p)
        return loss

    def _update(self, param: np.ndarray, grad: np.ndarray, state: dict[str, Any], group: dict[str, Any]) -> None:
        raise NotImplementedError

    # --- hooks -------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Callable[..., Any]) -> Any:
        """Call ``hook(optimizer, args, kwargs)`` before each ``step`` (it may return new
        ``(args, kwargs)``).

        >>> import tidu
        >>> w = tidu.ones(1, requires_grad=True)
        >>> opt = tidu.optim.SGD([w], lr=0.1)
        >>> handle = opt.register_step_post_hook(lambda o, args, kwargs: print("stepped"))
        >>> opt.step()
        stepped
        """
        return _hook_handle(self.__dict__.setdefault("_step_pre_hooks", {}), hook)

    def register_step_post_hook(self, hook: Callable[..., Any]) -> Any:
        """Call ``hook(optimizer, args, kwargs)`` after each ``step``."""
        return _hook_handle(self.__dict__.setdefault("_step_post_hooks", {}), hook)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> Any:
        """Call ``hook(optimizer)`` before ``state_dict`` builds the state dict."""
        return _hook_handle(self.__dict__.setdefault("_state_dict_pre_hooks", {}), hook, prepend)

    def register_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> Any:
        """Call ``hook(optimizer, state_dict)`` on the built state dict; a dict it returns replaces it."""
        return _hook_handle(self.__dict__.setdefault("_state_dict_post_hooks", {}), hook, prepend)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> Any:
        """Call ``hook(optimizer, state_dict)`` before loading; a dict it returns is loaded instead."""
        return _hook_handle(self.__dict__.setdefault("_load_state_dict_pre_hooks", {}), hook, prepend)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any], prepend: bool = False) -> Any:
        """Call ``hook(optimizer)`` after loading."""
        return _hook_handle(self.__dict__.setdefault("_load_state_dict_post_hooks", {}), hook, prepend)

    def _hooks(self, name: str) -> list[Callable[..., Any]]:
        return list(self.__dict__.get(name, {}).values())

    # --- state_dict ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state in PyTorch's layout: ``{"state": {index: {...}}, "param_groups": [...]}``.

        Parameters are numbered in the order of the groups; each group lists its
        parameters' numbers under ``"params"``.

        >>> import tidu
        >>> w = tidu.ones(2, requires_grad=True)
        >>> opt = tidu.optim.SGD([w], lr=0.1, momentum=0.9)
        >>> w.grad = tidu.ones(2); opt.step()
        >>> sd = opt.state_dict()
        >>> sd["state"][0]["momentum_buffer"], sd["param_groups"][0]["params"]
        (tensor([1., 1.]), [0])
        """
        for hook in self._hooks("_state_dict_pre_hooks"):
            hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: dict(s) for p, s in self.state.items() if id(p) in index}
        result = {"state": state, "param_groups": groups}
        for hook in self._hooks("_state_dict_post_hooks"):
            changed = hook(self, result)
            if changed is not None:
                result = changed
        return result

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a ``state_dict()`` (this optimizer's or one saved from the same parameter layout).

        State tensors are copied and cast to their parameter's dtype (``step`` keeps its own).
        """
        state_dict = dict(state_dict)  # hooks may change it; the caller's stays as it is
        for hook in self._hooks("_load_state_dict_pre_hooks"):
            changed = hook(self, state_dict)
            if changed is not None:
                state_dict = changed
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for group, saved in zip(self.param_groups, saved_groups, strict=True):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"
                )
        by_index = {
            i: p
            for group, saved in zip(self.param_groups, saved_groups, strict=True)
            for i, p in zip(saved["params"], group["params"], strict=True)
        }
        self.state = defaultdict(dict)
        for key, value in state_dict["state"].items():
            p = by_index.get(int(key))
            if p is not None:
                self.state[p] = {name: _cast_state(p, name, v) for name, v in value.items()}
        for group, saved in zip(self.param_groups, saved_groups, strict=True):
            saved["params"] = group["params"]
            group.clear()
            group.update(saved)
        for hook in self._hooks("_load_state_dict_post_hooks"):
            hook(self)


Optimizer.step = _with_step_hooks(Optimizer.step)  # type: ignore[method-assign]


def _cast_state(param: Tensor, name: str, value: Any) -> Any:
    if not isinstance(value, Tensor):
        return copy.deepcopy(value)
    if name == "step":
        return Tensor(value._host().copy(), value.dtype)
    value = value.detach()
    if value.dtype.is_floating_point:
        value = value.to(param.dtype)
    return value.to(param.device).clone().detach()


def buffer(t: Tensor) -> Any:
    """What ``_update`` computes on: a tensor's numpy array, or on the GPU (and for float16 and
    bfloat16, which numpy cannot compute as PyTorch does) a detached tensor sharing its storage
    (tidu's in-place ops stand in for numpy's there)."""
    return t._data if t._device is CPU and not t._dtype.is_half else t.detach()


def state_like(param: Any, fill: float = 0.0) -> Tensor:
    """A state tensor of ``param``'s shape, dtype and device, filled with ``fill``."""
    if isinstance(param, Tensor):
        return full_like(param, fill)
    return of_array(np.full_like(param, fill))


def copy_state(value: Any) -> Tensor:
    return value.clone() if isinstance(value, Tensor) else of_array(np.array(value, copy=True))


def add_scaled_(y: Any, alpha: float, x: Any) -> None:
    """``y += alpha * x`` in place, in ``y``'s dtype (one kernel on the GPU)."""
    if isinstance(y, Tensor):
        if isinstance(x, Tensor) and y._device is not CPU and y._data.is_c_contiguous and x._data.is_c_contiguous and x.dtype is y.dtype:
            module("tidu.backends.cuda.elementwise").axpy_(y._data, alpha, x._data)
        else:
            y += alpha * x
    elif type(x) is np.ndarray and x.dtype == y.dtype and y.flags.c_contiguous and x.flags.c_contiguous:
        cpu_axpy_(y, alpha, x)
    else:
        y += y.dtype.type(alpha) * x


def sqrt(x: Any) -> Any:
    return x.sqrt() if isinstance(x, Tensor) else np.sqrt(x)


def maximum_(out: Any, other: Any) -> None:
    if isinstance(out, Tensor):
        out.copy_(out.maximum(other))
    else:
        np.maximum(out, other, out=out)


def new_step() -> Tensor:
    """PyTorch's ``step`` state: a float32 scalar tensor."""
    return Tensor(np.zeros((), np.float32), dtypes.float32)


def next_step(state: dict[str, Any]) -> float:
    """Count a step in ``state["step"]`` (in place, as PyTorch's tensor) and return the new count."""
    step = state["step"]._data
    step += 1
    return float(step)


def new_state(state: dict[str, Any], param: Any, *names: str) -> None:
    """A parameter's first state: ``step`` and, for each of ``names``, a zero buffer like ``param``."""
    state["step"] = new_step()
    for name in names:
        state[name] = state_like(param)


def l2_decayed(grad: Any, param: Any, weight_decay: float) -> Any:
    """The gradient with the L2 term ``weight_decay * param`` added (``grad`` itself without one)."""
    return grad + weight_decay * param if weight_decay != 0 else grad


def decayed(grad: Any, param: Any, lr: float, group: dict[str, Any]) -> Any:
    """The Adam family's weight decay: decoupled (AdamW's ``param *= 1 - lr * weight_decay``, the
    gradient left as it is) where the group says so, else the L2 term in the gradient."""
    weight_decay = group["weight_decay"]
    if weight_decay != 0 and group["decoupled_weight_decay"]:
        param *= 1 - lr * weight_decay
        return grad
    return l2_decayed(grad, param, weight_decay)


def lerp_(start: Any, end: Any, weight: float) -> None:
    """``start.lerp_(end, weight)`` with PyTorch's two-sided formula."""
    if abs(weight) < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


def average_square_(average: Any, grad: Any, decay: float) -> None:
    """``average = decay * average + (1 - decay) * grad * grad`` in place, in PyTorch's order."""
    average *= decay
    average += ((1 - decay) * grad) * grad


def adam_moments(state: dict[str, Any], grad: Any, beta1: float, beta2: float) -> tuple[Any, Any]:
    """``exp_avg`` and ``exp_avg_sq`` of ``state`` moved toward ``grad`` and ``grad**2`` (the Adam
    family's running averages); returns their buffers."""
    exp_avg, exp_avg_sq = buffer(state["exp_avg"]), buffer(state["exp_avg_sq"])
    lerp_(exp_avg, grad, 1 - beta1)
    average_square_(exp_avg_sq, grad, beta2)
    return exp_avg, exp_avg_sq


def add_ratio_(param: Any, scale: float, numerator: Any, denominator: Any) -> None:
    """``param += scale * numerator / denominator`` in place, in PyTorch's order (the scaled
    numerator divided)."""
    update = scale * numerator
    update /= denominator
    param += update


def check_adam_args(lr: Any, eps: float, betas: tuple[float, float], weight_decay: float) -> None:
    """The Adam family's argument checks, with PyTorch's messages."""
    check_lr(lr)
    check_eps(eps)
    check_betas(betas)
    check_nonnegative("weight_decay", weight_decay)


def check_lr(lr: Any) -> None:
    if isinstance(lr, Tensor):
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
    elif not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_nonnegative(name: str, value: float) -> None:
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")


def check_eps(eps: float) -> None:
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")


def check_betas(betas: tuple[float, float]) -> None:
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


def scalar_state(value: float) -> Tensor:
    """A float32 scalar state tensor, as PyTorch keeps ``mu_product``, ``eta`` and ``mu``."""
    return Tensor(np.array(value, np.float32), dtypes.float32)


def absolute(x: Any) -> Any:
    return x.abs() if isinstance(x, Tensor) else np.abs(x)


def sign(x: Any) -> Any:
    return x.sign() if isinstance(x, Tensor) else np.sign(x)


def select(condition: Any, if_true: Any, if_false: Any) -> Any:
    """``where(condition, if_true, if_false)``; either branch may be a Python number."""
    if isinstance(condition, Tensor):
        from ..ops.math import where

        return where(condition, if_true, if_false)
    return np.where(condition, if_true, if_false)


def clamp_(x: Any, low: float, high: float) -> None:
    if isinstance(x, Tensor):
        x.copy_(x.clamp(low, high))
    else:
        np.clip(x, low, high, out=x)


def assign_(out: Any, value: Any) -> None:
    if isinstance(out, Tensor):
        out.copy_(value)
    else:
        out[...] = value


def _as_numbers(group: dict[str, Any]) -> dict[str, Any]:
    """``group`` with its 0-d tensor settings (``betas=(tensor(0.9), ...)``, ``eps``,
    ``weight_decay``; not ``lr``, which the updates read as they need it) as Python numbers, as
    PyTorch's optimizers take them; ``group`` itself when it has none."""

    def number(v: Any) -> Any:
        if isinstance(v, Tensor) and v.ndim == 0:
            return v.item()
        if type(v) is tuple and any(isinstance(x, Tensor) for x in v):
            return tuple(number(x) for x in v)
        return v

    changed = {k: number(v) for k, v in group.items() if k not in ("params", "lr")
               and (isinstance(v, Tensor) or type(v) is tuple and any(isinstance(x, Tensor) for x in v))}
    return {**group, **changed} if changed else group
