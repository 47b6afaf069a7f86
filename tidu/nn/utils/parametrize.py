"""``register_parametrization``: make a module's parameter or buffer the output of modules
applied to stored originals, recomputed on every access.

The module's class is swapped for a subclass named ``Parametrized<Class>`` whose property for the
tensor's name evaluates ``module.parametrizations[name]``; the originals live in that
``ParametrizationList`` (``original``, or ``original0``, ``original1``, ... when the first
parametrization's ``right_inverse`` returns several tensors).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...core.grad_mode import no_grad
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]

_cache_enabled = 0
_cache: dict[tuple[int, str], Tensor] = {}


@contextmanager
def cached() -> Iterator[None]:
    """Inside, each parametrized tensor is computed once, on first use, and reused (dropped on
    leaving the outermost ``cached``): for a weight used several times in one forward.

    >>> import tidu
    >>> from tidu.nn.utils import parametrize
    >>> layer = tidu.nn.utils.parametrizations.weight_norm(tidu.nn.Linear(2, 2))
    >>> with parametrize.cached():
    ...     layer.weight is layer.weight
    True
    """
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _store(module: Module, name: str, value: Tensor, as_parameter: bool) -> None:
    if as_parameter:
        module.register_parameter(name, value if isinstance(value, Parameter) else Parameter(value))
    else:
        module.register_buffer(name, value)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, in order, and the originals they start from.

    >>> import tidu
    >>> from tidu.nn.utils import parametrize
    >>> class Symmetric(tidu.nn.Module):
    ...     def forward(self, x):
    ...         return x.triu() + x.triu(1).transpose(0, 1)
    >>> layer = parametrize.register_parametrization(tidu.nn.Linear(2, 2, bias=False), "weight", Symmetric())
    >>> type(layer.parametrizations.weight).__name__, [name for name, _ in layer.named_parameters()]
    ('ParametrizationList', ['parametrizations.weight.original'])
    """

    def __init__(self, modules: list[Module], original: Tensor, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        as_parameter = isinstance(original, Parameter)
        shape, dtype = tuple(original.shape), original.dtype
        with no_grad():
            new = self._right_inverse(original, required=False)
        if isinstance(new, Tensor):
            self.is_tensor, self.ntensors = True, 1
            if new.dtype != dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                                 f"original.dtype: {dtype}\nright_inverse(original).dtype: {new.dtype}")
            if new is not original:
                original.data = new.detach()
            _store(self, "original", original, as_parameter)
        else:
            self.is_tensor, self.ntensors = False, len(new)
            for i, value in enumerate(new):
                value = value.detach()
                _store(self, f"original{i}", Parameter(value, original.requires_grad) if as_parameter else value,
                       as_parameter)
        if not unsafe:
            _check_same(self(), shape, dtype, "Registering a parametrization may not change the {} of the tensor, "
                        "unless `unsafe` flag is enabled.\nunparametrized {}: {}\nparametrized {}: {}")

    def _right_inverse(self, value: Tensor, required: bool = True) -> Any:
        """``value`` through the ``right_inverse`` of each parametrization, last first; at
        registration (not ``required``) a missing or ``NotImplementedError`` one is the identity."""
        for module in reversed(list(self)):
            if hasattr(module, "right_inverse"):
                try:
                    value = module.right_inverse(value)
                except NotImplementedError:
                    if required:
                        raise
            elif required:
                raise RuntimeError(f"parametrization {type(module).__name__} does not implement right_inverse.")
        return value

    def originals(self) -> list[Tensor]:
        if self.is_tensor:
            return [self.original]
        return [getattr(self, f"original{i}") for i in range(self.ntensors)]

    def right_inverse(self, value: Tensor) -> None:
        """Set the originals so that the parametrized tensor becomes ``value`` (not recorded)."""
        with no_grad():
            new = self._right_inverse(value)
            targets = self.originals()
            for target, item in zip(targets, [new] if self.is_tensor else new, strict=True):
                target.data = item.detach().to(target.dtype)

    def forward(self) -> Tensor:
        modules = list(self)
        value = modules[0](*self.originals())
        for module in modules[1:]:
            value = module(value)
        return value


def _check_same(value: Any, shape: tuple, dtype: Any, message: str) -> None:
    """A parametrization's result keeps the tensor's shape and dtype (``message``: what it
    changed, then ``{}`` for the names and values before and after)."""
    if not isinstance(value, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
    if value.dtype != dtype:
        raise ValueError(message.format("dtype", "dtype", dtype, "dtype", value.dtype))
    if tuple(value.shape) != shape:
        raise ValueError(message.format("shape", "shape", shape, "shape", tuple(value.shape)))


def _parametrized_property(name: str) -> property:
    def get(module: Module) -> Tensor:
        if _cache_enabled:
            key = (id(module), name)
            if key not in _cache:
                _cache[key] = module.parametrizations[name]()
            return _cache[key]
        return module.parametrizations[name]()

    def set_(module: Module, value: Tensor) -> None:
        module.parametrizations[name].right_inverse(value)

    return property(get, set_)


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, when given).

    >>> import tidu
    >>> from tidu.nn.utils import parametrize
    >>> layer = tidu.nn.utils.parametrizations.weight_norm(tidu.nn.Linear(2, 2))
    >>> parametrize.is_parametrized(layer), parametrize.is_parametrized(layer, "bias")
    (True, False)
    """
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization swapped it.

    >>> import tidu
    >>> layer = tidu.nn.utils.parametrizations.weight_norm(tidu.nn.Linear(2, 2))
    >>> tidu.nn.utils.parametrize.type_before_parametrizations(layer).__name__
    'Linear'
    """
    return type(module).__bases__[0] if is_parametrized(module) else type(module)


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Replace the parameter or buffer ``tensor_name`` of ``module`` by
    ``parametrization(original)``; a second call on the same name chains another one.

    >>> import tidu
    >>> from tidu.nn.utils import parametrize
    >>> class Double(tidu.nn.Module):
    ...     def forward(self, x):
    ...         return 2 * x
    >>> layer = tidu.nn.Linear(1, 1, bias=False)
    >>> _ = tidu.nn.init.ones_(layer.weight)
    >>> _ = parametrize.register_parametrization(layer, "weight", Double())
    >>> layer.weight, type(layer).__name__
    (tensor([[2.]], grad_fn=<mul>), 'ParametrizedLinear')
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            shape, dtype = tuple(current.shape), current.dtype
            value = parametrization(current)
            _check_same(value, shape, dtype, "Registering a parametrization may not change the {} of the tensor, "
                        f"unless the `unsafe` flag is enabled.\nmodule.{tensor_name}.{{}}: {{}}\n"
                        f"parametrization(module.{tensor_name}).{{}}: {{}}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    back = parametrization.right_inverse(value)
                except NotImplementedError:
                    back = None
                if back is not None:
                    _check_same(back, shape, dtype, "The tensor returned by parametrization.right_inverse must have "
                                f"the same {{}} as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                                f"module.{tensor_name}.{{}}: {{}}\nreturned {{}}: {{}}")
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
        return module
    if tensor_name not in module._parameters and tensor_name not in module._buffers:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a parametrized element with "
                         f"name '{tensor_name}'")
    original = getattr(module, tensor_name)
    parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        cls = type(module)
        module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})
        module.parametrizations = ModuleDict()
    setattr(type(module), tensor_name, _parametrized_property(tensor_name))
    module.parametrizations[tensor_name] = parametrizations
    return module


def remove_parametrizations(module: Module, tensor_name: str, leave_parametrized: bool = True) -> Module:
    """Undo the parametrizations of ``tensor_name``: it becomes a plain parameter (or buffer)
    again, holding its parametrized value, or the original with ``leave_parametrized=False``.

    >>> import tidu
    >>> from tidu.nn.utils import parametrize
    >>> layer = tidu.nn.utils.parametrizations.weight_norm(tidu.nn.Linear(2, 2))
    >>> layer = parametrize.remove_parametrizations(layer, "weight")
    >>> type(layer).__name__, list(layer.state_dict())
    ('Linear', ['bias', 'weight'])
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    first = parametrizations.originals()[0]
    as_parameter = isinstance(first, Parameter)
    if parametrizations.is_tensor:
        tensor = first
        if leave_parametrized:
            with no_grad():
                tensor.data = getattr(module, tensor_name).detach()
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
                             "parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name).detach()
        tensor = Parameter(value, first.requires_grad) if as_parameter else value
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _store(module, tensor_name, tensor, as_parameter)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module
