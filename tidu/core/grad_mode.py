"""Grad mode, per thread: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    enabled: bool = True


_state = _State()


def is_grad_enabled() -> bool:
    """Whether operations on tensors that require grad are recorded.

    >>> import tidu
    >>> with tidu.no_grad():
    ...     tidu.is_grad_enabled()
    False
    """
    return _state.enabled


class _GradMode:
    mode: bool = True

    def __enter__(self) -> None:
        self._prev = _state.enabled
        _state.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__() if not isinstance(self, set_grad_enabled) else set_grad_enabled(self.mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradMode):  # noqa: N801
    """Context manager and decorator: do not record operations (in this thread).

    >>> import tidu
    >>> x = tidu.ones(2, requires_grad=True)
    >>> with tidu.no_grad():
    ...     (x * 2).requires_grad
    False
    >>> tidu.no_grad()(lambda t: t * 2)(x).requires_grad
    False
    """

    mode = False


class enable_grad(_GradMode):  # noqa: N801
    """Context manager and decorator: record operations (inside ``no_grad`` too).

    >>> import tidu
    >>> x = tidu.ones(2, requires_grad=True)
    >>> with tidu.no_grad(), tidu.enable_grad():
    ...     (x * 2).requires_grad
    True
    """

    mode = True


class set_grad_enabled(_GradMode):  # noqa: N801
    """Set grad mode on or off; usable as a function, context manager or decorator.

    >>> import tidu
    >>> x = tidu.ones(2, requires_grad=True)
    >>> with tidu.set_grad_enabled(False):
    ...     (x * 2).requires_grad
    False
    >>> tidu.is_grad_enabled()
    True
    """

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)
        self._prev = _state.enabled
        _state.enabled = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _state.enabled = self._prev


def _set_grad_enabled_decorate(self: set_grad_enabled, fn: F) -> F:
    _state.enabled = self._prev  # the decorator form must not change the mode now
    return _GradMode.__call__(self, fn)


set_grad_enabled.__call__ = _set_grad_enabled_decorate  # type: ignore[method-assign]


class _Inference(threading.local):
    enabled: bool = False


_inference = _Inference()


def is_inference_mode_enabled() -> bool:
    """Whether an ``inference_mode`` block is running (in this thread).

    >>> import tidu
    >>> with tidu.inference_mode():
    ...     tidu.is_inference_mode_enabled()
    True
    """
    return _inference.enabled


class inference_mode:  # noqa: N801 - PyTorch's name
    """Context manager and decorator (with or without a call): grad mode off, as in ``no_grad``;
    ``inference_mode(False)`` leaves inference mode and turns grad mode on, as PyTorch's does.
    Unlike PyTorch's inference tensors, the tensors made inside are ordinary tensors that do not
    require grad: later code may use them in autograd.

    >>> import tidu
    >>> x = tidu.ones(2, requires_grad=True)
    >>> with tidu.inference_mode():
    ...     (x * 2).requires_grad
    False
    >>> tidu.inference_mode(lambda t: t * 2)(x).requires_grad
    False
    """

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode):  # ``@inference_mode``, without a call
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self._prev = _state.enabled, _inference.enabled
        _state.enabled, _inference.enabled = not self.mode, self.mode

    def __exit__(self, *exc: object) -> None:
        _state.enabled, _inference.enabled = self._prev

    def __call__(self, fn: F) -> F:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]
