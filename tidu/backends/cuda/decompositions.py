"""The decompositions and solvers on the device, computed on the host: the operands are copied
over, LAPACK runs there (``tidu/backends/cpu/decompositions.py``) and the results are copied
back. Correct, and as fast as the host; small matrices gain little from a GPU anyway."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..cpu import decompositions as host
from .memory import CudaArray


def _on_host(fn: Callable[..., Any]) -> Callable[..., Any]:
    def kernel(*arrays: CudaArray, **params: Any) -> Any:
        out = fn(*[x.copy_to_host() for x in arrays], **params)
        if isinstance(out, tuple):
            return tuple(CudaArray.from_host(np.asarray(o, order="C")) for o in out)
        return CudaArray.from_host(np.asarray(out, order="C"))

    return kernel


inv = _on_host(host.inv)
solve = _on_host(host.solve)
cholesky = _on_host(host.cholesky)
slogdet = _on_host(host.slogdet)
eigh = _on_host(host.eigh)
svd = _on_host(host.svd)
qr = _on_host(lambda a, *, mode: host.qr(a, complete=mode == "complete"))
geqrf = _on_host(host.geqrf)
