"""``functional_call``: run a module with some of its parameters and buffers replaced for one
call (``torch.func.functional_call``; ``tidu.func.functional_call`` is this function)."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from ...core.primitive import Var
from ...tensor import Tensor

_MISSING = object()


def _untie(module: Any, values: dict[str, Any]) -> dict[str, Any]:
    """Give every name of a tied tensor the value given for one of its names."""
    names_of: dict[int, set[str]] = {}
    for name, tensor in [*module.named_parameters(remove_duplicate=False),
                         *module.named_buffers(remove_duplicate=False)]:
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given = [name for name in values if name in tied]
    for name in given:
        names = tied[name]
        if len(names.intersection(given)) > 1 and len({id(values[n]) for n in names if n in values}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(values)
    for name in given:
        for other in tied[name]:
            untied[other] = values[name]
    return untied


def _owner(module: Any, name: str) -> tuple[Any, str]:
    *path, leaf = name.split(".")
    for item in path:
        child = module._modules.get(item) if hasattr(module, "_modules") else None
        if child is None:
            raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
        module = child
    return module, leaf


@contextlib.contextmanager
def _reparametrize_module(module: Any, values: dict[str, Any], tie_weights: bool = False,
                          strict: bool = False) -> Iterator[None]:
    if tie_weights:
        values = _untie(module, values)
    if strict:
        valid = {name for name, _ in [*module.named_parameters(remove_duplicate=False),
                                      *module.named_buffers(remove_duplicate=False)]}
        missing, unexpected = sorted(valid - set(values)), sorted(set(values) - valid)
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                  "\n\t".join(errors)))
    saved: list[tuple[Any, str, str, Any]] = []
    try:
        for name, value in values.items():
            owner, leaf = _owner(module, name)
            if value is not None and not isinstance(value, Tensor | Var):  # a Var: under vmap or grad
                raise TypeError(f"{value} is not an instance of tidu.Tensor")
            for store in ("_parameters", "_buffers"):
                table = owner.__dict__[store]
                if leaf in table:
                    saved.append((owner, store, leaf, table[leaf]))
                    table[leaf] = value  # read by Module.__getattr__; not registered as a Parameter
                    break
            else:
                saved.append((owner, "", leaf, owner.__dict__.get(leaf, _MISSING)))
                object.__setattr__(owner, leaf, value)
        yield
    finally:
        for owner, store, leaf, original in reversed(saved):
            if store:
                owner.__dict__[store][leaf] = original
            elif original is _MISSING:
                owner.__dict__.pop(leaf, None)
            else:
                object.__setattr__(owner, leaf, original)


def _functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: Any = None, *,
                     tie_weights: bool = True, strict: bool = False) -> Any:
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, Sequence):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be dictionaries")
        counts: dict[str, int] = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
        values = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError("Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, but got "
                         f"{type(parameter_and_buffer_dicts)}")
    from ..modules.parallel import DataParallel

    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, values, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def func_functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: Any = None, *,
                         tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module(*args, **kwargs)`` with the parameters and buffers named in
    ``parameter_and_buffer_dicts`` (a dict, or a tuple of dicts with distinct keys) in place of its
    own, then put its own back; ``tidu.func.functional_call``. Gradients flow to the given
    tensors. ``tie_weights`` gives tied names the value given for one of them; ``strict``
    requires exactly the module's names.

    >>> import tidu
    >>> layer = tidu.nn.Linear(2, 1)
    >>> w = tidu.ones(1, 2, requires_grad=True)
    >>> out = tidu.func.functional_call(layer, {"weight": w, "bias": tidu.zeros(1)}, (tidu.tensor([[1.0, 2.0]]),))
    >>> out
    tensor([[3.]], grad_fn=<add>)
    >>> out.sum().backward(); w.grad
    tensor([[1., 2.]])
    >>> layer.weight is not w
    True
    """
    return _functional_call(module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights,
                            strict=strict)


def functional_call(module: Any, parameters_and_buffers: dict[str, Any], args: Any = None, kwargs: Any = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """``tidu.func.functional_call`` under its old name, with PyTorch's deprecation warning.

    >>> import warnings, tidu
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     tidu.nn.utils.stateless.functional_call(tidu.nn.Identity(), {}, tidu.ones(1))
    tensor([1.])
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)
