"""``tidu.autograd.functional``: PyTorch's higher-level derivative API (``vjp``, ``jvp``, ``jacobian``,
``hessian``, ``vhp``, ``hvp``) on ``tidu.autograd.grad``.

``inputs`` is a tensor or a tuple of them, and results follow PyTorch's nesting: a tuple where the
inputs (or outputs) were a tuple. The function runs on detached copies of the inputs that require
grad, so the results are constants unless ``create_graph=True``, which keeps them in the graph of
the original inputs. ``jvp`` and ``hvp`` use the double-backward trick, as PyTorch does: the
forward derivative is the backward of a backward.

>>> import tidu
>>> from tidu.autograd.functional import jacobian
>>> jacobian(lambda x: x ** 2, tidu.tensor([1.0, 2.0]))
tensor([[2., 0.],
        [0., 4.]])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..ops import creation, shape
from ..tensor import Tensor
from .backward import grad

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _as_tuple(value: Any, what: str, fn: str) -> tuple[bool, tuple]:
    """``(was a tuple, the tensors as a tuple)``, with PyTorch's error for anything else."""
    is_tuple = isinstance(value, tuple | list)
    items = tuple(value) if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            kind = f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors"
            raise TypeError(f"{kind} but the value at index {i} has type {type(item)}.")
    return is_tuple, items


def _prepare(inputs: tuple, create_graph: bool) -> tuple:
    """The inputs the function runs on: leaves that require grad, or (``create_graph`` and already
    in a graph) views that keep the original graph."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(True)
                 for x in inputs)


_INDEPENDENT = {
    "output": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
              "mode.",
    "hessian": "While computing the hessian, found that the jacobian of the user-provided function with respect to "
               "input {i} is independent of the input. This is not allowed in strict mode. You should ensure that "
               "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
               "violated by a linear function for example).",
}


def _finish(values: Sequence[Any], inputs: Sequence[Tensor], create_graph: bool, strict: bool, what: str) -> tuple:
    """Gradients as results: zeros for the unused (``strict`` raises PyTorch's ``_INDEPENDENT``
    message instead, or ``what`` formatted with the input), detached unless ``create_graph``."""
    out = []
    for i, (g, x) in enumerate(zip(values, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(_INDEPENDENT.get(what, what).format(i=i))
            g = creation.zeros_like(x)
        out.append(g if create_graph else g.detach())
    return tuple(out)


def _check_outputs(outputs: tuple, strict: bool, fn: str) -> None:
    if strict:
        for i, out in enumerate(outputs):
            if not out.requires_grad:
                raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The "
                                   "outputs must be computed in a differentiable manner from the input when running "
                                   "in strict mode.")


def _check_v(v: Any, like: tuple, fn: str) -> tuple:
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
        return (creation.ones_like(like[0]),)
    _, vs = _as_tuple(v, "v", fn)
    if len(vs) != len(like):
        raise RuntimeError("The given v should contain a single Tensor." if len(like) == 1 else
                           f"v is a tuple of invalid length: should be {len(like)} but got {len(vs)}.")
    for a, b in zip(vs, like):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(f"v has invalid size: should be {b.shape} but got {a.shape}.")
    return vs


def _grads(outputs: Sequence[Tensor], inputs: Sequence[Tensor], seeds: Sequence[Tensor], create_graph: bool,
           retain_graph: bool | None = None) -> tuple:
    """``grad`` of only the outputs in a graph (others contribute nothing), ``None`` for unused inputs."""
    pairs = [(o, s) for o, s in zip(outputs, seeds) if o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    outs, grads = zip(*pairs)
    return grad(list(outs), list(inputs), list(grads), retain_graph=retain_graph, create_graph=create_graph,
                allow_unused=True)


def _packed(values: tuple, was_tuple: bool) -> Any:
    return values if was_tuple else values[0]


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), v^T J)``: the outputs and the vector-Jacobian product.

    >>> import tidu
    >>> from tidu.autograd.functional import vjp
    >>> vjp(lambda x: x * 3, tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 0.5]))
    (tensor([3., 6.]), tensor([3.0000, 1.5000]))
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
    xs = _prepare(xs, create_graph)
    out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "vjp")
    _check_outputs(outs, strict, "vjp")
    vs = _check_v(v, outs, "vjp")
    grads = _grads(outs, xs, vs, create_graph)
    result = _finish(grads, xs, create_graph, strict, "output")
    outs = tuple(o if create_graph else o.detach() for o in outs)
    return _packed(outs, out_tuple), _packed(result, in_tuple)


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), J v)``: the outputs and the Jacobian-vector product (by double backward).

    >>> import tidu
    >>> from tidu.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 1.0]))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
    xs = _prepare(xs, create_graph)
    vs = _check_v(v, xs, "jvp")
    out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "jvp")
    _check_outputs(outs, strict, "jvp")
    seeds = tuple(creation.zeros_like(o).requires_grad_(True) for o in outs)
    pulled = _grads(outs, xs, seeds, create_graph=True)
    if strict:  # as PyTorch checks it: the backward's dependence on each input
        _finish(pulled, xs, True, True, "output")
    live = [(g, v) for g, v in zip(pulled, vs) if g is not None and g.requires_grad]
    if live:
        result = grad([g for g, _ in live], list(seeds), [v for _, v in live], create_graph=create_graph,
                      allow_unused=True)
    else:
        result = (None,) * len(seeds)
    result = _finish(result, outs, create_graph, strict, "output")
    outs = tuple(o if create_graph else o.detach() for o in outs)
    return _packed(outs, out_tuple), _packed(result, out_tuple)


def jacobian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: for each output and input, a tensor of shape
    ``output.shape + input.shape`` (nested in tuples as the outputs and inputs are). ``vectorize``
    and ``strategy`` are accepted; the result is the same either way (one backward per output
    element).

    >>> import tidu
    >>> from tidu.autograd.functional import jacobian
    >>> jacobian(lambda x, y: x * y, (tidu.tensor([1.0, 2.0]), tidu.tensor([3.0, 4.0])))
    (tensor([[3., 0.],
            [0., 4.]]), tensor([[1., 0.],
            [0., 2.]]))
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(  # PyTorch asserts this'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                         'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                         'prefer to use "reverse-mode".')
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                                  "implemented for `vectorize=True`.")
    in_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
    xs = _prepare(xs, create_graph)
    out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", "jacobian")
    _check_outputs(outs, strict, "jacobian")
    blocks = []
    for out in outs:
        flat = shape.reshape(out, (-1,))
        rows: list[list] = [[] for _ in xs]
        for k in range(flat.numel()):
            pulled = (None,) * len(xs) if not out.requires_grad else grad(
                flat[k], list(xs), retain_graph=True, create_graph=create_graph, allow_unused=True)
            independent = f"Output {len(blocks)} of the user-provided function is independent of input {{i}}. This is " \
                "not allowed in strict mode."
            for i, g in enumerate(_finish(pulled, xs, create_graph, strict, independent)):
                rows[i].append(g)
        per_input = tuple(shape.reshape(shape.stack(r) if r else creation.zeros((0, *x.shape), dtype=x.dtype,
                                                                                  device=x.device),
                                        (*out.shape, *x.shape))
                          for r, x in zip(rows, xs))
        blocks.append(_packed(per_input, in_tuple))
    return _packed(tuple(blocks), out_tuple)


def hessian(func: Callable, inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a function of one element: the Jacobian of its gradient, of shape
    ``input.shape + input.shape`` (a tuple of tuples for several inputs).

    >>> import tidu
    >>> from tidu.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), tidu.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    in_tuple, xs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*args: Any) -> tuple:
        out = func(*args)
        was_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        if was_tuple or outs[0].numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        _check_outputs(outs, strict, "hessian")
        if not outs[0].requires_grad:
            return tuple(creation.zeros_like(a) for a in args)
        grads = grad(outs[0].reshape(()), list(args), create_graph=True, allow_unused=True)
        _check_twice_differentiable(grads, strict)
        return _finish(grads, args, True, False, "hessian")

    result = jacobian(gradient, xs, create_graph, False, vectorize, outer_jacobian_strategy)
    return result if in_tuple else result[0][0]


def _check_twice_differentiable(first: Sequence[Any], strict: bool) -> None:
    """``strict``: every first derivative must depend on the inputs (PyTorch's hessian message)."""
    if strict:
        for i, g in enumerate(first):
            if g is None or not g.requires_grad:
                raise RuntimeError(_INDEPENDENT["hessian"].format(i=i))


def _second_order(name: str, func: Callable, inputs: Any, v: Any, create_graph: bool, strict: bool) -> tuple:
    """``(func(inputs), v^T H)`` of a function of one element (``vhp``; ``hvp`` is the same for the
    symmetric Hessian of a twice-differentiable function)."""
    in_tuple, xs = _as_tuple(inputs, "inputs", name)
    xs = _prepare(xs, create_graph)
    vs = _check_v(v, xs, name)
    out_tuple, outs = _as_tuple(func(*xs), "outputs of the user-provided function", name)
    if out_tuple or outs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
    _check_outputs(outs, strict, name)
    out = outs[0]
    first = grad(out.reshape(()), list(xs), create_graph=True, allow_unused=True) if out.requires_grad \
        else (None,) * len(xs)
    _check_twice_differentiable(first, strict)
    live = [(g, v) for g, v in zip(first, vs) if g is not None and g.requires_grad]
    if live:
        second = grad([g for g, _ in live], list(xs), [v for _, v in live], create_graph=create_graph,
                      allow_unused=True)
    else:
        second = (None,) * len(xs)
    result = _finish(second, xs, create_graph, strict, "hessian")
    return (out if create_graph else out.detach()), _packed(result, in_tuple)


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), v^T H)`` for a function of one element.

    >>> import tidu
    >>> from tidu.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 1.0]))
    (tensor(9.), tensor([ 6., 12.]))
    """
    return _second_order("vhp", func, inputs, v, create_graph, strict)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), H v)`` for a function of one element.

    >>> import tidu
    >>> from tidu.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), tidu.tensor([1.0, 2.0]), tidu.tensor([1.0, 0.0]))
    (tensor(9.), tensor([6., 0.]))
    """
    return _second_order("hvp", func, inputs, v, create_graph, strict)
