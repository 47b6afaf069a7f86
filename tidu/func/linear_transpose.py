"""``linear_transpose`` (JAX's): the transpose of a linear function, from the primitives' transpose rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import grad_mode
from ..core.primitive import Application
from ..eager import topological_traces
from ..tensor import Tensor
from .pytree import flatten, unflatten


def _check_linear(outs: list[Tensor], inputs: list[Tensor]) -> None:
    """Every recorded primitive between the inputs and the outputs must be linear in its active inputs."""
    active = {id(x._key) for x in inputs}
    for out in outs:
        for trace in topological_traces(out._trace):
            node = trace.node
            mask = tuple(id(key) in active for _, key, _ in node.input_edges)
            for key in node.primal_out_keys:
                active.add(id(key))
            for opnode in node.computation.as_graph().operations:
                op = opnode.operation
                prim = getattr(op, "prim", None) if isinstance(op, Application) else None
                linear = getattr(op, "linear_in", None) if prim is None else prim.linear_in
                has_transpose = prim.transpose is not None if prim is not None else hasattr(op, "transpose_rule")
                wanted = [i for i, m in enumerate(mask) if m]
                if not has_transpose or (linear is not None and any(i not in linear for i in wanted)) or (
                        prim is not None and prim.bilinear and len(wanted) > 1):
                    raise TypeError(
                        f"linear_transpose: the function is not linear in its inputs: primitive "
                        f"{getattr(op, 'short_name', op)!r} is applied non-linearly to them (inputs {wanted})")


def linear_transpose(fn: Callable[..., Any], *primals: Tensor) -> Callable[..., tuple]:
    """The transpose of the linear ``fn`` at ``primals``' shapes and dtypes (JAX's ``linear_transpose``).

    The returned function maps output cotangents (the structure of ``fn``'s output)
    to a tuple of input cotangents; ``fn`` is traced once, its primitives' transpose
    rules run on each call. A non-linear ``fn`` raises ``TypeError``.

    >>> import tidu
    >>> f_t = tidu.linear_transpose(lambda x: x.sum(dim=0) * 2, tidu.zeros(2, 3))
    >>> f_t(tidu.tensor([1.0, 2.0, 3.0]))
    (tensor([[2., 4., 6.],
            [2., 4., 6.]]),)
    """
    leaves, spec = flatten(primals)
    inputs = []
    for x in leaves:
        if not isinstance(x, Tensor):
            raise TypeError(f"linear_transpose: primals must be Tensors, got {type(x).__name__}")
        if not x.dtype.is_floating_point:
            raise TypeError(f"linear_transpose: primals must be floating point, got {x.dtype.name}")
        inputs.append(x.detach().requires_grad_())
    with grad_mode.enable_grad():
        output = fn(*unflatten(spec, inputs))
    outs, out_spec = flatten(output)
    for o in outs:
        if not isinstance(o, Tensor):
            raise TypeError(f"linear_transpose: fn must return Tensors, got {type(o).__name__}")
    _check_linear(outs, inputs)

    def transposed(*cotangents: Any) -> tuple:
        from .transforms import _pullback

        cts, ct_spec = flatten(cotangents[0] if len(cotangents) == 1 else cotangents)
        if len(cts) != len(outs):
            raise TypeError(f"linear_transpose: expected {len(outs)} cotangents (the outputs' structure), "
                            f"got {len(cts)}")
        for c, o in zip(cts, outs):
            if not isinstance(c, Tensor) or tuple(c.shape) != tuple(o.shape):
                raise TypeError(f"linear_transpose: cotangent {c!r} does not match an output of shape "
                                f"{tuple(o.shape)} {o.dtype.name}")
        track = any(c._requires_grad for c in cts) and grad_mode.is_grad_enabled()
        grads = _pullback(outs, [c.to(o.dtype) for c, o in zip(cts, outs)], inputs, track)
        return tuple(unflatten(spec, grads))

    return transposed
