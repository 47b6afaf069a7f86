"""``LazyModuleMixin``: modules whose parameter shapes come from their first input."""

from __future__ import annotations

import itertools
from typing import Any

from ...core.grad_mode import no_grad
from ..parameter import is_lazy


class LazyModuleMixin:
    """A mixin for modules that infer their parameters' shapes from the first input (PyTorch's).

    The module holds ``UninitializedParameter``/``UninitializedBuffer`` until its first call: a
    forward pre-hook runs ``initialize_parameters(*args)``, which materializes them (shapes from
    the input) and initializes them, and then the module becomes ``cls_to_become`` (``LazyLinear``
    a ``Linear``). Loading a state dict with initialized tensors materializes them too.
    Parameters are materialized in place, so an optimizer made before the first call works.

    >>> import tidu
    >>> layer = tidu.nn.LazyLinear(2)
    >>> layer
    LazyLinear(in_features=0, out_features=2, bias=True)
    >>> layer.has_uninitialized_params()
    True
    >>> layer(tidu.ones(4, 3)).shape
    tidu.Size([4, 2])
    >>> layer
    Linear(in_features=3, out_features=2, bias=True)
    """

    cls_to_become: type | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize and initialize the parameters from the input (each lazy class defines it)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether any parameter or buffer of this module (not its children) is uninitialized."""
        return any(is_lazy(t) for t in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module: Any, args: tuple) -> None:
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> None:
        raise RuntimeError(
            "Modules with uninitialized parameters can't be used with `DataParallel`. "
            "Run a dummy forward pass to correctly initialize the modules"
        )


def materialize_all(module: Any, shapes: dict[str, tuple]) -> None:
    """Materialize ``module``'s uninitialized tensors named in ``shapes``; skip ``None`` ones."""
    with no_grad():
        for name, shape in shapes.items():
            t = getattr(module, name)
            if t is not None:
                t.materialize(shape)
