"""``tidu.Primitive``: the one way a tensor primitive is declared, and ``bind``.

A primitive's kernels, shape rule, JVP rules (one per input) and transpose
rule are declared side by side. Applied to inputs, a primitive becomes an
``Application`` (primitive, params, input avals): the hashable operation value
the AD engine records, linearizes and transposes. Rules are written with tidu
ops on ``Var`` values, which emit operations into the engine's builder, so the
linearized program of an application depends only on that application.
"""

from __future__ import annotations

import functools
import itertools
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ..ad import ADRuleError, ADRuleKind, OperationRole, PrimitiveValue, UndefinedPrimal
from ..ad import Primitive as EnginePrimitive
from .aval import ShapeDtype
from .imports import module

REGISTRY: dict[str, Primitive] = {}
DEBUG = os.environ.get("TIDU_DEBUG", "") not in ("", "0")


def freeze(value: Any) -> Any:
    """Params become hashable: lists to tuples, dicts to sorted item tuples."""
    if isinstance(value, dict):
        return tuple(sorted((k, freeze(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    if isinstance(value, tuple):
        try:
            hash(value)
        except TypeError:  # a list (or dict) inside
            return tuple(freeze(v) for v in value)
    return value


_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _declaration_site() -> str:
    """``file:line`` of the module-level statement that declared the primitive."""
    frame = sys._getframe(2)
    first = frame
    while frame is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    frame = frame or first
    path = frame.f_code.co_filename
    if path.startswith(_ROOT):
        path = os.path.relpath(path, _ROOT)
    return f"{path}:{frame.f_lineno}"


class Primitive:
    """A tensor primitive (JAX's ``core.Primitive`` with tidu-rs's rule contract).

    >>> import tidu, numpy as np
    >>> cube = tidu.Primitive("doc_cube")
    >>> cube.def_impl(lambda x: x ** 3)
    >>> _ = cube.def_abstract_eval(lambda x: x)
    >>> cube.def_jvp(lambda dx, x, out: dx * 3 * x * x)
    >>> x = tidu.tensor([2.0], requires_grad=True)
    >>> cube.bind(x).sum().backward()
    >>> x.grad
    tensor([12.])
    """

    def __init__(self, name: str, *, nondiff: bool = False) -> None:
        if name in REGISTRY:
            raise ValueError(f"primitive {name!r} declared twice (first at {REGISTRY[name].where})")
        self.name = name
        self.nondiff = nondiff
        self.where = _declaration_site()
        self.impls: dict[str, Callable[..., Any]] = {}
        self.prepares: dict[str, Callable[..., Any]] = {}
        self.abstract_eval: Callable[..., Any] | None = None
        self.jvp_rules: tuple[Callable[..., Any] | None, ...] | None = None
        self.transpose: Callable[..., Any] | None = None
        self.linear_in: tuple[int, ...] | None = None
        self.bilinear = False
        self.batch_rule: Callable[..., Any] | None = None
        self.moves_device = False  # its output's device is its ``device`` param (device_put)
        self.takes_views = False  # its CUDA kernel accepts strided inputs (the view primitives)
        # its kernels only move elements (the views, device_put): they run on float16 and bfloat16
        # storage as it is, where others compute in float32 (Note [half precision], core/half.py)
        self.moves_elements = False
        REGISTRY[name] = self

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"

    def def_impl(self, fn: Callable[..., Any], device: str = "cpu", *, takes_views: bool = False) -> None:
        """The kernel: arrays in, one array (or a tuple) out; params as keywords.

        ``device="cuda"`` registers the CUDA kernel: ``CudaArray`` in, made C-contiguous
        first unless ``takes_views`` (the view primitives), a fresh ``CudaArray`` out."""
        contiguous = device == "cuda" and not takes_views
        build = getattr(fn, "build", None)
        if build is None:
            self.impls[device] = _contiguous_inputs(fn) if contiguous else fn
            return
        built: list[Callable[..., Any]] = []

        def first(*arrays: Any, **params: Any) -> Any:
            """A lazy kernel (tidu/backends/cuda/lazy.py): built on the first call, and registered
            in place of this function."""
            if not built:
                real = build()
                built.append(_contiguous_inputs(real) if contiguous else real)
                self.impls[device] = built[0]
            return built[0](*arrays, **params)

        self.impls[device] = first

    def def_prepare(self, fn: Callable[..., Any], device: str = "cuda") -> None:
        """The kernel of one signature, made once: ``fn(*in_avals)`` gives a function of the
        arrays alone (a call without params, whose output aval the shape rule gives), or
        ``None`` where it has none for those avals. The eager calls of that signature run it
        in place of the impl (dispatch's ``_call``): a CUDA elementwise op's launch prepared
        once, not looked up and packed per call."""
        self.prepares[device] = fn

    def def_abstract_eval(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The shape rule: ``ShapeDtype`` in, ``ShapeDtype`` out; raises on bad input."""
        self.abstract_eval = fn
        return fn

    def def_jvp(self, *rules: Callable[..., Any] | None) -> None:
        """One rule per input, ``rule(tangent, *primals, out, **params)``; ``None`` for a
        non-differentiable input. Rules are called only for active tangents; a rule may return
        ``None`` for a zero term (no tangent at all, so no ``0 * inf`` downstream). A primitive with
        several outputs passes them all (``rule(tangent, *primals, *outs, **params)``) and its
        rules return one tangent per output, ``None`` for a zero one."""
        self.jvp_rules = rules

    def def_transpose(
        self, rule: Callable[..., Any], *, linear_in: Sequence[int] | None = None, bilinear: bool = False
    ) -> None:
        """``rule(cotangent, *inputs, **params)`` -> one cotangent or ``None`` per input;
        linear inputs arrive as ``UndefinedPrimal``. ``linear_in`` lists the inputs the
        primitive is linear in (all by default); ``bilinear`` allows only one at a time."""
        self.transpose = rule
        self.linear_in = None if linear_in is None else tuple(linear_in)
        self.bilinear = bilinear

    def def_linear(self, rule: Callable[..., Any]) -> None:
        """A unary linear primitive: its JVP is itself applied to the tangent."""
        self.def_jvp(lambda t, x, out, **params: self.bind(t, **params))
        self.def_transpose(rule)

    def def_batch(self, rule: Callable[..., Any]) -> None:
        """The batching rule for ``vmap``: ``rule(args, batch_dims, **params) -> (out, out_batch_dim)``.

        ``batch_dims[i]`` is the batch dimension of ``args[i]`` or ``None`` (not batched);
        the rule binds primitives on the whole batch (docs/tutorials/vmap.md)."""
        self.batch_rule = rule

    def bind(self, *args: Any, **params: Any) -> Any:
        return bind(self, *args, **params)

    def check_linear(self, mask: tuple[bool, ...]) -> None:
        active = [i for i, m in enumerate(mask) if m]
        if self.transpose is None:
            err = ADRuleError.unsupported(self.name, ADRuleKind.Transpose)
            err.add_note(
                f"an AD rule applied primitive {self.name!r} to a tangent (argument {active[0]}), which "
                "treats it as linear; a primitive used that way needs a transpose rule "
                f"({self.name}.def_transpose), and a non-linear one must not touch tangents"
            )
            raise err
        allowed = self.linear_in
        bad = [i for i in active if allowed is not None and i not in allowed]
        if bad or (self.bilinear and len(active) > 1):
            raise TypeError(
                f"primitive {self.name} is not linear in arguments {active} together; "
                "an AD rule applied it to tangents there"
            )


def _contiguous_inputs(fn: Callable[..., Any]) -> Callable[..., Any]:
    def impl(*arrays: Any, **params: Any) -> Any:
        for a in arrays:
            if not a.is_c_contiguous:
                contiguous = module("tidu.backends.cuda.copy").contiguous
                return fn(*[contiguous(x) for x in arrays], **params)
        return fn(*arrays, **params)

    return impl


_UIDS: dict[Application, int] = {}
_MAX_UIDS = 1 << 16
_next_uid = itertools.count().__next__


class Application(EnginePrimitive):
    """A primitive applied with fixed params to inputs of fixed avals: the engine's op."""

    __slots__ = ("prim", "params", "in_avals", "out_avals", "_hash", "_uid")

    def __init__(self, prim: Primitive, params: tuple, in_avals: tuple[ShapeDtype, ...] | None,
                 out_avals: tuple[ShapeDtype, ...] | None = None) -> None:
        self.prim = prim
        self.params = params
        self.in_avals = in_avals
        if out_avals is None and in_avals is not None:
            out_avals = abstract_eval(prim, in_avals, dict(params))
        self.out_avals = out_avals
        self._hash = hash((prim.name, params, in_avals))
        self._uid: int | None = None

    def __hash__(self) -> int:
        return self._hash

    @property
    def uid(self) -> int:
        """A number shared by equal applications, and only by them, in this process. Structure
        keys (a deferred queue's, a group's, a compiled backward's) hold it instead of the
        application: hashing an int costs no ``__hash__`` call."""
        uid = self._uid
        if uid is None:
            uid = _UIDS.get(self)
            if uid is None:
                if len(_UIDS) >= _MAX_UIDS:  # later equal applications get new numbers: keys miss, never collide
                    _UIDS.clear()
                uid = _UIDS[self] = _next_uid()
            self._uid = uid
        return uid

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, Application)
            and self.prim is other.prim
            and self.params == other.params
            and self.in_avals == other.in_avals
        )

    @property
    def name(self) -> str:
        if not self.params:
            return self.prim.name
        args = " ".join(f"{k}={_fmt(v)}" for k, v in self.params)
        return f"{self.prim.name}[{args}]"

    @property
    def short_name(self) -> str:
        return self.prim.name

    def __repr__(self) -> str:
        return self.name

    def input_count(self) -> int:
        return 2 if self.in_avals is None else len(self.in_avals)

    def output_count(self) -> int:
        return 1 if self.out_avals is None else len(self.out_avals)

    def add(self) -> Application:
        return accumulate_add()

    def eval(self, ctx: Any, inputs: Sequence[Any]) -> list[Any]:
        out = bind(self.prim, *inputs, **dict(self.params))
        return list(out) if isinstance(out, tuple) else [out]

    def jvp_rule(self, builder, primal_inputs, primal_outputs, tangent_inputs, ctx):  # type: ignore[no-untyped-def]
        if self.in_avals is None:  # accumulation add: d(a + b) = da + db
            active = [t for t in tangent_inputs if t is not None]
            if len(active) == 1:
                return [active[0]]
            both = [PrimitiveValue.Local(t) for t in active]
            return builder.add_primitive(self, both, OperationRole.Linearized((True, True)))
        prim = self.prim
        if prim.jvp_rules is None:
            raise _missing(prim, ADRuleKind.Jvp, "def_jvp")
        tracer = RuleTracer(builder)
        params = dict(self.params)
        primals = [Var(tracer, PrimitiveValue.External(k), a, False) for k, a in zip(primal_inputs, self.in_avals)]
        outs = [Var(tracer, PrimitiveValue.External(k), a, False) for k, a in zip(primal_outputs, self.out_avals)]
        terms = []
        for i, (rule, t) in enumerate(zip(prim.jvp_rules, tangent_inputs)):
            if t is None:
                continue
            if rule is None:
                raise ADRuleError.invalid_input(prim.name, ADRuleKind.Jvp, f"input {i} is not differentiable")
            dx = Var(tracer, PrimitiveValue.Local(t), self.in_avals[i], True)
            term = rule(dx, *primals, *outs, **params)
            if term is not None:  # ``None``: a zero term (a piecewise-constant function's)
                terms.append(term)
        if not terms:
            return [None] * self.output_count()
        if len(self.out_avals) == 1:
            total = functools.reduce(lambda a, b: a + b, terms)
            return [tracer.result_id(total, self.out_avals[0], prim.name, ADRuleKind.Jvp)]
        return [_slot_tangent(tracer, [t[slot] for t in terms], aval, prim.name)
                for slot, aval in enumerate(self.out_avals)]

    def transpose_rule(self, builder, cotangent_outputs, inputs, role, ctx):  # type: ignore[no-untyped-def]
        mask = role.active_mask
        if self.in_avals is None:
            ct = cotangent_outputs[0]
            return [ct if m else None for m in mask]
        prim = self.prim
        if prim.transpose is None:
            raise _missing(prim, ADRuleKind.Transpose, "def_transpose")
        tracer = RuleTracer(builder)
        args = [
            UndefinedPrimal(a) if m else Var(tracer, v, a, False)
            for v, a, m in zip(inputs, self.in_avals, mask)
        ]
        ct = Var(tracer, PrimitiveValue.Local(cotangent_outputs[0]), self.out_avals[0], True)
        results = prim.transpose(ct, *args, **dict(self.params))
        if len(results) != len(args):
            raise ADRuleError.invalid_input(
                prim.name, ADRuleKind.Transpose, f"rule returned {len(results)} cotangents for {len(args)} inputs"
            )
        return [
            tracer.result_id(r, a, prim.name, ADRuleKind.Transpose) if m and r is not None else None
            for r, a, m in zip(results, self.in_avals, mask)
        ]


def _slot_tangent(tracer: RuleTracer, terms: list[Any], aval: ShapeDtype, name: str) -> int | None:
    """One output's tangent of a multi-output primitive: the sum of the rules' terms for that
    output, each rule giving a tuple with one term per output (``None``: zero)."""
    live = [t for t in terms if t is not None]
    if not live:
        return None
    return tracer.result_id(functools.reduce(lambda a, b: a + b, live), aval, name, ADRuleKind.Jvp)


def _missing(prim: Primitive, kind: ADRuleKind, method: str) -> ADRuleError:
    err = ADRuleError.unsupported(prim.name, kind)
    err.add_note(
        f"primitive {prim.name!r} (declared at {prim.where}) has no {kind.as_str()} rule, so it cannot be "
        f"differentiated this way; define {prim.name}.{method}(...) (docs/guides/implementing-primitives.md)"
    )
    return err


def _fmt(v: Any) -> str:
    return repr(v) if not isinstance(v, tuple) else "(" + ",".join(_fmt(x) for x in v) + (",)" if len(v) == 1 else ")")


@functools.lru_cache(maxsize=1)
def accumulate_add() -> Application:
    from ..primitives.elementwise import add

    return Application(add, (), None, None)


def abstract_eval(prim: Primitive, in_avals: Sequence[ShapeDtype], params: dict[str, Any]) -> tuple[ShapeDtype, ...]:
    if prim.abstract_eval is None:
        raise NotImplementedError(f"primitive {prim.name} has no abstract eval (shape rule)")
    out = prim.abstract_eval(*in_avals, **params)
    outs = tuple(out) if isinstance(out, list | tuple) and out and isinstance(out[0], ShapeDtype) else (out,)
    device = in_avals[0].device if in_avals else params.get("device", "cpu")
    if device != "cpu" and not prim.moves_device:
        outs = tuple(o if o.device == device else o._replace(device=device) for o in outs)
    return outs


class Var:
    """A value inside an AD rule: a tangent (``linear``) or a primal, known by shape and dtype.

    Operations on a ``Var`` emit operations into the engine's builder instead of
    running kernels; tidu ops accept ``Var`` wherever they accept tensors.
    """

    __slots__ = ("tracer", "value", "aval", "linear")
    __array_priority__ = 1000

    def __init__(self, tracer: RuleTracer, value: Any, aval: ShapeDtype, linear: bool) -> None:
        self.tracer = tracer
        self.value = value
        self.aval = aval
        self.linear = linear

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> Any:
        return self.aval.dtype

    @property
    def device(self) -> Any:
        from .device import CPU, CUDA

        return CPU if self.aval.device == "cpu" else CUDA

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    def dim(self) -> int:
        return len(self.aval.shape)

    def size(self, dim: int | None = None) -> Any:
        return self.aval.shape if dim is None else self.aval.shape[dim]

    def __repr__(self) -> str:
        kind = "tangent" if self.linear else "primal"
        return f"Var({kind}, {self.value!r}, shape={self.shape}, dtype={self.dtype})"

    def __bool__(self) -> bool:
        if _in_vmap():
            raise RuntimeError(_VMAP_CONTROL_FLOW)
        raise TypeError("the truth value of a symbolic value inside an AD rule is unknown; use tidu.where")

    def item(self) -> Any:
        """A value has no number inside ``vmap`` (PyTorch's error) or an AD rule."""
        _no_value(".item()")

    def tolist(self) -> Any:
        _no_value(".tolist()")

    __float__ = __int__ = __index__ = __complex__ = item

    def _values(self) -> Any:
        """An op computed on the host from the values (``nonzero``, ``unique``...): none here."""
        if _in_vmap():
            raise RuntimeError(_VMAP_DYNAMIC)
        raise TypeError("this operation reads the values of its input, which a symbolic value inside an AD rule "
                        "does not have")

    _host = _values


_VMAP_ITEM = ("vmap: It looks like you're calling {0} on a Tensor. We don't support vmap over calling {0} on a Tensor, "
              "please try to rewrite what you're doing with other operations. If error is occurring somewhere inside "
              "tidu's internals, please file a bug report.")
_VMAP_DYNAMIC = ("vmap: We do not support batching operators that can output dynamic shape, or that tidu computes "
                 "on the host from the values (nonzero, unique, masked_select, ...). Please rewrite what you're doing "
                 "with other operations.")
_VMAP_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We "
                      "don't support that yet; tidu.where computes both branches.")


def _no_value(call: str) -> None:
    if _in_vmap():
        raise RuntimeError(_VMAP_ITEM.format(call))
    raise TypeError("the value of a symbolic value inside an AD rule is unknown")


def _in_vmap() -> bool:
    """Whether a ``vmap`` is tracing (``func.batching``): its values are ``Var`` s the user's function sees."""
    batching = sys.modules.get("tidu.func.batching")
    return bool(batching is not None and batching.LEVELS)


class RuleTracer:
    """Wraps an engine ``PrimitiveBuilder`` so tidu ops on ``Var`` emit into it."""

    __slots__ = ("builder",)

    def __init__(self, builder: Any) -> None:
        self.builder = builder

    def emit(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        vars_ = [self.lift(a, prim) for a in args]
        in_avals = tuple(v.aval for v in vars_)
        frozen = freeze(params)
        app = Application(prim, frozen, in_avals)
        mask = tuple(v.linear for v in vars_)
        linear = any(mask)
        if linear:
            prim.check_linear(mask)
        ids = self.builder.add_primitive(app, [v.value for v in vars_], OperationRole.Linearized(mask))
        outs = [Var(self, PrimitiveValue.Local(i), a, linear) for i, a in zip(ids, app.out_avals)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def lift(self, value: Any, prim: Primitive) -> Var:
        if isinstance(value, Var):
            if value.tracer is not self and value.tracer.builder is not self.builder:
                raise RuntimeError(f"{prim.name}: values from two different AD rules were mixed")
            return value
        if isinstance(value, UndefinedPrimal):
            raise TypeError(f"{prim.name} was applied to an UndefinedPrimal; transpose rules may only "
                            "apply primitives to the cotangent and to defined inputs")
        from ..tensor import Tensor

        if isinstance(value, Tensor):
            from ..primitives.creation import literal

            return self.emit(literal, [], {"value": Literal(value)})
        raise TypeError(f"{prim.name}: unsupported argument type {type(value).__name__}")

    def result_id(self, value: Any, aval: ShapeDtype, name: str, kind: ADRuleKind) -> int:
        if not isinstance(value, Var) or not value.linear or not value.value.is_local():
            raise ADRuleError.invalid_input(name, kind, "the rule returned a value that is not linear in its input")
        if value.aval != aval:
            raise ADRuleError.invalid_input(
                name, kind, f"the rule returned shape {value.shape} {value.dtype}, expected {aval.shape} {aval.dtype}"
            )
        return value.value.id


class Literal:
    """A concrete tensor captured by a rule; hashed by identity."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor

    def __hash__(self) -> int:
        return id(self.tensor)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and other.tensor is self.tensor

    def __repr__(self) -> str:
        return f"<tensor {tuple(self.tensor.shape)}>"


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Apply ``prim``: check shapes, run the kernel, record when a gradient may be needed."""
    for a in args:
        if type(a) is Var:
            return a.tracer.emit(prim, args, params)
    return _dispatch.bind_eager(prim, args, params)


from . import dispatch as _dispatch  # noqa: E402 - dispatch needs the classes above
