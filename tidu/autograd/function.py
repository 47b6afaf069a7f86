"""``tidu.autograd.Function``: PyTorch's custom-gradient class on tidu's linearize-then-transpose engine.

Design. The engine differentiates a recorded node by asking its operation for a
JVP rule, then transposes the linear graph the rule emitted. A ``Function`` has
only a VJP (``backward``) and maybe a JVP (``jvp``), so ``apply`` records one
node whose operation is a ``FunctionOp`` (the user's forward, already run):

- ``FunctionOp.jvp_rule`` emits one opaque linear operation, ``FunctionLinear``
  (named ``<Name>_vjp_linear``), from the active input tangents to the output
  tangents. Nothing is known about it except that it is linear.
- ``FunctionLinear.transpose_rule`` emits ``FunctionBackward``
  (``<Name>_backward``), whose evaluation calls the user's ``backward(ctx,
  *grad_outputs)`` on tensors. Because it runs tidu ops on the real cotangents
  and on the saved tensors (which keep their place on the tape), a backward
  written with tidu ops is recorded under ``create_graph`` and differentiates
  again: higher order works.
- ``FunctionLinear`` evaluated forward (forward mode: ``jvp``, ``linearize``,
  ``jacfwd``) calls the user's ``jvp(ctx, *tangents)``; a Function without
  ``jvp`` raises a RuntimeError naming the class there.

These operations live only in the graphs of their own node (they are not
``tidu.Primitive`` s, so they never enter the primitive registry or the
program cache). ``vmap`` of a Function is not supported (a clear error).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from typing import Any

from ..ad import OperationRole, PrimitiveValue
from ..ad import Primitive as EnginePrimitive
from ..core import grad_mode
from ..core.inplace import assign_
from ..core.primitive import Var, accumulate_add
from ..core.programs import TensorRecordedGraph
from ..core.tape import RECORDER, SavedInput, SavedOutput
from ..eager import EagerInput
from ..tensor import Tensor


class FunctionCtx:
    """The ``ctx`` of ``forward``/``backward``/``jvp``: what forward saves for the other two."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.to_save: tuple[Any, ...] = ()
        self.non_differentiable: set[int] = set()
        self.dirty: set[int] = set()
        self.materialize_grads = True

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep tensors (or ``None``) for ``backward``; read them as ``ctx.saved_tensors``."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument is {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        """Keep tensors for ``jvp`` (PyTorch's name); they too are read as ``ctx.saved_tensors``."""
        if not self.to_save:
            self.save_for_backward(*tensors)

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        return self.to_save

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs that get no gradient (their ``requires_grad`` stays False)."""
        self.non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Inputs ``forward`` wrote in place (and returns): each output that is one stays that
        tensor, which now holds this call's result in the graph."""
        self.dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value: bool) -> None:
        """With ``False``, ``backward`` receives ``None`` for outputs that got no gradient."""
        self.materialize_grads = value


class Function:
    """A differentiable operation with a hand-written ``backward`` (and optionally ``jvp``).

    Subclass it with static ``forward(ctx, *args)`` (or ``forward(*args)`` plus
    ``setup_context(ctx, inputs, output)``), ``backward(ctx, *grad_outputs)``
    (one gradient or ``None`` per forward argument) and, for forward mode,
    ``jvp(ctx, *tangents)``; call ``YourFunction.apply(*args)``.

    >>> import tidu
    >>> class Cube(tidu.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad_out):
    ...         (x,) = ctx.saved_tensors
    ...         return grad_out * 3 * x ** 2
    >>> x = tidu.tensor(2.0, requires_grad=True)
    >>> (g,) = tidu.autograd.grad(Cube.apply(x), x, create_graph=True)
    >>> g, tidu.autograd.grad(g, x)[0]
    (tensor(12., grad_fn=<mul>), tensor(12.))
    """

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[Any, ...], output: Any) -> None:
        """PyTorch's newer style: ``forward(*args)`` without ``ctx``, then this fills ``ctx``."""
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def jvp(ctx: FunctionCtx, *tangents: Any) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use "
                                  "it with forward mode AD.")

    @classmethod
    def apply(cls, *args: Any) -> Any:
        if any(type(a) is Var for a in args):
            raise RuntimeError(f"{cls.__name__}.apply: autograd.Function does not support vmap or use inside "
                               "AD rules; call it on tensors")
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx = FunctionCtx(needs)
        with grad_mode.no_grad():
            if cls.setup_context is Function.setup_context:
                output = cls.forward(ctx, *args)
            else:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
        single = not isinstance(output, tuple)
        outs = [output] if single else list(output)
        if not (grad_mode.is_grad_enabled() and any(needs)):
            return output
        dirty = {}
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                raise TypeError(f"{cls.__name__}.forward must return Tensors (or a tuple of them), output {i} "
                                f"is {type(o).__name__}")
            if any(o is a for a in args) or any(o is p for p in outs[:i]):
                outs[i] = Tensor(o._data, o.dtype, device=o.device)  # an input returned as is: a new value on the tape
                if id(o) in ctx.non_differentiable:  # marked non-differentiable, it stays so
                    ctx.non_differentiable.add(id(outs[i]))
                if id(o) in ctx.dirty and any(o is a for a in args):
                    if o._trace is None and o.requires_grad:
                        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
                    dirty[i] = o
        _record(cls, ctx, args, outs)
        for i, o in dirty.items():  # written in place: the input takes the result's place in the graph
            outs[i] = assign_(o, outs[i], op=cls.__name__)
        return outs[0] if single else tuple(outs)


def _record(cls: type[Function], ctx: FunctionCtx, args: Sequence[Any], outs: list[Tensor]) -> None:
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    inputs = [args[i] for i in positions]
    diff_out = tuple(id(o) not in ctx.non_differentiable and o.dtype.is_floating_point for o in outs)
    op = FunctionOp(cls, ctx, [a.aval if isinstance(a, Tensor) else None for a in args], positions,
                    [o.aval for o in outs], diff_out)
    in_keys = [a._ensure_key() for a in inputs]
    graph = FunctionGraph.from_primitive(op, in_keys)
    eager_in = [EagerInput(k, a._trace, True, SavedInput(a)) for k, a in zip(in_keys, inputs)]
    saved = [SavedOutput(o) for o in outs]
    eager_out = RECORDER.record_graph(graph, eager_in, [o._data for o in outs], dict(zip(graph.output_keys(), saved)))
    graph.eager_out_keys = [e.key for e in eager_out]
    node = weakref.ref(eager_out[0].trace.node)
    for o, s, e, d in zip(outs, saved, eager_out, diff_out):
        s.key, s.node = e.key, node
        if d:
            o._requires_grad, o._key, o._trace = True, e.key, e.trace


class FunctionGraph(TensorRecordedGraph):
    """A Function node's recorded graph: linearized afresh each time (its ``ctx`` is per call),
    with the keys of its outputs, so hooks on them run."""

    cacheable = False


class _Op(EnginePrimitive):
    """Shared parts of the three operations of a Function node (hashed by identity)."""

    def __init__(self, fn: FunctionOp, n_in: int, n_out: int) -> None:
        self.fn = fn
        self.n_in = n_in
        self.n_out = n_out

    def input_count(self) -> int:
        return self.n_in

    def output_count(self) -> int:
        return self.n_out

    def add(self) -> Any:
        return accumulate_add()

    def __repr__(self) -> str:
        return self.name


class FunctionOp(_Op):
    """The recorded application: the user's forward, already evaluated."""

    def __init__(self, cls: type[Function], ctx: FunctionCtx, arg_avals: list[Any], positions: list[int],
                 out_avals: list[Any], diff_out: tuple[bool, ...]) -> None:
        super().__init__(self, len(positions), len(out_avals))
        self.cls, self.ctx, self.n_args, self.positions = cls, ctx, len(arg_avals), positions
        self.arg_avals, self.in_avals = arg_avals, [arg_avals[p] for p in positions]
        self.out_avals, self.diff_out = out_avals, diff_out
        self.name = self.short_name = cls.__name__

    def eval(self, ctx: Any, inputs: Sequence[Any]) -> list[Any]:
        raise RuntimeError(f"{self.name}: an autograd.Function node cannot be re-evaluated; call {self.name}.apply")

    def jvp_rule(self, builder, primal_inputs, primal_outputs, tangent_inputs, ctx):  # type: ignore[no-untyped-def]
        mask = tuple(t is not None for t in tangent_inputs)
        linear = FunctionLinear(self, mask)
        ids = builder.add_primitive(linear, [PrimitiveValue.Local(t) for t in tangent_inputs if t is not None],
                                    OperationRole.Linearized((True,) * sum(mask)))
        return [i if d else None for i, d in zip(ids, self.diff_out)]


class FunctionLinear(_Op):
    """``<Name>_vjp_linear``: the node's opaque linearization (active input tangents -> output tangents)."""

    def __init__(self, fn: FunctionOp, mask: tuple[bool, ...]) -> None:
        super().__init__(fn, sum(mask), fn.n_out)
        self.mask = mask
        self.name = self.short_name = f"{fn.name}_vjp_linear"

    def eval(self, ctx: Any, tangents: Sequence[Any]) -> list[Any]:
        fn = self.fn
        if fn.cls.jvp is Function.jvp:
            raise RuntimeError(
                f"{fn.name} (an autograd.Function) defines no jvp(ctx, *tangents), so it cannot be used in "
                "forward-mode AD (jvp, linearize, jacfwd, hessian); define the static method jvp")
        from ..ops.creation import zeros

        given = dict(zip([p for p, m in zip(fn.positions, self.mask) if m], tangents))
        full = [given[i] if i in given else None if a is None else zeros(a.shape, dtype=a.dtype)
                for i, a in enumerate(fn.arg_avals)]
        out = fn.cls.jvp(fn.ctx, *full)
        outs = [out] if not isinstance(out, tuple) else list(out)
        return _checked(outs, fn.out_avals, f"{fn.name}.jvp", "tangent", "output")

    def transpose_rule(self, builder, cotangent_outputs, inputs, role, ctx):  # type: ignore[no-untyped-def]
        backward = FunctionBackward(self, tuple(c is not None for c in cotangent_outputs))
        cts = [PrimitiveValue.Local(c) for c in cotangent_outputs if c is not None]
        return builder.add_primitive(backward, cts, OperationRole.Linearized((True,) * len(cts)))


class FunctionBackward(_Op):
    """``<Name>_backward``: runs the user's ``backward`` on the cotangents."""

    def __init__(self, linear: FunctionLinear, ct_mask: tuple[bool, ...]) -> None:
        super().__init__(linear.fn, sum(ct_mask), linear.n_in)
        self.linear, self.ct_mask = linear, ct_mask
        self.name = self.short_name = f"{linear.fn.name}_backward"

    def eval(self, ctx: Any, cotangents: Sequence[Any]) -> list[Any]:
        fn = self.fn
        from ..ops.creation import zeros

        given = iter(cotangents)
        grads = []
        for aval, m in zip(fn.out_avals, self.ct_mask):
            if m:
                grads.append(next(given))
            else:
                grads.append(zeros(aval.shape, dtype=aval.dtype) if fn.ctx.materialize_grads else None)
        result = fn.cls.backward(fn.ctx, *grads)
        result = list(result) if isinstance(result, tuple | list) else [result]
        if len(result) != fn.n_args:
            raise RuntimeError(f"function {fn.name}Backward returned an incorrect number of gradients "
                               f"(expected {fn.n_args}, got {len(result)})")
        wanted = [result[p] for p, m in zip(fn.positions, self.linear.mask) if m]
        avals = [a for a, m in zip(fn.in_avals, self.linear.mask) if m]
        filled = [zeros(a.shape, dtype=a.dtype) if g is None else g for g, a in zip(wanted, avals)]
        return _checked(filled, avals, f"Function {fn.name}Backward", "gradient", "input")


def _checked(values: list[Any], avals: Sequence[Any], where: str, what: str, of: str) -> list[Any]:
    if len(values) != len(avals):
        raise RuntimeError(f"{where} returned {len(values)} {what}s for {len(avals)} {of}s")
    out = []
    for i, (v, a) in enumerate(zip(values, avals)):
        if not isinstance(v, Tensor | Var):  # a Var: batched by jacrev/jacfwd's vmap
            raise TypeError(f"{where} must return Tensors, {what} {i} is {type(v).__name__}")
        if tuple(v.shape) != tuple(a.shape):
            raise RuntimeError(f"{where} returned an invalid {what} at index {i} - got {list(v.shape)} but "
                               f"expected shape compatible with {list(a.shape)}")
        out.append(v if v.dtype is a.dtype else v.to(a.dtype))
    return out


_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Function):
    """A gradient made by a ``once_differentiable`` backward under ``create_graph``: it requires
    grad (through ``anchor``, a cotangent that does), and differentiating it raises."""

    @staticmethod
    def forward(ctx: FunctionCtx, value: Tensor, anchor: Tensor) -> Tensor:
        return value.clone()

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise RuntimeError(_TWICE)


def once_differentiable(backward: Any) -> Any:
    """Decorate a ``Function``'s ``backward`` that is not itself differentiable (PyTorch's): it
    runs under ``no_grad``; under ``create_graph`` its gradients still require grad, and a second
    backward through them raises.

    >>> import tidu
    >>> class Square(tidu.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @tidu.autograd.function.once_differentiable
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = tidu.tensor(3.0, requires_grad=True)
    >>> tidu.autograd.grad(Square.apply(x), x)
    (tensor(6.),)
    """

    @functools.wraps(backward)
    def wrapper(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        with grad_mode.no_grad():
            outputs = backward(ctx, *grad_outputs)
        anchor = next((g for g in grad_outputs if isinstance(g, Tensor) and g.requires_grad), None)
        if anchor is None or not grad_mode.is_grad_enabled():
            return outputs
        single = not isinstance(outputs, tuple)
        wrapped = tuple(_DelayedError.apply(o, anchor) if isinstance(o, Tensor) and o.dtype.is_floating_point else o
                        for o in ((outputs,) if single else outputs))
        return wrapped[0] if single else wrapped

    return wrapper
