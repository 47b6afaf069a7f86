"""Pruning (PyTorch's ``torch.nn.utils.prune``): a parameter ``name`` becomes ``name_orig`` (the
same ``Parameter``) times a buffer ``name_mask``, recomputed by a forward pre-hook; pruning the
same parameter again narrows the mask through a ``PruningContainer``; ``remove`` makes the pruned
value the parameter again.

>>> import tidu
>>> from tidu.nn.utils import prune
>>> layer = tidu.nn.Linear(3, 1)
>>> with tidu.no_grad():
...     _ = layer.weight.copy_(tidu.tensor([[0.5, -2.0, 0.1]]))
>>> _ = prune.l1_unstructured(layer, "weight", amount=1)
>>> layer.weight
tensor([[ 0.5000, -2.0000,  0.0000]], grad_fn=<mul>)
>>> sorted(name for name, _ in layer.named_buffers())
['weight_mask']
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from ... import ops
from ...core import dtypes
from ...core.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.module import Module
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured", "PruningContainer",
           "RandomStructured", "RandomUnstructured", "custom_from_mask", "global_unstructured", "identity",
           "is_pruned", "l1_unstructured", "ln_structured", "random_structured", "random_unstructured", "remove"]


class BasePruningMethod(ABC):
    """A way of choosing which entries of a tensor to zero: ``compute_mask`` gives the new mask
    from the tensor (or its importance scores) and the mask it has so far. An instance is the
    forward pre-hook that recomputes the pruned parameter before every forward."""

    PRUNING_TYPE = "unstructured"  # what a ``PruningContainer`` keeps pruning within: see ``_combine_masks``
    _tensor_name: str

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for ``t``, given the ``default_mask`` it has so far."""

    def apply_mask(self, module: Module) -> Tensor:
        """``name_orig * name_mask`` of ``module``: the pruned value."""
        orig = getattr(module, self._tensor_name + "_orig")
        return getattr(module, self._tensor_name + "_mask").to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any, importance_scores: Tensor | None = None,
              **kwargs: Any) -> BasePruningMethod:
        """Prune ``module``'s parameter ``name`` with ``cls(*args, **kwargs)``, on top of any pruning
        it already has, and register the method as the forward pre-hook."""
        old = None
        for key, hook in list(module._forward_pre_hooks.items()):
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old = hook
                del module._forward_pre_hooks[key]
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if isinstance(old, PruningContainer):
            old.add_pruning_method(method)
            method = old
        elif old is not None:
            container = PruningContainer(old)
            container.add_pruning_method(method)
            method = container
        orig = getattr(module, name)
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(orig.shape):
            raise AssertionError(
                f"importance_scores should have the same shape as parameter {name} of {module}"
            )
        if old is None:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = ops.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            with no_grad():
                mask = method.compute_mask(importance_scores if importance_scores is not None else orig,
                                           default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if old is None:  # leave the module as it was
                orig = module._parameters.pop(name + "_orig")
                module.register_parameter(name, orig)
            raise
        return method

    def prune(self, t: Tensor, default_mask: Tensor | None = None, importance_scores: Tensor | None = None) -> Tensor:
        """``t`` times its mask (computed from ``importance_scores`` when given)."""
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(t.shape):
            raise AssertionError("importance_scores should have the same shape as tensor t")
        scores = importance_scores if importance_scores is not None else t
        mask = self.compute_mask(scores, default_mask=default_mask if default_mask is not None else ops.ones_like(t))
        return t * mask

    def remove(self, module: Module) -> None:
        """Make the pruned value ``module``'s parameter ``name`` again (the ``name_orig`` object,
        holding ``name_orig * name_mask``) and drop the mask."""
        name = self._tensor_name
        if name + "_orig" not in module._parameters:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, name):
            delattr(module, name)
        orig = module._parameters.pop(name + "_orig")
        with no_grad():
            orig.copy_(weight)
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


class PruningContainer(BasePruningMethod):
    """The pruning methods applied to one parameter in turn: each prunes within what the ones
    before it left (the unpruned entries, the unpruned channels along its ``dim``, or everything
    for a ``"global"`` method)."""

    def __init__(self, *args: Any) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1 and not isinstance(args[0], Iterable):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        elif len(args) == 1:
            for method in args[0]:
                self.add_pruning_method(method)
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and not hasattr(self, "_tensor_name"):
            self._tensor_name = method._tensor_name
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. Found '{method._tensor_name}'"
            )
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self) -> Any:
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed on the part of ``t`` the earlier ones left."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.clone()
        if method.PRUNING_TYPE == "unstructured":
            where: Any = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to have the attribute `dim` defined.")
            dim = method.dim if method.dim >= 0 else t.ndim + method.dim
            others = [d for d in range(t.ndim) if d != dim]
            keep = default_mask.sum(dim=others) != 0 if others else default_mask != 0
            where = tuple(keep if d == dim else slice(None) for d in range(t.ndim))
        elif method.PRUNING_TYPE == "global":
            where = (slice(None),) * t.ndim
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial = method.compute_mask(t[where], default_mask=default_mask[where])
        new_mask[where] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prune nothing: the mask is all ones (a parameter reparametrized as ``orig * mask``)."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name)


class _Unstructured(BasePruningMethod):
    """Zero the ``amount`` entries (a count, or a fraction of the entries) that rank first by
    ``_scores`` (highest first, or lowest when not ``largest``)."""

    PRUNING_TYPE = "unstructured"
    largest = True

    def __init__(self, amount: int | float) -> None:
        _check_amount(amount)
        self.amount = amount

    def _scores(self, t: Tensor) -> Tensor:
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        k = _count(self.amount, t.numel())
        mask = default_mask.clone()
        if k:
            mask.view(-1)[ops.topk(self._scores(t).view(-1), k, largest=self.largest).indices] = 0
        return mask


class RandomUnstructured(_Unstructured):
    """Zero ``amount`` entries (a count, or a fraction of the entries) chosen at random."""

    def _scores(self, t: Tensor) -> Tensor:
        return ops.rand_like(t)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Zero the ``amount`` entries (a count, or a fraction of the entries) of least magnitude."""

    largest = False

    def _scores(self, t: Tensor) -> Tensor:
        return ops.abs(t)

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class _Structured(BasePruningMethod):
    """Zero ``amount`` whole channels (slices along ``dim``): all but those ``_kept`` keeps."""

    PRUNING_TYPE = "structured"
    dim: int

    def _kept(self, t: Tensor, size: int, pruned: int) -> Tensor:
        raise NotImplementedError

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _check_structured(t, self.dim)
        size = t.shape[self.dim]
        k = _count(self.amount, size)
        if k == 0:
            return default_mask
        return _channel_mask(t, self.dim, self._kept(t, size, k)) * default_mask.to(dtype=t.dtype)


class RandomStructured(_Structured):
    """Zero ``amount`` whole channels (slices along ``dim``) chosen at random."""

    def __init__(self, amount: int | float, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.dim = dim

    def _kept(self, t: Tensor, size: int, pruned: int) -> Tensor:
        draws = ops.rand(size)
        return draws > ops.kthvalue(draws, pruned).values

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float, dim: int = -1) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(_Structured):
    """Zero the ``amount`` channels (slices along ``dim``) of least ``n``-norm."""

    def __init__(self, amount: int | float, n: Any, dim: int = -1) -> None:
        _check_amount(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def _kept(self, t: Tensor, size: int, pruned: int) -> Tensor:
        dim = self.dim if self.dim >= 0 else t.ndim + self.dim
        norms = ops.norm(t, p=self.n, dim=[d for d in range(t.ndim) if d != dim])
        keep = ops.zeros(size, dtype=dtypes.bool_, device=t.device)
        keep[ops.topk(norms, size - pruned, largest=True).indices] = True
        return keep

    @classmethod
    def apply(cls, module: Module, name: str, amount: int | float, n: Any, dim: int,  # type: ignore[override]
              importance_scores: Tensor | None = None) -> BasePruningMethod:
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Multiply the mask by a given one."""

    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise AssertionError(f"mask of shape {tuple(self.mask.shape)} for a tensor of shape {tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str, mask: Tensor) -> BasePruningMethod:  # type: ignore[override]
        return super().apply(module, name, mask=mask)


def _check_amount(amount: Any) -> None:
    if not isinstance(amount, numbers.Real) or isinstance(amount, bool):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _count(amount: int | float, size: int) -> int:
    """How many of ``size`` entries (or channels) ``amount`` prunes."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
        return int(amount)
    return round(amount * size)


def _check_structured(t: Tensor, dim: int) -> None:
    if t.ndim <= 1:
        raise ValueError(
            "Structured pruning can only be applied to multidimensional tensors. "
            f"Found tensor of shape {tuple(t.shape)} with {t.ndim} dims"
        )
    if dim >= t.ndim or dim < -t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {tuple(t.shape)}")


def _channel_mask(t: Tensor, dim: int, keep: Tensor) -> Tensor:
    """Ones in the channels along ``dim`` that ``keep`` (a bool vector) keeps, zeros elsewhere."""
    shape = [1] * t.ndim
    shape[dim] = -1
    return ops.ones_like(t) * keep.to(dtype=t.dtype).reshape(shape)


def identity(module: Module, name: str) -> Module:
    """Reparametrize ``name`` as ``name_orig * name_mask`` with a mask of ones.

    >>> import tidu
    >>> layer = tidu.nn.utils.prune.identity(tidu.nn.Linear(2, 2), "bias")
    >>> layer.bias_mask
    tensor([1., 1.])
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: int | float) -> Module:
    """Prune ``amount`` entries of ``name`` chosen at random.

    >>> import tidu
    >>> layer = tidu.nn.utils.prune.random_unstructured(tidu.nn.Linear(4, 5), "weight", amount=0.25)
    >>> int((layer.weight_mask == 0).sum())
    5
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: int | float, importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` entries of ``name`` of least magnitude (of ``importance_scores``, when
    given).

    >>> import tidu
    >>> layer = tidu.nn.Linear(2, 1)
    >>> with tidu.no_grad():
    ...     _ = layer.weight.copy_(tidu.tensor([[3.0, -1.0]]))
    >>> tidu.nn.utils.prune.l1_unstructured(layer, "weight", amount=0.5).weight_mask
    tensor([[1., 0.]])
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: int | float, dim: int) -> Module:
    """Prune ``amount`` channels of ``name`` along ``dim``, chosen at random.

    >>> import tidu
    >>> layer = tidu.nn.utils.prune.random_structured(tidu.nn.Linear(3, 4), "weight", amount=2, dim=0)
    >>> int((layer.weight_mask.sum(1) == 0).sum())
    2
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: int | float, n: Any, dim: int,
                  importance_scores: Tensor | None = None) -> Module:
    """Prune the ``amount`` channels of ``name`` along ``dim`` of least ``n``-norm.

    >>> import tidu
    >>> layer = tidu.nn.Linear(2, 2)
    >>> with tidu.no_grad():
    ...     _ = layer.weight.copy_(tidu.tensor([[1.0, 1.0], [0.1, 0.2]]))
    >>> tidu.nn.utils.prune.ln_structured(layer, "weight", amount=1, n=2, dim=0).weight
    tensor([[1., 1.],
            [0., 0.]], grad_fn=<mul>)
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type,
                        importance_scores: dict | None = None, **kwargs: Any) -> None:
    """Prune the parameters ``(module, name)`` as one vector with ``pruning_method`` (an
    unstructured method, such as ``L1Unstructured``): ``amount`` counts over all of them.

    >>> import tidu
    >>> a, b = tidu.nn.Linear(2, 1, bias=False), tidu.nn.Linear(2, 1, bias=False)
    >>> with tidu.no_grad():
    ...     _ = a.weight.copy_(tidu.tensor([[1.0, 0.1]])); _ = b.weight.copy_(tidu.tensor([[0.2, 3.0]]))
    >>> tidu.nn.utils.prune.global_unstructured([(a, "weight"), (b, "weight")],
    ...                                         tidu.nn.utils.prune.L1Unstructured, amount=2)
    >>> a.weight_mask, b.weight_mask
    (tensor([[1., 0.]]), tensor([[0., 1.]]))
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = tuple(parameters)
    scores = importance_scores if importance_scores is not None else {}
    if not isinstance(scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    with no_grad():
        relevant = parameters_to_vector([scores.get((m, n), getattr(m, n)) for m, n in parameters])
        default_mask = parameters_to_vector([getattr(m, n + "_mask", None) if hasattr(m, n + "_mask")
                                             else ops.ones_like(getattr(m, n)) for m, n in parameters])
        container = PruningContainer()
        container._tensor_name = "temp"
        method = pruning_method(**kwargs)
        method._tensor_name = "temp"
        if method.PRUNING_TYPE != "unstructured":
            raise TypeError(
                'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                f"Found method {pruning_method} of type {method.PRUNING_TYPE}"
            )
        container.add_pruning_method(method)
        final = container.compute_mask(relevant, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final[pointer:pointer + count].view_as(param))
        pointer += count


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``name`` with ``mask`` (multiplied into any mask it has).

    >>> import tidu
    >>> layer = tidu.nn.utils.prune.custom_from_mask(tidu.nn.Linear(2, 2), "bias", tidu.tensor([0.0, 1.0]))
    >>> layer.bias_mask
    tensor([0., 1.])
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make ``name`` a plain parameter again, holding its pruned value.

    >>> import tidu
    >>> layer = tidu.nn.utils.prune.custom_from_mask(tidu.nn.Linear(2, 2), "bias", tidu.tensor([0.0, 1.0]))
    >>> sorted(name for name, _ in tidu.nn.utils.prune.remove(layer, "bias").named_parameters())
    ['bias', 'weight']
    """
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or a submodule has a pruning hook.

    >>> import tidu
    >>> net = tidu.nn.Sequential(tidu.nn.Linear(2, 2))
    >>> tidu.nn.utils.prune.is_pruned(net)
    False
    >>> _ = tidu.nn.utils.prune.identity(net[0], "weight")
    >>> tidu.nn.utils.prune.is_pruned(net)
    True
    """
    return any(isinstance(hook, BasePruningMethod)
               for m in module.modules() for hook in m._forward_pre_hooks.values())
