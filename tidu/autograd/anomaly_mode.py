"""Anomaly detection (PyTorch's ``torch.autograd.anomaly_mode``): with it on, a backward pass runs
the general walk and checks every gradient each node returns for NaN (``graph.NodeHooks``).

tidu raises PyTorch's error, naming its own node (``Function 'exp' returned nan values in its 0th
output.``); it does not record the forward's stack traces, so the warning PyTorch prints with the
traceback of the forward op that made the node is not shown. With anomaly mode off the backward
runs as before (the flag is read once per pass).
"""

from __future__ import annotations

import warnings

from ..compat import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled

__all__ = ["detect_anomaly", "set_detect_anomaly"]


class detect_anomaly:  # noqa: N801 - PyTorch's name
    """A context in which anomaly detection is on (``check_nan``: NaN gradients raise).

    >>> import tidu, warnings
    >>> x = tidu.tensor([0.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     with tidu.autograd.detect_anomaly():
    ...         (x.sqrt() * 0).sum().backward()
    Traceback (most recent call last):
    ...
    RuntimeError: Function 'sqrt' returned nan values in its 0th output.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", stacklevel=2)

    def __enter__(self) -> None:
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)


class set_detect_anomaly:  # noqa: N801 - PyTorch's name
    """Turn anomaly detection on or off at once (a call), or for a ``with`` block.

    >>> import tidu
    >>> with tidu.autograd.set_detect_anomaly(True):
    ...     tidu.is_anomaly_enabled()
    True
    >>> tidu.is_anomaly_enabled()
    False
    """

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *args: object) -> None:
        set_anomaly_enabled(self.prev, self.prev_check_nan)
