"""``device_put``: a value copied to another device (``Tensor.to``, ``.cuda()``, ``.cpu()``).

Linear: its transpose copies the cotangent back to the input's device.
"""

from __future__ import annotations

from typing import Any

from ..core.aval import ShapeDtype
from ..core.primitive import Primitive
from ._batching import unary as batch_unary

device_put = Primitive("device_put")
device_put.moves_device = True


@device_put.def_abstract_eval
def _device_put_shape(x: ShapeDtype, *, device: str) -> ShapeDtype:
    if device not in ("cpu", "cuda"):
        raise RuntimeError(f"device_put: unknown device type {device!r}")
    return x._replace(device=device)


def _from_cpu(x: Any, *, device: str) -> Any:
    if device == "cpu":
        return x.copy()
    from ..backends.cuda.memory import CudaArray

    return CudaArray.from_host(x)


def _from_cuda(x: Any, *, device: str) -> Any:
    return x.copy_to_host() if device == "cpu" else x.copy()


device_put.def_impl(_from_cpu)
device_put.def_impl(_from_cuda, device="cuda", takes_views=True)
device_put.moves_elements = True  # Note [half precision]
device_put.def_linear(lambda ct, x, *, device: [device_put.bind(ct, device=x.aval.device)])
device_put.def_batch(batch_unary(lambda x, *, device: device_put.bind(x, device=device)))
