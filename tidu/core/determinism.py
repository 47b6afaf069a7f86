"""``tidu.use_deterministic_algorithms``: PyTorch's switch for run-to-run identical results.

tidu's kernels give the same bits run to run, on the CPU and on the GPU, with one exception:
the CUDA ``scatter_add`` kernel adds floats with atomics, in the order the threads arrive. It
is what ``scatter_add``, ``index_add``, ``index_put(accumulate=True)`` and the gradients of
``gather``, ``index_select``, indexing with tensors, ``embedding`` and the sampling ops
(``grid_sample``, ``interpolate``) run on ``cuda``. With the switch on, that kernel is replaced
by one without atomics (tidu/backends/cuda/index.py), as PyTorch does for its ``scatter_add_``,
``index_add`` and the gradients of ``gather`` and ``index_select``. No tidu kernel is left
without a deterministic form, so nothing raises PyTorch's "does not have a deterministic
implementation" error, and ``warn_only`` changes nothing but what
``is_deterministic_algorithms_warn_only_enabled`` reports.
"""

from __future__ import annotations

_STATE = {"mode": False, "warn_only": False}

__all__ = [
    "are_deterministic_algorithms_enabled", "get_deterministic_debug_mode", "is_deterministic_algorithms_warn_only_enabled",
    "set_deterministic_debug_mode", "use_deterministic_algorithms",
]


def _check_bool(value: object, name: str, where: str) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument '{name}'{where} must be bool, not "
                        f"{type(value).__name__}")


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Make every operation use a deterministic algorithm (``mode=True``), or allow the faster
    ones again. In tidu only the CUDA ``scatter_add`` (and what runs on it) changes kernel; see the
    module's text.

    >>> import tidu
    >>> tidu.use_deterministic_algorithms(True, warn_only=True)
    >>> tidu.are_deterministic_algorithms_enabled(), tidu.is_deterministic_algorithms_warn_only_enabled()
    (True, True)
    >>> tidu.use_deterministic_algorithms(False)
    >>> tidu.are_deterministic_algorithms_enabled()
    False
    """
    _check_bool(mode, "mode", " (position 1)")
    _check_bool(warn_only, "warn_only", "")
    _STATE["mode"], _STATE["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    """Whether ``use_deterministic_algorithms(True)`` is in force.

    >>> import tidu
    >>> tidu.are_deterministic_algorithms_enabled()
    False
    """
    return _STATE["mode"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    """Whether ``use_deterministic_algorithms`` was given ``warn_only=True``.

    >>> import tidu
    >>> tidu.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _STATE["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """``use_deterministic_algorithms`` by level: ``"default"`` (0) off, ``"warn"`` (1) on with
    ``warn_only``, ``"error"`` (2) on.

    >>> import tidu
    >>> tidu.set_deterministic_debug_mode("warn")
    >>> tidu.get_deterministic_debug_mode()
    1
    >>> tidu.set_deterministic_debug_mode(0)
    """
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(
                f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {debug_mode}")
        level = _DEBUG_MODES[debug_mode]
    elif isinstance(debug_mode, int):  # a bool too, as in PyTorch
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
        level = debug_mode
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    use_deterministic_algorithms(level > 0, warn_only=level == 1)


def get_deterministic_debug_mode() -> int:
    """The level ``set_deterministic_debug_mode`` takes: 0, 1 (warn only) or 2.

    >>> import tidu
    >>> tidu.get_deterministic_debug_mode()
    0
    """
    if not _STATE["mode"]:
        return 0
    return 1 if _STATE["warn_only"] else 2
