"""``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` (torch.func's).

Every transform runs on the eager tape and the primitives' own rules: reverse
mode is ``autograd.grad`` (linearize the recorded trace, then transpose),
forward mode is ``tidu.linearize``. Nesting needs no levels of its own: each
transform differentiates with respect to fresh tape values (a leaf, or a
recorded alias of an input that already requires grad), and a reverse pass
records its own backward (``create_graph``) exactly when its result is
connected to something an enclosing transform differentiates. Inside
``vmap`` the transforms run on the lowered batch (see ``batching``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..autograd.executor import EXECUTOR
from ..core import grad_mode
from ..core.primitive import Var
from ..eager import topological_traces, try_backward
from ..primitives.structural import broadcast_in_dim, reshape
from ..tensor import Tensor
from . import batching
from .linearize import linearize
from .pytree import flatten, unflatten


def _is_value(x: Any) -> bool:
    return isinstance(x, Tensor) or batching.is_batched(x)


def _argnums(argnums: Any, nargs: int, fname: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else argnums
    if not isinstance(nums, tuple) or not nums or not all(isinstance(a, int) for a in nums):
        raise RuntimeError(f"{fname}: argnums must be int or a non-empty Tuple[int, ...], got {argnums!r}")
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"{fname}: Got argnums={a}, but only {nargs} positional inputs")
    return tuple(a % nargs for a in nums)


def _fresh(x: Any, fname: str, where: str) -> Tensor:
    """A new tape value to differentiate with respect to, standing for ``x``."""
    if not _is_value(x):
        raise RuntimeError(f"{fname}: {where} must be Tensors (or pytrees of them), got {type(x).__name__}")
    x = batching.lower(x)
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{fname}: only Tensors of floating point dtype can be differentiated, "
                           f"{where} has dtype {x.dtype.name}")
    if x._requires_grad and grad_mode.is_grad_enabled():
        return reshape.bind(x, new_sizes=tuple(x.shape))  # a recorded alias: still connected to x
    return x.detach().requires_grad_()


class _Inputs:
    """The differentiated arguments of one call, replaced by fresh tape values."""

    def __init__(self, args: Sequence[Any], nums: tuple[int, ...], fname: str) -> None:
        self.call_args = list(args)
        self.leaves: list[Tensor] = []
        self.specs = []
        for n in nums:
            leaves, spec = flatten(args[n])
            fresh = [_fresh(x, fname, f"argument {n}") for x in leaves]
            self.leaves += fresh
            self.specs.append((spec, len(fresh)))
            self.call_args[n] = unflatten(spec, [batching.lift(f) for f in fresh])

    def regroup(self, flat: list[Any], single: bool) -> Any:
        out, start = [], 0
        for spec, count in self.specs:
            out.append(unflatten(spec, [batching.lift(g) for g in flat[start:start + count]]))
            start += count
        return out[0] if single else tuple(out)


def _connected(outputs: Sequence[Tensor], own: Sequence[Tensor]) -> bool:
    """Does any output depend on a value that requires grad other than ``own``?"""
    mine = {t._key for t in own}
    for out in outputs:
        if out._requires_grad and out._trace is None and out._key not in mine:
            return True
        for trace in topological_traces(out._trace):
            for parent, key, requires_grad in trace.node.input_edges:
                if parent is None and requires_grad and key not in mine:
                    return True
    return False


def _pullback(outputs: list[Tensor], cotangents: list[Any], inputs: list[Tensor], create_graph: bool) -> list[Any]:
    """Cotangents of ``inputs`` (zeros where unused); the outputs' graph is kept for reuse.

    Cotangents may be batched values of an inner ``vmap`` (``jacrev``): the engine's
    transposes then bind on them and run batched.
    """
    from ..ops.creation import zeros_like

    wanted = {x._key for x in inputs}
    totals: dict[Any, Any] = {}
    with grad_mode.set_grad_enabled(create_graph):
        for out, ct in zip(outputs, cotangents):
            if not out._requires_grad:
                continue
            key = out._ensure_key()
            cts = {key: ct} if out._trace is None else try_backward(key, out._trace, ct, EXECUTOR, None,
                                                                     wanted=wanted)
            for k, v in cts.items():
                if k in wanted:
                    totals[k] = v if k not in totals else totals[k] + v
    grads = []
    for x in inputs:
        g = totals.get(x._key)
        g = zeros_like(x) if g is None else g
        grads.append(g.detach() if isinstance(g, Tensor) and not create_graph else g)
    return grads


def _requires_grad(x: Any) -> bool:
    while type(x) is Var:
        x = x.value
    return x._requires_grad


def _detach_tree(tree: Any, keep: bool) -> Any:
    if keep:
        return tree
    leaves, spec = flatten(tree)
    return unflatten(spec, [x.detach() if isinstance(x, Tensor) else x for x in leaves])


def _split_aux(output: Any, has_aux: bool, fname: str) -> tuple[Any, Any]:
    if not has_aux:
        return output, None
    if not isinstance(output, tuple | list) or len(output) != 2:
        raise RuntimeError(f"{fname}(f, ...)(*args): output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    return output[0], output[1]


def grad_and_value(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """A function returning ``(gradient, value)`` of the scalar ``func`` (``torch.func.grad_and_value``).

    With ``has_aux`` it returns ``(gradient, (value, aux))``.

    >>> import tidu
    >>> g, v = tidu.func.grad_and_value(lambda x: (x * x).sum())(tidu.tensor([1.0, 2.0]))
    >>> g, v
    (tensor([2., 4.]), tensor(5.))
    """

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        outer = grad_mode.is_grad_enabled()
        nums = _argnums(argnums, len(args), "grad")
        inputs = _Inputs(args, nums, "grad")
        with grad_mode.enable_grad():
            output, aux = _split_aux(func(*inputs.call_args, **kwargs), has_aux, "grad")
        if not _is_value(output):
            raise RuntimeError(f"grad(f)(*args): Expected f(*args) to return a Tensor, got {type(output).__name__}")
        if tuple(output.shape) != ():
            raise RuntimeError(
                f"grad(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                f"{len(output.shape)} dims (shape {tuple(output.shape)}). Maybe you wanted to use the vjp or "
                "jacrev APIs instead?")
        low = batching.lower(output)
        keep = outer and _connected([low], inputs.leaves)
        from ..ops.creation import ones_like

        grads = _pullback([low], [ones_like(low)], inputs.leaves, keep)
        value = batching.lift(low if keep else low.detach())
        result = inputs.regroup(grads, isinstance(argnums, int))
        if has_aux:
            return result, (value, _detach_tree(aux, keep))
        return result, value

    return wrapper


def _numel(shape: Sequence[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def grad(func: Callable, argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable:
    """The gradient of the scalar ``func`` with respect to the ``argnums`` arguments (``torch.func.grad``).

    Composes with every transform (``grad(grad(f))``, ``vmap(grad(f))``...).

    >>> import tidu
    >>> tidu.func.grad(lambda x: x.sin().sum())(tidu.tensor([0.0, 1.0]))
    tensor([1.0000, 0.5403])
    >>> tidu.func.grad(tidu.func.grad(lambda x: x ** 3))(tidu.tensor(2.0))
    tensor(12.)
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


class _Vjp:
    """One recorded call of ``func`` on fresh inputs, and its lowered pullback."""

    def __init__(self, func: Callable, primals: Sequence[Any], has_aux: bool, fname: str) -> None:
        outer = grad_mode.is_grad_enabled()
        self.inputs = _Inputs(primals, tuple(range(len(primals))), fname)
        with grad_mode.enable_grad():
            output, self.aux = _split_aux(func(*self.inputs.call_args), has_aux, fname)
        leaves, self.out_spec = flatten(output)
        for o in leaves:
            if not _is_value(o):
                raise RuntimeError(f"{fname}(f, *primals): Expected f to return Tensors (or pytrees of them), "
                                   f"got {type(o).__name__}")
        self.shapes = [tuple(o.shape) for o in leaves]
        self.low = [batching.lower(o) for o in leaves]
        self.keep = outer and _connected(self.low, self.inputs.leaves)

    def pullback(self, cts: list[Any]) -> list[Any]:
        """Lowered cotangents of the outputs -> lowered cotangents of the flat inputs."""
        record = self.keep or any(_requires_grad(c) for c in cts)
        return _pullback(self.low, cts, self.inputs.leaves, record and grad_mode.is_grad_enabled())

    def shown(self) -> Any:
        return unflatten(self.out_spec, [batching.lift(o if self.keep else o.detach()) for o in self.low])


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` returns one cotangent per primal (``torch.func.vjp``).

    >>> import tidu
    >>> out, vjp_fn = tidu.func.vjp(lambda x: x * 2, tidu.tensor([1.0, 2.0]))
    >>> vjp_fn(tidu.tensor([1.0, 10.0]))
    (tensor([ 2., 20.]),)
    """
    call = _Vjp(func, primals, has_aux, "vjp")

    def vjp_fn(cotangents: Any) -> tuple:
        ct_leaves, _ = flatten(cotangents)
        if len(ct_leaves) != len(call.low):
            raise RuntimeError(f"vjp_fn: expected cotangents with the structure of the outputs "
                               f"({len(call.low)} tensors), got {len(ct_leaves)}")
        cts = []
        for o, shape, c in zip(call.low, call.shapes, ct_leaves):
            if not _is_value(c):
                raise RuntimeError(f"vjp_fn: cotangents must be Tensors, got {type(c).__name__}")
            if tuple(c.shape) != shape:
                raise RuntimeError(f"vjp_fn: Mismatch in shape: cotangent of shape {tuple(c.shape)} for an "
                                   f"output of shape {shape}")
            c = batching.lower(c)
            cts.append(c if c.dtype is o.dtype else c.to(o.dtype))
        return tuple(call.inputs.regroup(call.pullback(cts), False))

    if has_aux:
        return call.shown(), vjp_fn, _detach_tree(call.aux, call.keep)
    return call.shown(), vjp_fn


def jvp(func: Callable, primals: Any, tangents: Any, *, strict: bool = False,
        has_aux: bool = False) -> tuple[Any, ...]:
    """``(func(*primals), J @ tangents)`` in forward mode (``torch.func.jvp``); pytrees allowed.

    >>> import tidu
    >>> tidu.func.jvp(tidu.sin, (tidu.tensor(0.0),), (tidu.tensor(2.0),))
    (tensor(0.), tensor(2.))
    """
    primals = tuple(primals) if isinstance(primals, tuple | list) else (primals,)
    tangents = tuple(tangents) if isinstance(tangents, tuple | list) else (tangents,)
    if len(primals) != len(tangents):
        raise RuntimeError(
            f"jvp: Expected primals and tangents to have the same length, got {len(primals)} and {len(tangents)}")
    p_leaves, p_spec = flatten(primals)
    t_leaves, t_spec = flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError("jvp: Expected primals and tangents to have the same python structure")
    for p, t in zip(p_leaves, t_leaves):
        if not _is_value(p) or not _is_value(t):
            raise RuntimeError(f"jvp: primals and tangents must be Tensors, got {type(p).__name__} "
                               f"and {type(t).__name__}")
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp: tangent of shape {tuple(t.shape)} does not match primal shape "
                               f"{tuple(p.shape)}")
    captured: dict[str, Any] = {}

    def flat(*xs: Tensor) -> Any:
        output, captured["aux"] = _split_aux(
            func(*unflatten(p_spec, [batching.lift(x) for x in xs])), has_aux, "jvp")
        leaves, captured["spec"] = flatten(output)
        for o in leaves:
            if not _is_value(o):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected f to return Tensors, got "
                                   f"{type(o).__name__}")
        return tuple(batching.lower(o) for o in leaves)

    out, jvp_fn = linearize(flat, *[batching.lower(p) for p in p_leaves])
    tout = jvp_fn(*[batching.lower(t) for t in t_leaves])
    spec = captured["spec"]
    result = (unflatten(spec, [batching.lift(o) for o in out]), unflatten(spec, [batching.lift(t) for t in tout]))
    return (*result, captured["aux"]) if has_aux else result


def _basis(shape: tuple[int, ...], dtype: Any) -> Tensor:
    """The one-hot tensors of ``shape`` stacked along a new dimension 0 (row-major order)."""
    import numpy as np

    n = _numel(shape)
    from ..core.dtypes import cast

    return Tensor(cast(np.eye(n), dtype).reshape((n, *shape)), dtype)


def _over_batch(e: Any, batch: tuple[int, ...]) -> Any:
    """A basis element repeated over the enclosing vmaps' batch dims (the lowered layout)."""
    if not batch:
        return e
    n = len(batch)
    return broadcast_in_dim.bind(e, shape=(*batch, *e.shape), broadcast_dimensions=tuple(range(n, n + e.ndim)))


def _mapped(fn: Callable, basis: Tensor) -> Any:
    """``fn`` applied to every basis element, batched by ``vmap`` (a loop for an empty basis)."""
    from .vmap import vmap

    if basis.shape[0] == 0:
        return None
    return vmap(fn)(basis)


def _assemble(stacked: Any, out_shape: tuple[int, ...], in_shape: tuple[int, ...], dtype: Any,
              rows: bool) -> Any:
    """One Jacobian block of shape ``out_shape + in_shape`` from ``stacked``: rows (one per output
    element, ``(n, *batch, *in_shape)``) or columns (one per input element, ``(n, *batch, *out_shape)``)."""
    batch = tuple(t.size for t in batching.LEVELS)
    depth = len(batch)
    if stacked is None:
        from ..ops.creation import zeros

        return batching.lift(zeros((*batch, *out_shape, *in_shape), dtype=dtype))
    nd = stacked.ndim
    perm = (*range(1, depth + 1), 0, *range(depth + 1, nd)) if rows else (*range(1, nd), 0)
    moved = stacked.permute(*perm) if perm != tuple(range(nd)) else stacked
    return batching.lift(moved.reshape(*batch, *out_shape, *in_shape))


def _selected(func: Callable, args: Sequence[Any], nums: tuple[int, ...]) -> Callable:
    def partial(*xs: Any) -> Any:
        call = list(args)
        for n, x in zip(nums, xs):
            call[n] = x
        return func(*call)

    return partial


def _group(blocks: list[Any], nums: tuple[int, ...], args: Sequence[Any], single: bool) -> Any:
    out, start = [], 0
    for n in nums:
        leaves, spec = flatten(args[n])
        out.append(unflatten(spec, blocks[start:start + len(leaves)]))
        start += len(leaves)
    return out[0] if single else tuple(out)


def jacrev(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False) -> Callable:
    """The Jacobian by reverse mode: the function's pullback ``vmap``-ed over the one-hot
    cotangents of each output (``torch.func.jacrev``).

    Each block has shape ``output.shape + input.shape``; pytrees of outputs and inputs
    give the nested structure torch.func gives.

    >>> import tidu
    >>> tidu.func.jacrev(lambda x: x * x)(tidu.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        nums = _argnums(argnums, len(args), "jacrev")
        call = _Vjp(_selected(func, args, nums), [args[n] for n in nums], has_aux, "jacrev")
        batch = tuple(t.size for t in batching.LEVELS)
        in_leaves = call.inputs.leaves
        per_output = []
        for i, (o, shape) in enumerate(zip(call.low, call.shapes)):

            def row(e: Any, i: int = i) -> list[Any]:
                from ..ops.creation import zeros_like

                cts = [zeros_like(q) for q in call.low]
                cts[i] = _over_batch(e, batch)
                return call.pullback(cts)

            rows = _mapped(row, _basis(shape, o.dtype))
            blocks = [_assemble(None if rows is None else rows[j], shape, tuple(x.shape[len(batch):]), x.dtype,
                                True) for j, x in enumerate(in_leaves)]
            per_output.append(_group(blocks, nums, args, isinstance(argnums, int)))
        jac = unflatten(call.out_spec, per_output)
        return (jac, _detach_tree(call.aux, call.keep)) if has_aux else jac

    return wrapper


def jacfwd(func: Callable, argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           randomness: str = "error") -> Callable:
    """The Jacobian by forward mode: ``func`` is linearized once and the linear map is
    ``vmap``-ed over the one-hot tangents of each input (``torch.func.jacfwd``). A random op
    in ``func`` follows ``randomness`` as inside ``vmap`` (PyTorch runs ``func`` batched).

    >>> import tidu
    >>> tidu.func.jacfwd(lambda x: x.sum() * x)(tidu.tensor([1.0, 2.0]))
    tensor([[4., 1.],
            [2., 5.]])
    """

    @functools.wraps(func)
    def wrapper(*args: Any) -> Any:
        nums = _argnums(argnums, len(args), "jacfwd")
        partial = _selected(func, args, nums)
        p_leaves, p_spec = flatten([args[n] for n in nums])
        for p in p_leaves:
            if not _is_value(p):
                raise RuntimeError(f"jacfwd: the differentiated arguments must be Tensors, got {type(p).__name__}")
        captured: dict[str, Any] = {}

        def flat(*xs: Tensor) -> Any:
            output, captured["aux"] = _split_aux(
                partial(*unflatten(p_spec, [batching.lift(x) for x in xs])), has_aux, "jacfwd")
            leaves, captured["spec"] = flatten(output)
            for o in leaves:
                if not _is_value(o):
                    raise RuntimeError(f"jacfwd: Expected f to return Tensors, got {type(o).__name__}")
            captured["shapes"] = [tuple(o.shape) for o in leaves]
            return tuple(batching.lower(o) for o in leaves)

        low_in = [batching.lower(p) for p in p_leaves]
        batching.RANDOMNESS.append(randomness)
        try:
            _, jvp_fn = linearize(flat, *low_in)
        finally:
            batching.RANDOMNESS.pop()
        batch = tuple(t.size for t in batching.LEVELS)
        per_input = []
        for j, p in enumerate(p_leaves):

            def column(e: Any, j: int = j) -> Any:
                from ..ops.creation import zeros_like

                tangents = [zeros_like(q) for q in low_in]
                tangents[j] = _over_batch(e, batch)
                return jvp_fn(*tangents)

            per_input.append(_mapped(column, _basis(tuple(p.shape), low_in[j].dtype)))
        per_output = []
        for i, shape in enumerate(captured["shapes"]):
            blocks = [_assemble(None if cols is None else cols[i], shape, tuple(p.shape), low_in[j].dtype, False)
                      for j, (p, cols) in enumerate(zip(p_leaves, per_input))]
            per_output.append(_group(blocks, nums, args, isinstance(argnums, int)))
        jac = unflatten(captured["spec"], per_output)
        return (jac, captured["aux"]) if has_aux else jac

    return wrapper


def hessian(func: Callable, argnums: int | tuple[int, ...] = 0) -> Callable:
    """The Hessian of a scalar function: ``jacfwd(jacrev(func))`` (``torch.func.hessian``).

    >>> import tidu
    >>> tidu.func.hessian(lambda x: (x ** 3).sum())(tidu.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
