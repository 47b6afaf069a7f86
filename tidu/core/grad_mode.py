"""Grad mode, per thread: ``no_grad``, ``enable_grad``, ``set_grad_enabled``."""

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
