"""``Module``: the base class of every layer (PyTorch's ``nn.Module``), with its hooks: forward
pre-hooks, forward hooks, full backward hooks and backward pre-hooks (``_backward_hooks.py``),
and the module-wide ones (``register_module_full_backward_hook``...)."""

from __future__ import annotations

import functools
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from ...core import dtypes, formats
from ...core.device import as_device
from ...core.grad_mode import no_grad
from ...core.inplace import assign_
from ...tensor import RemovableHandle, Tensor, of_array
from ..parameter import Buffer, Parameter, is_lazy


class _IncompatibleKeys(NamedTuple):
    """What ``load_state_dict`` returns (PyTorch's ``_IncompatibleKeys``)."""

    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    __str__ = __repr__


IncompatibleKeys = _IncompatibleKeys
_EXTRA_STATE = "_extra_state"


class _WrappedHook:
    """A load-state-dict pre-hook, called with its module first when it has one (held weakly,
    and pickled or deep-copied with it)."""

    def __init__(self, hook: Callable[..., Any], module: Module | None = None) -> None:
        self.hook = hook
        self.module = None if module is None else weakref.ref(module)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.module is None:
            return self.hook(*args, **kwargs)
        module = self.module()
        if module is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(module, *args, **kwargs)

    def __getstate__(self) -> dict:
        return {"hook": self.hook, "module": None if self.module is None else self.module()}

    def __setstate__(self, state: dict) -> None:
        self.hook = state["hook"]
        self.module = None if state["module"] is None else weakref.ref(state["module"])


_global_backward_hooks: OrderedDict = OrderedDict()
_global_forward_pre_hooks: OrderedDict = OrderedDict()
_global_forward_hooks: OrderedDict = OrderedDict()  # id -> (hook, with_kwargs, always_call), as a module's
_global_backward_pre_hooks: OrderedDict = OrderedDict()
_global_is_full_backward_hook: bool | None = None
_BOTH_GLOBAL = ("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                "Please use only one of them.")
_BOTH = ("Cannot use both regular backward hooks and full backward hooks on a single Module. "
         "Please use only one of them.")


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A full backward hook of every module (``Module.register_full_backward_hook``), called before
    the module's own; for debugging.

    >>> import tidu
    >>> seen = []
    >>> h = tidu.nn.modules.module.register_module_full_backward_hook(
    ...     lambda m, gi, go: seen.append(type(m).__name__))
    >>> tidu.nn.Tanh()(tidu.ones(2, requires_grad=True)).sum().backward()
    >>> h.remove(); seen
    ['Tanh']
    """
    return _register_global_backward_hook(hook, full=True)


def register_module_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """The older module-wide backward hook: in tidu a full backward hook (see
    ``Module.register_backward_hook``)."""
    return _register_global_backward_hook(hook, full=False)


def _register_global_backward_hook(hook: Callable[..., Any], full: bool) -> RemovableHandle:
    """A module-wide backward hook of one kind (the full or the older one: never both, as PyTorch)."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError(_BOTH_GLOBAL)
    _global_is_full_backward_hook = full
    handle = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[handle.id] = hook
    return handle


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A backward pre-hook of every module (``Module.register_full_backward_pre_hook``), called
    before the module's own; for debugging."""
    handle = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[handle.id] = hook
    return handle



def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """A forward pre-hook of every module (``Module.register_forward_pre_hook``), called before
    the module's own; for debugging.

    >>> import tidu
    >>> h = tidu.nn.modules.module.register_module_forward_pre_hook(lambda m, args: (args[0] + 1,))
    >>> tidu.nn.Identity()(tidu.tensor(1.0))
    tensor(2.)
    >>> h.remove()
    """
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook: Callable[..., Any], *, with_kwargs: bool = False,
                                 always_call: bool = False) -> RemovableHandle:
    """A forward hook of every module (``Module.register_forward_hook``), called before the
    module's own; for debugging.

    >>> import tidu
    >>> seen = []
    >>> h = tidu.nn.modules.module.register_module_forward_hook(lambda m, args, out: seen.append(type(m).__name__))
    >>> _ = tidu.nn.Sequential(tidu.nn.ReLU())(tidu.ones(1))
    >>> h.remove(); seen
    ['ReLU', 'Sequential']
    """
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = (hook, with_kwargs, always_call)
    return handle


def _add_hook(module: Module, attr: str, entry: Any, prepend: bool = False) -> RemovableHandle:
    """Put ``entry`` in the module's ordered hook dict ``attr`` (made on first use), last or first;
    the handle removes it."""
    hooks = module.__dict__.setdefault(attr, OrderedDict())
    handle = RemovableHandle(hooks)
    hooks[handle.id] = entry
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle

class _KwargsPreHook:
    """A forward pre-hook registered ``with_kwargs``: called with the keyword arguments too."""

    __slots__ = ("hook",)

    def __init__(self, hook: Callable[..., Any]) -> None:
        self.hook = hook


class Module:
    """Base class for neural-network modules: assign Parameters, buffers and submodules as attributes.

    Attribute assignment registers them; ``forward`` says what the module computes and calling the
    module runs it.

    >>> import tidu
    >>> class Affine(tidu.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = tidu.nn.Parameter(tidu.ones(2))
    ...         self.register_buffer("shift", tidu.zeros(2))
    ...     def forward(self, x):
    ...         return x * self.scale + self.shift
    >>> m = Affine()
    >>> [name for name, _ in m.named_parameters()], list(m.state_dict())
    (['scale'], ['scale', 'shift'])
    >>> m(tidu.tensor([1.0, 2.0]))
    tensor([1., 2.], grad_fn=<add>)
    """

    training: bool
    _version: int = 1

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_is_full_backward_hook", None)
        for hooks in ("_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                      "_load_state_dict_post_hooks"):
            object.__setattr__(self, hooks, OrderedDict())

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        d = self.__dict__
        # every layer call comes here: nothing to copy without hooks
        if (d.get("_forward_pre_hooks") or d.get("_forward_hooks") or d.get("_backward_hooks")
                or d.get("_backward_pre_hooks") or _global_backward_hooks or _global_backward_pre_hooks
                or _global_forward_pre_hooks or _global_forward_hooks):
            return self._call_with_hooks(args, kwargs)
        return self.forward(*args, **kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        d = self.__dict__
        backward_hooks = self._get_backward_hooks()
        backward_pre_hooks = [*_global_backward_pre_hooks.values(), *d.get("_backward_pre_hooks", {}).values()]
        hooks = [*_global_forward_pre_hooks.values(), *d.get("_forward_pre_hooks", {}).values()]
        if hooks:
            for hook in hooks:
                if hook.__class__ is _KwargsPreHook:
                    result = hook.hook(self, args, kwargs)
                    if result is not None:
                        if not (isinstance(result, tuple) and len(result) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, "
                                               f"new_kwargs), but got {result}.")
                        args, kwargs = result
                    continue
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        bw_hook = None
        if backward_hooks or backward_pre_hooks:
            from ._backward_hooks import BackwardHook

            bw_hook = BackwardHook(self, backward_hooks, backward_pre_hooks)
            args = bw_hook.setup_input_hook(args)
        hooks = [*_global_forward_hooks.values(), *d.get("_forward_hooks", {}).values()]
        if not hooks:
            output = self.forward(*args, **kwargs)
        else:
            try:
                output = self.forward(*args, **kwargs)
            except Exception:
                for hook, with_kwargs, always_call in hooks:
                    if always_call:
                        hook(self, args, kwargs, None) if with_kwargs else hook(self, args, None)
                raise
            for hook, with_kwargs, _ in hooks:
                result = hook(self, args, kwargs, output) if with_kwargs else hook(self, args, output)
                if result is not None:
                    output = result
        if bw_hook is not None:
            if not isinstance(output, Tensor | tuple):
                warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(output)}", stacklevel=3)
            output = bw_hook.setup_output_hook(output)
        return output

    def _get_backward_hooks(self) -> list:
        """The full backward hooks of a call: the module-wide ones first (tidu runs the older
        non-full hooks as full ones)."""
        return [*_global_backward_hooks.values(), *self.__dict__.get("_backward_hooks", {}).values()]

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the module's outputs are
        computed, before its backward hooks; a tuple returned replaces ``grad_output``.

        >>> import tidu
        >>> layer = tidu.nn.Linear(2, 1)
        >>> h = layer.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 0,))
        >>> layer(tidu.ones(1, 2)).sum().backward()
        >>> layer.bias.grad
        tensor([0.])
        >>> h.remove()
        """
        return _add_hook(self, "_backward_pre_hooks", hook, prepend)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients with respect to the
        module's inputs are computed: one entry per positional argument (``None`` where it is not a
        tensor that requires grad); a tuple returned replaces ``grad_input``. The outputs of such a
        call refuse in-place writes, as PyTorch's do.

        >>> import tidu
        >>> layer = tidu.nn.Linear(2, 1)
        >>> h = layer.register_full_backward_hook(lambda m, gi, go: print(gi[0].shape, go[0].shape))
        >>> layer(tidu.ones(3, 2, requires_grad=True)).sum().backward()
        tidu.Size([3, 2]) tidu.Size([3, 1])
        >>> h.remove()
        """
        if self.__dict__.get("_is_full_backward_hook") is False:
            raise RuntimeError(_BOTH)
        object.__setattr__(self, "_is_full_backward_hook", True)
        return _add_hook(self, "_backward_hooks", hook, prepend)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """PyTorch's older (non-full) backward hook. tidu runs it as a full backward hook
        (``register_full_backward_hook``): its ``grad_input`` is that of the module's inputs, where
        PyTorch's is that of the last operation inside the module (docs/guides/pytorch-differences.md)."""
        if self.__dict__.get("_is_full_backward_hook") is True:
            raise RuntimeError(_BOTH)
        object.__setattr__(self, "_is_full_backward_hook", False)
        return _add_hook(self, "_backward_hooks", hook)

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before every ``forward``; a result other than ``None``
        replaces the positional arguments (a non-tuple becomes the only one). With
        ``with_kwargs``, ``hook(module, args, kwargs)`` returns ``None`` or ``(args, kwargs)``;
        ``prepend`` puts this hook first.

        >>> import tidu
        >>> layer = tidu.nn.Identity()
        >>> handle = layer.register_forward_pre_hook(lambda module, args: args[0] * 2)
        >>> layer(tidu.tensor(1.0))
        tensor(2.)
        >>> handle.remove()
        >>> layer(tidu.tensor(1.0))
        tensor(1.)
        """
        return _add_hook(self, "_forward_pre_hooks", _KwargsPreHook(hook) if with_kwargs else hook, prepend)

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after every ``forward`` (``hook(module, args,
        kwargs, output)`` with ``with_kwargs``); a result other than ``None`` replaces the output.
        Hooks run in the order registered (``prepend`` puts this one first); ``always_call`` runs
        it, with ``output=None``, when ``forward`` raises too.

        >>> import tidu
        >>> layer = tidu.nn.Linear(2, 3)
        >>> features = {}
        >>> handle = layer.register_forward_hook(lambda m, args, out: features.update(fc=out.detach()))
        >>> y = layer(tidu.ones(4, 2))
        >>> features["fc"].shape
        tidu.Size([4, 3])
        >>> handle.remove()
        """
        return _add_hook(self, "_forward_hooks", (hook, with_kwargs, always_call), prepend)

    # --- registration ---------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or ``None``, a placeholder for an optional one) under ``name``."""
        _check_name(self, name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(tidu.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                "explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                "the forward() method."
            )
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer: state that is not a parameter (BatchNorm's running mean); in the state
        dict unless ``persistent=False``."""
        _check_name(self, name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' (tidu Tensor or None required)"
            )
        if type(tensor) is Buffer:  # registered, it is a plain Tensor, as in PyTorch
            tensor.__class__ = Tensor
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(self, name, "_buffers", "_modules")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(tidu.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(self, name, "_parameters", "_buffers")
            self._modules[name] = value
        elif params is not None and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' (Module or None expected)")
            self._modules[name] = value
        elif isinstance(value, Buffer) or (params is not None and name in self._buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' (tidu.nn.Buffer, Tensor or None expected)"
                )
            if isinstance(value, Buffer):
                self.register_buffer(name, value, value.persistent)
            else:
                self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    # --- traversal ------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
                      ) -> Iterator[tuple[str, Module]]:
        """This module and every descendant, with dotted names (``""`` for this one)."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, m in self.named_children():
            yield m

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool = True
                       ) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
                         ) -> Iterator[tuple[str, Parameter]]:
        """``(dotted name, parameter)`` pairs, each shared parameter once.

        >>> import tidu
        >>> net = tidu.nn.Sequential(tidu.nn.Linear(2, 3), tidu.nn.ReLU(), tidu.nn.Linear(3, 1))
        >>> [(name, tuple(p.shape)) for name, p in net.named_parameters()]
        [('0.weight', (3, 2)), ('0.bias', (3,)), ('2.weight', (1, 3)), ('2.bias', (1,))]
        """
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
                      ) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        module = self
        for item in target.split(".") if target else []:
            if item not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{item}`")
            module = module._modules[item]
        return module

    def set_submodule(self, target: str, module: Module, strict: bool = False) -> None:
        """Put ``module`` at the dotted path ``target`` (``"layer1.0.conv"``), as PyTorch's: the
        modules on the way must exist; with ``strict`` so must the one replaced.

        >>> import tidu
        >>> net = tidu.nn.Sequential(tidu.nn.Linear(2, 2))
        >>> net.set_submodule("0", tidu.nn.Identity()); net
        Sequential(
          (0): Identity()
        )
        """
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        if not target:
            raise ValueError("Cannot set the submodule without a target name!")
        *path, name = target.split(".")
        parent = self
        for item in path:
            if not hasattr(parent, item):
                raise AttributeError(f"{parent._get_name()} has no attribute `{item}`")
            parent = getattr(parent, item)
            if not isinstance(parent, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{parent._get_name()} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at the dotted path ``target`` (``"layer1.0.weight"``), as PyTorch's.

        >>> import tidu
        >>> tidu.nn.Sequential(tidu.nn.Linear(2, 3)).get_parameter("0.bias").shape
        tidu.Size([3])
        """
        return self._get_member(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target: str) -> Any:
        """The buffer at the dotted path ``target`` (``"bn.running_mean"``), as PyTorch's."""
        return self._get_member(target, "_buffers", "a buffer")

    def _get_member(self, target: str, store: str, kind: str) -> Any:
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        if name not in getattr(module, store):
            raise AttributeError(f"`{name}` is not {kind}")
        return getattr(module, store)[name]

    # --- modes and gradients --------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (Dropout drops, BatchNorm uses batch statistics) here and below.

        >>> import tidu
        >>> net = tidu.nn.Sequential(tidu.nn.Dropout())
        >>> net.eval()[0].training, net.train()[0].training
        (False, True)
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the ``.grad`` of every parameter: to ``None`` (default) or to zeros.

        >>> import tidu
        >>> layer = tidu.nn.Linear(2, 1)
        >>> layer(tidu.ones(1, 2)).sum().backward()
        >>> layer.zero_grad(set_to_none=False)
        >>> layer.bias.grad
        tensor([0.])
        >>> layer.zero_grad()
        >>> layer.bias.grad is None
        True
        """
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with no_grad():
                    p.grad.zero_()

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every submodule (children first), then on this module.

        >>> import tidu
        >>> net = tidu.nn.Sequential(tidu.nn.Linear(2, 2), tidu.nn.Linear(2, 2))
        >>> _ = net.apply(lambda m: tidu.nn.init.zeros_(m.bias) if isinstance(m, tidu.nn.Linear) else None)
        >>> net[1].bias
        Parameter containing:
        tensor([0., 0.], requires_grad=True)
        """
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # --- conversion -----------------------------------------------------------------------
    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Module:
        for m in self.modules() if recurse else (self,):
            for p in m._parameters.values():
                if p is None:
                    continue
                with no_grad():
                    new = fn(p)
                if new is not p:
                    p.data = new
                    if p.grad is not None:
                        with no_grad():
                            p.grad = fn(p.grad)
            for name, b in m._buffers.items():
                if b is not None:
                    with no_grad():
                        if is_lazy(b):  # stays uninitialized (PyTorch's to() keeps the subclass)
                            b.data = fn(b)
                        else:
                            m._buffers[name] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Cast floating-point parameters and buffers to a dtype (``to(dtype)``, ``to(device)``,
        ``to(device, dtype)``, ``to(tensor)``); in place, returns ``self``. ``memory_format`` is
        checked against the 4-D and 5-D tensors, as PyTorch's, and storage stays row-major
        (tidu/core/formats.py).

        >>> import tidu
        >>> tidu.nn.Linear(2, 1).to(tidu.float64).weight.dtype
        tidu.float64
        >>> tidu.nn.Conv2d(1, 2, 3).to(memory_format=tidu.channels_last).weight.shape
        tidu.Size([2, 1, 3, 3])
        """
        device, target = _parse_to(args, kwargs)
        fmt = kwargs.pop("memory_format", None)
        if fmt is not None:
            formats.as_memory_format(fmt, "to")
            self._apply(lambda t: t.to(memory_format=fmt) if not is_lazy(t) and t.ndim in (4, 5) else t)
        where = as_device(device) if device is not None else None
        if where is not None:
            self._apply(lambda t: t.to(where))
        if target is None:
            return self
        dt = dtypes.as_dtype(target)
        if not dt.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dt}")
        return self._apply(lambda t: t.to(dt) if t.dtype.is_floating_point else t)

    def float(self) -> Module:
        return self.to(dtypes.float32)

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to float16; in place, returns ``self``."""
        return self.to(dtypes.float16)

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to bfloat16; in place, returns ``self``."""
        return self.to(dtypes.bfloat16)

    def to_empty(self, *, device: Any, recurse: bool = True) -> Module:
        """Move parameters and buffers to ``device`` without copying their values (PyTorch leaves
        them uninitialized; here they are zeros); in place, returns ``self``.

        >>> import tidu
        >>> tidu.nn.Linear(2, 1).to_empty(device="cpu").weight
        Parameter containing:
        tensor([[0., 0.]], requires_grad=True)
        """
        from ... import ops

        return self._apply(lambda t: ops.zeros_like(t, device=device), recurse)

    def share_memory(self) -> Module:
        """Nothing to do: tidu's tensors are host or device memory of this process (the
        ``multiprocessing`` queues copy them)."""
        return self

    def compile(self, *args: Any, **kwargs: Any) -> None:
        """PyTorch's in-place ``torch.compile`` of the module's forward: tidu records and fuses by
        itself, so the module stays as it is (``tidu.compile``)."""
        from ...compat import compile as compile_model

        compile_model(self, *args, **kwargs)

    def double(self) -> Module:
        return self.to(dtypes.float64)

    def cpu(self) -> Module:
        """Move parameters and buffers to host memory; in place, returns ``self``."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> Module:
        """Move parameters and buffers to the GPU; in place, returns ``self``."""
        return self.to("cuda" if device is None or isinstance(device, int) else device)

    def type(self, dst_type: Any) -> Module:
        return self._apply(lambda t: t.to(dtypes.as_dtype(dst_type)))

    # --- state dict -----------------------------------------------------------------------
    def state_dict(self, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> OrderedDict:
        """Parameters and persistent buffers by dotted name (PyTorch's keys), detached. Its
        ``_metadata`` holds each module's ``{"version": module._version}`` by dotted name, which
        ``load_state_dict`` gives back to ``_load_from_state_dict`` to read older checkpoints.

        >>> import tidu
        >>> sd = tidu.nn.Sequential(tidu.nn.Linear(2, 2), tidu.nn.BatchNorm1d(2)).state_dict()
        >>> list(sd)
        ['0.weight', '0.bias', '1.weight', '1.bias', '1.running_mean', '1.running_var', '1.num_batches_tracked']
        >>> dict(sd._metadata)
        {'': {'version': 1}, '0': {'version': 1}, '1': {'version': 2}}
        """
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = {"version": self._version}
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self.__dict__.get("_state_dict_pre_hooks", {}).values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self.__dict__.get("_state_dict_hooks", {}).values():
            result = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if result is not None:  # the private hook's result replaces the dict, as in PyTorch
                    destination = result
            elif result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        """Put this module's own parameters, persistent buffers and extra state (not its
        children's) in ``destination``; a subclass may override it."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars or is_lazy(p) else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars or is_lazy(b) else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    def get_extra_state(self) -> Any:
        """Override (with ``set_extra_state``) to keep more in ``state_dict``: what this returns is
        saved under the key ``<prefix>_extra_state``, and given back to ``set_extra_state``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called.")

    def set_extra_state(self, state: Any) -> None:
        """Override (with ``get_extra_state``): takes the ``_extra_state`` entry ``load_state_dict`` finds."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called.")

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, prefix, keep_vars)`` before ``state_dict`` collects this module's tensors."""
        return _add_hook(self, "_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata)`` once ``state_dict`` has collected
        this module's tensors; it may change ``state_dict`` in place.

        >>> import tidu
        >>> layer = tidu.nn.Linear(1, 1)
        >>> def drop_bias(module, state_dict, prefix, metadata):
        ...     del state_dict[prefix + "bias"]
        >>> _ = layer.register_state_dict_post_hook(drop_bias)
        >>> list(layer.state_dict())
        ['weight']
        """
        try:
            hook._from_public_api = True
        except AttributeError:  # a bound method: PyTorch refuses it, tidu marks a wrapper
            hook = functools.wraps(hook)(lambda *args, hook=hook: hook(*args))
            hook._from_public_api = True
        return _add_hook(self, "_state_dict_hooks", hook)

    def _register_state_dict_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """PyTorch's older state-dict post-hook: as ``register_state_dict_post_hook``, but a dict
        it returns replaces the state dict (respected at the module ``state_dict`` is called on)."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was "
                               "previously registered via register_state_dict_post_hook")
        return _add_hook(self, "_state_dict_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` before ``load_state_dict`` reads this module's entries (of a
        copy of the dict given, which the hook may change)."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook: Callable[..., Any], with_module: bool = False
                                           ) -> RemovableHandle:
        """``register_load_state_dict_pre_hook``, whose hook takes the module first only
        ``with_module`` (PyTorch's private form, used by many libraries)."""
        return _add_hook(self, "_load_state_dict_pre_hooks", _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """Call ``hook(module, incompatible_keys)`` after ``load_state_dict`` has loaded; the hook may
        empty the missing and unexpected key lists before ``strict`` checks them.

        >>> import tidu
        >>> layer = tidu.nn.Linear(1, 1)
        >>> _ = layer.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
        >>> layer.load_state_dict({"weight": tidu.ones(1, 1)})
        <All keys matched successfully>
        """
        return _add_hook(self, "_load_state_dict_post_hooks", hook)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool,
                              missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str]) -> None:
        """Load this module's own parameters and persistent buffers (not its children's) from the
        ``prefix`` entries of ``state_dict``, as PyTorch's: copied in place, or assigned (keeping the
        saved dtype and device) when ``local_metadata["assign_to_params_buffers"]``. A subclass
        may override it to read older checkpoints (``local_metadata["version"]``)."""
        for hook in self.__dict__.get("_load_state_dict_pre_hooks", {}).values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {name: t for name, t in self._parameters.items() if t is not None}
        local_state.update((name, t) for name, t in self._buffers.items()
                           if t is not None and name not in self._non_persistent_buffers_set)
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                if not isinstance(value, np.ndarray | np.generic | int | float):
                    error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or '
                                      f"Tensor-like object from checkpoint but received {type(value)}")
                    continue
                value = of_array(np.asarray(value))
            if is_lazy(param):  # a lazy module's weight takes the saved shape (PyTorch's _lazy_load_hook)
                if is_lazy(value):
                    continue
                with no_grad():
                    param.materialize(value.shape)
            if param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:
                value = value[0]
            if tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if isinstance(value, Parameter):
                                value.requires_grad_(param.requires_grad)
                            else:
                                value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    else:
                        assign_(param, value.detach().to(param.device, param.dtype), op="load_state_dict")
            except Exception as ex:  # noqa: BLE001 - reported with the other errors, as PyTorch does
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.shape} and whose dimensions in the checkpoint are {value.shape}, an "
                                  f"exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head, *rest = key[len(prefix):].split(".", 1)
                    if head not in (self._modules if rest else local_state):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from ``state_dict`` (tensors or numpy arrays) into this
        module, converting dtypes; ``assign`` puts the saved tensors in place of the module's
        (their dtype and device kept, a parameter's ``requires_grad`` the module's). ``strict``
        requires exactly this module's keys; any missing or unexpected key and any shape mismatch
        is listed in one ``RuntimeError``.

        >>> import tidu
        >>> a, b = tidu.nn.Linear(2, 1), tidu.nn.Linear(2, 1)
        >>> b.load_state_dict(a.state_dict())
        <All keys matched successfully>
        >>> bool((a.weight == b.weight).sum() == 2)
        True
        >>> b.load_state_dict({"weight": tidu.zeros(1, 2)}, strict=False)
        IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])
        """
        if not hasattr(state_dict, "keys"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)  # the hooks and the modules change a copy
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module: Module, local_state_dict: dict, prefix: str = "") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in list(module.__dict__.get("_load_state_dict_post_hooks", {}).values()):
                if hook(module, keys) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, "
                                         "it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__, "\n\t".join(errors))
            )
        return _IncompatibleKeys(missing, unexpected)

    # --- printing -------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = self.extra_repr().split("\n") if self.extra_repr() else []
        for name, m in self._modules.items():
            child = _indent(repr(m), 2)
            lines.append(f"({name}): {child}")
        main = self._get_name() + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"


_TO_FORMS = ("(device device = None, dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
             "memory_format memory_format = None)", "(dtype dtype, bool non_blocking = False, bool copy = False, *, "
             "memory_format memory_format = None)", "(Tensor tensor, bool non_blocking = False, bool copy = False, *, "
             "memory_format memory_format = None)")


def _parse_to(args: tuple, kwargs: dict) -> tuple[Any, Any]:
    """``(device, dtype)`` of ``Module.to``'s arguments, in PyTorch's three forms: ``(device,
    dtype)``, ``(dtype)`` or ``(tensor)``, each then ``non_blocking`` and ``copy``; a
    ``TypeError`` names the arguments otherwise. Leaves ``memory_format`` in ``kwargs``."""
    rest = list(args)
    device, target = kwargs.pop("device", None), kwargs.pop("dtype", None)
    if rest and isinstance(rest[0], Tensor):
        first = rest.pop(0)
        device, target = first.device, first.dtype
    elif rest and isinstance(rest[0], dtypes.dtype):
        target = rest.pop(0)
    elif rest and not isinstance(rest[0], bool):
        device = rest.pop(0)
        if rest and (rest[0] is None or isinstance(rest[0], dtypes.dtype)):
            target = rest.pop(0)
    flags = [*rest, *(kwargs.pop(k) for k in ("non_blocking", "copy") if k in kwargs)]
    unknown = sorted(set(kwargs) - {"memory_format"})
    if unknown or len(flags) > 2 or not all(isinstance(f, bool) for f in flags):
        got = ", ".join([*(f"tidu.{type(a).__name__}" if type(a).__module__.startswith("tidu") else type(a).__name__
                           for a in args), *(f"{k}=..." for k in unknown)])
        raise TypeError(f"to() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        + "\n".join(f" * {form}" for form in _TO_FORMS))
    return device, target


def _indent(text: str, spaces: int) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


def _check_name(module: Module, name: str, kind: str) -> None:
    if "_parameters" not in module.__dict__:
        raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    store = module._parameters if kind == "parameter" else module._buffers
    if hasattr(module, name) and name not in store:
        raise KeyError(f"attribute '{name}' already exists")


def _remove_from(module: Module, name: str, *stores: str) -> None:
    """Drop ``name`` from the plain attributes and the registries ``stores`` (the one it is
    re-registered in keeps its place, as in PyTorch)."""
    for store in stores:
        module.__dict__[store].pop(name, None)
    module.__dict__.pop(name, None)
    module._non_persistent_buffers_set.discard(name)
