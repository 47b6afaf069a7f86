"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``, ``ParameterDict``."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ...tensor import Tensor
from ..parameter import Parameter
from .module import Module, _indent


def _index(idx: int, size: int) -> int:
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx % size


class Sequential(Module):
    """Modules run one after another; built from positional modules or an ``OrderedDict``.

    >>> import tidu
    >>> net = tidu.nn.Sequential(tidu.nn.Linear(4, 3), tidu.nn.ReLU())
    >>> net
    Sequential(
      (0): Linear(in_features=4, out_features=3, bias=True)
      (1): ReLU()
    )
    >>> list(net.state_dict())
    ['0.weight', '0.bias']
    >>> net(tidu.ones(2, 4)).shape
    tidu.Size([2, 3])
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self))]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_index(idx, len(self))]
        self.add_module(key, module)

    def __delitem__(self, idx: int | slice) -> None:
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(self))]]:
            del self._modules[key]
        items = list(self._modules.values())
        self._modules.clear()
        for i, module in enumerate(items):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        for module in sequential:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items = list(self._modules.values())
        items.insert(index + n if index < 0 else index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)
        return self

    def pop(self, key: int | slice) -> Module:
        value = self[key]
        del self[key]
        return value

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return self.extend(list(other))

    def __mul__(self, other: int) -> Sequential:
        return Sequential(*self._repeated(other))

    __rmul__ = __mul__

    def __imul__(self, other: int) -> Sequential:
        return self.extend(self._repeated(other)[len(self):])

    def _repeated(self, times: int) -> list[Module]:
        """The modules ``times`` over (the same modules, as PyTorch's ``*``)."""
        if not isinstance(times, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(times)}")
        if times <= 0:
            raise ValueError(f"Non-positive multiplication factor {times} for {type(self)}")
        return list(self) * times

    def forward(self, input: Any) -> Any:  # noqa: A002
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """A list of modules, registered so their parameters are found.

    >>> import tidu
    >>> layers = tidu.nn.ModuleList([tidu.nn.Linear(2, 2) for _ in range(3)])
    >>> len(layers), len(list(layers.parameters()))
    (3, 6)
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return type(self)(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self))), module)

    def __delitem__(self, idx: int | slice) -> None:
        items = list(self._modules.values())
        del items[idx]
        self._modules.clear()
        for i, module in enumerate(items):
            self._modules[str(i)] = module

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __repr__(self) -> str:
        """Runs of modules with the same repr print once, as ``(0-2): 3 x Linear(...)`` (PyTorch's)."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks: list[list] = []
        for i, text in enumerate(reprs):
            if blocks and blocks[-1][2] == text:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, text])
        lines = []
        for start, end, text in blocks:
            head = f"({start})" if start == end else f"({start}-{end}): {end - start + 1} x"
            lines.append(_indent(f"{head} {text}" if start != end else f"{head}: {text}", 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])

    def pop(self, key: int | slice) -> Module:
        value = self[key]
        del self[key]
        return value

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got {type(modules).__name__}")
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(items):
            self.add_module(str(i), m)


class _KeyedContainer(Module):
    """The dict protocol over one of Module's registries (``_store``: ``"_modules"`` or
    ``"_parameters"``); subclasses say how a value is registered (``__setitem__``)."""

    _store = ""

    def __init__(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.update(values)

    def _items(self) -> dict[str, Any]:
        return getattr(self, self._store)

    def __getitem__(self, key: str) -> Any:
        return self._items()[key]

    def __delitem__(self, key: str) -> None:
        del self._items()[key]

    def __len__(self) -> int:
        return len(self._items())

    def __iter__(self) -> Iterator[str]:
        return iter(self._items())

    def __contains__(self, key: object) -> bool:
        return key in self._items()

    def clear(self) -> None:
        self._items().clear()

    def pop(self, key: str) -> Any:
        return self._items().pop(key)

    def keys(self) -> Any:
        return self._items().keys()

    def items(self) -> Any:
        return self._items().items()

    def values(self) -> Any:
        return self._items().values()

    def update(self, values: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        pairs = values.items() if isinstance(values, Mapping) else values
        for key, value in pairs:
            self[key] = value


class ModuleDict(_KeyedContainer):
    """An ordered dict of modules, registered under their keys.

    >>> import tidu
    >>> heads = tidu.nn.ModuleDict({"a": tidu.nn.Linear(2, 1), "b": tidu.nn.ReLU()})
    >>> list(heads.keys()), list(heads.state_dict())
    (['a', 'b'], ['a.weight', 'a.bias'])
    """

    _store = "_modules"

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)


def _as_parameter(value: Any) -> Any:
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _param_line(key: str, p: Any, kind: str) -> str:
    """PyTorch's line for a parameter in a list's or dict's repr (``kind``: its dtype or type name),
    indented two spaces inside the container's own."""
    if p is None:
        return f"  ({key}): Object of type: NoneType"
    return f"  ({key}): Parameter containing: [{kind} of size {'x'.join(map(str, p.shape))}]"


class ParameterList(Module):
    """A list of parameters (tensors are wrapped in ``Parameter``), registered as ``0``, ``1``, ...

    >>> import tidu
    >>> params = tidu.nn.ParameterList([tidu.ones(2), tidu.zeros(3)])
    >>> len(params), [name for name, _ in params.named_parameters()]
    (2, ['0', '1'])
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: int) -> Any:
        return self._parameters[str(_index(idx, len(self)))]

    def __setitem__(self, idx: int, value: Any) -> None:
        setattr(self, str(_index(idx, len(self))), _as_parameter(value))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._parameters.values())

    def append(self, value: Any) -> ParameterList:
        setattr(self, str(len(self)), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        for value in values:
            self.append(value)
        return self

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, p is not None and str(p.dtype)) for k, p in self._parameters.items())


class ParameterDict(_KeyedContainer):
    """An ordered dict of parameters (tensors are wrapped in ``Parameter``).

    >>> import tidu
    >>> params = tidu.nn.ParameterDict({"scale": tidu.ones(2)})
    >>> list(params.keys()), params["scale"].requires_grad
    (['scale'], True)
    """

    _store = "_parameters"

    def __setitem__(self, key: str, value: Any) -> None:
        if value is None:  # a key without a parameter, as PyTorch keeps it
            self.register_parameter(key, None)
        else:
            setattr(self, key, _as_parameter(value))

    def get(self, key: str, default: Any = None) -> Any:
        return self._parameters.get(key, default)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self._parameters:
            self[key] = default
        return self[key]

    def popitem(self) -> tuple[str, Any]:
        key = next(reversed(self._parameters))
        return key, self.pop(key)

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict(self._parameters))

    def fromkeys(self, keys: Iterable[str], default: Any = None) -> ParameterDict:
        return ParameterDict((key, default) for key in keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._parameters))

    def __ior__(self, other: Any) -> ParameterDict:
        self.update(other)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, p is not None and p.type()) for k, p in self._parameters.items())
