"""Compiled backward steps: a whole backward pass as one cached straight-line program.

A training loop records the same trace structure every step, so the backward
pass of a step depends only on that structure: which applications ran (primitive,
params, input avals), how they are wired (which node output or which leaf feeds
each input, by position in the walk), which inputs require grad, which keys are
wanted, the device, and whether the graph is created. ``backward`` computes that
structural key, and on a miss builds a ``Step``: the cached per-node programs
(``core.programs``) of every node reached, flattened into one list of ``Instr`` over
numbered slots (saved residuals, the seed, intermediate cotangents, their sums, the
wanted cotangents). A hit only gathers the saved values (checking their versions)
and runs the instructions.

Without ``create_graph`` the instructions call kernels directly on arrays (and
elementwise chains are fused). With it they bind each primitive on tensors, as the
general walk's executor does, so the backward is itself recorded on the tape and
differentiable again: the gathered values are then the saved tensors with their
graph positions, and the seed and the results are tensors.

It serves the common case only and returns ``None`` (the caller then runs the
general ``try_backward``) for anything else: nodes that are not one-primitive
``TensorRecordedGraph`` calls (``autograd.Function``), or a program that cannot
be built (a missing AD rule: the general path raises the error where it always does).
"""

from __future__ import annotations

import operator
import sys
from collections import OrderedDict
from collections.abc import Collection
from typing import Any

from ..backends.cpu import fusion
from ..backends.stacking import stacks_in_place
from ..core import deferred, grad_mode, programs
from ..core.device import CUDA
from ..core.dispatch import bind_eager, bind_one, bind_product, bind_same
from ..core.dtypes import bool_
from ..core.groups import GroupNode, GroupTrace, raw_node
from ..core.imports import module
from ..core.instructions import Instr, impl_instr
from ..core.primitive import Application, accumulate_add
from ..core.programs import TensorRecordedGraph
from ..core.tape import SavedInput, SavedOutput
from ..eager.trace import FREED_MESSAGE, TraceNode, operation_name
from ..primitives.creation import full as full_p
from ..primitives.linalg import dot_general as dot_general_p
from ..primitives.structural import transpose as transpose_p
from ..tensor import SHORT_PATH_TYPES, Tensor, wrap

MAX_STEPS = 256
_steps: OrderedDict[tuple, Step] = OrderedDict()
STATS = {"built": 0, "reused": 0, "general": 0}  # passes served each way (tests, benchmarks)
_SLOT_BITS = 9  # an output slot in a wiring code (MAX_OUTPUTS = 256)


class Step:
    """A built backward step: what to gather from the nodes, the program, the results."""

    __slots__ = ("program", "gathers", "results", "fn", "source", "on_tensors", "replay", "releases", "queued",
                 "__weakref__")

    def __init__(self, program: list[Instr], gathers: list, results: list, fn: Any, source: str,
                 on_tensors: bool = False) -> None:
        self.program = program
        self.gathers = gathers  # (node position, ((is_output, index), ...), node name): what fn reads
        self.results = results  # (leaf index or (position, output slot), slot, dtype)
        self.fn = fn  # [seed, *gathered values] -> the results (the program as Python code)
        self.source = source  # fn's code, for reading (``print(step.source)``)
        self.on_tensors = on_tensors  # binds on tensors (``create_graph``), else kernels on arrays
        self.replay: Any = None  # on the GPU: runs so far, its CUDA graph, or False (backends/cuda/graphs.py)
        self.releases: dict[int, frozenset] = {}  # what a pass frees where not everything (``_releases``)
        self.queued: deferred.QueuedLoop | None = None  # a one-loop step as queued work (``_queued_loop``)


def clear() -> None:
    _steps.clear()
    graphs = sys.modules.get("tidu.backends.cuda.graphs")
    if graphs is not None:
        graphs.clear()


def size() -> int:
    return len(_steps)


def walk_nodes(root: TraceNode) -> list[TraceNode]:
    """Nodes reachable from ``root``, consumers first (``topological_traces`` reversed)."""
    order: list[TraceNode] = []
    seen: set[int] = set()
    stack: list[tuple[TraceNode, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for trace, _, _ in node.input_edges:
            if trace is not None:
                producer = raw_node(trace)
                if id(producer) not in seen:
                    stack.append((producer, False))
    order.reverse()
    return order


class Walk:
    """One backward pass's structure: nodes (consumers first), leaf keys, and the cache key."""

    __slots__ = ("nodes", "leaves", "leaf_index", "grad_leaves", "root_slot", "parts", "wanted_leaves",
                 "wanted_outs", "unit_seed", "key")

    def __init__(self, root_slot: int) -> None:
        self.nodes: list[TraceNode] = []
        self.root_slot = root_slot
        self.leaves: list[Any] = []  # leaf keys, in the order the walk met them
        self.leaf_index: dict[Any, int] = {}
        self.grad_leaves: list[tuple[TraceNode, Any]] = []  # (node, key of a leaf it reads that requires grad)


def structure(root: TraceNode, root_key: Any, device: Any, create_graph: bool = False) -> Walk | None:
    """One depth-first pass over the nodes reachable from ``root`` (which outputs ``root_key``):
    their order, the leaves they read, and the structural key but for the wanted keys (added
    by ``with_wanted``); ``None`` when a node is not a cacheable one-primitive call.

    A node is keyed when it is finished, after all its producers: the wiring codes number
    producers in that (post-)order."""
    outs = root.primal_out_keys
    walk = Walk(0 if len(outs) == 1 else _slot_of(outs, root_key))
    leaves, leaf_index, grad_leaves = walk.leaves, walk.leaf_index, walk.grad_leaves
    parts: list[Any] = [device, create_graph, walk.root_slot]
    append = parts.append
    post: dict[TraceNode, int] = {}  # node -> its position among the finished nodes, -1 while open
    order = walk.nodes
    stack = [root]
    while stack:
        node = stack.pop()
        state = post.get(node)
        if state is None:  # opened: finished when popped again, after every producer pushed now
            post[node] = -1
            stack.append(node)
            for trace, _, _ in node.input_edges:
                if trace is not None:
                    producer = trace.node if trace.__class__ is not GroupTrace else trace.group.raw(trace.index)
                    if producer not in post:
                        stack.append(producer)
            continue
        if state >= 0:  # reached again through another consumer
            continue
        comp = node.computation
        if comp.__class__ is TensorRecordedGraph:
            op = comp._op
            if op.prim.moves_device:  # a graph over two devices takes the general path
                return None
            append((op.uid,))  # equal when prim, params and input avals are; a tuple, unlike the ints of edges
        elif node.__class__ is GroupNode:
            if node.structure is None:
                node.close()
            append(node.structure)
        else:
            return None
        for trace, key, requires_grad in node.input_edges:
            if trace is None:
                raw = key.key
                index = leaf_index.get(raw)
                if index is None:
                    index = leaf_index[raw] = len(leaves)
                    leaves.append(key)
                if requires_grad:
                    grad_leaves.append((node, key))
                append(~(index * 2 + requires_grad))
            else:
                append((_producer(trace, key, post) << 1) + requires_grad)
        post[node] = len(order)
        order.append(node)
    order.reverse()
    walk.parts = parts
    return walk


def _slot_of(keys: list, key: Any) -> int:
    """``keys.index(key)``, found by identity where it can be: keys compare by a Python-level
    ``__eq__``, and a group's root is usually its last call (W1's, the 24th)."""
    if keys[-1] is key:
        return len(keys) - 1
    for slot, k in enumerate(keys):
        if k is key:
            return slot
    return keys.index(key)


def with_wanted(walk: Walk, root_key: Any, wanted: Collection[Any], unit_seed: bool = False) -> None:
    """Complete ``walk.key`` with the wanted keys (leaves by index, node outputs by position) and
    whether the seed is the implicit one (``set_wanted``)."""
    leaf_index = walk.leaf_index
    wanted_leaves, wanted_outs = [], []
    out_at = None
    for key in wanted:
        index = leaf_index.get(key.key)
        if index is not None:
            wanted_leaves.append(index)
            continue
        if key is root_key:
            wanted_outs.append(walk.root_slot)
            continue
        if out_at is None:
            out_at = {k.key: p << _SLOT_BITS | s
                      for p, n in enumerate(walk.nodes) for s, k in enumerate(n.primal_out_keys)}
        code = out_at.get(key.key)
        if code is not None:
            wanted_outs.append(code)
    wanted_leaves.sort()
    wanted_outs.sort()
    set_wanted(walk, wanted_leaves, wanted_outs, unit_seed)


def set_wanted(walk: Walk, wanted_leaves: list[int], wanted_outs: list[int], unit_seed: bool = False) -> None:
    """Complete ``walk.key`` with the wanted leaves' indices and node outputs' codes (sorted), and
    ``unit_seed``: the seed is the implicit one of a one-element output (``backward()``,
    ``grad(loss, x)``), so its step multiplies by no ones (``_unit_seed``)."""
    walk.wanted_leaves = wanted_leaves
    walk.wanted_outs = wanted_outs
    walk.unit_seed = unit_seed
    walk.key = (*walk.parts, unit_seed, tuple(wanted_leaves), tuple(wanted_outs))


def _producer(trace: Any, key: Any, position: dict[Any, int]) -> int:
    """Where the value ``key`` (made by ``trace``'s call) comes from: position << _SLOT_BITS | slot,
    ``position`` giving each node's."""
    if trace.__class__ is GroupTrace:
        group = trace.group
        if group.split_nodes is None:
            return position[group] << _SLOT_BITS | trace.index
        return position[group.split_nodes[trace.index]] << _SLOT_BITS
    producer = trace.node
    produced = producer.primal_out_keys
    return position[producer] << _SLOT_BITS | (0 if len(produced) == 1 else produced.index(key))


def backward(root_key: Any, root_trace: Any, seed: Tensor, wanted: Collection[Any] | None,
             retain_graph: bool, create_graph: bool = False, walked: Walk | None = None,
             unit_seed: bool = False) -> dict[Any, Tensor] | None:
    """The wanted cotangents of ``seed`` pushed back from ``root_key``; ``None`` when this pass
    needs the general ``try_backward``. ``walked``: ``structure(root_trace.node, ...)`` when the
    caller has it; ``unit_seed``: ``seed`` is the implicit one. Without ``retain_graph`` the
    walked nodes are released once their saved values are gathered, so each residual dies after
    its last reader in the program. With ``create_graph`` (grad mode on) the program binds on
    tensors and records the backward."""
    if root_trace is None or wanted is None or not programs.ENABLED:
        return None
    device = seed._device
    root = raw_node(root_trace)
    if walked is None or walked.nodes[0] is not root:
        walked = structure(root, root_key, device.type, create_graph)
        if walked is None:
            STATS["general"] += 1
            return None
    with_wanted(walked, root_key, wanted, unit_seed)
    # the seed's array as it is: ``_execute`` runs queued work writing it, as for the gathered values
    return run_walk(walked, seed if create_graph else seed._buf, device, retain_graph, create_graph)


def run_walk(walk: Walk, seed: Any, device: Any, retain_graph: bool, create_graph: bool) -> dict[Any, Tensor] | None:
    """The step of ``walk``'s key (built on a miss) run on this pass's saved values from ``seed``
    (a tensor with ``create_graph``, else its array); ``None`` where it cannot be built."""
    step = _steps.get(walk.key)
    if step is None:
        try:
            step = _build(walk, device.type, create_graph)
        except Exception:  # noqa: BLE001 - the general path raises the same error where it always does
            STATS["general"] += 1
            return None
        STATS["built"] += 1
        _steps[walk.key] = step
        if len(_steps) > MAX_STEPS:
            _steps.popitem(last=False)
    else:
        STATS["reused"] += 1
        _steps.move_to_end(walk.key)
    return _execute(step, walk, seed, device, retain_graph)


def _execute(step: Step, walk: Walk, seed: Any, device: Any, retain_graph: bool) -> dict[Any, Tensor]:
    nodes = walk.nodes
    on_tensors = step.on_tensors
    values = _gather(step, nodes, seed, on_tensors)
    # the step reads saved arrays as they are: queued work writing one runs first (on tensors,
    # each bind runs or queues in order); work nobody reads stays queued (``_lazy_results``).
    # A step of one loop is queued behind that work instead: the next flush runs both in one loop
    results = None
    if not on_tensors and deferred.PENDING and deferred.reads_pending(values):
        if step.queued is not None:
            result = deferred.queue_loop(step.queued, values)
            results = None if result is None else (result,)
        if results is None:
            deferred.flush()
    if not retain_graph:
        releases = step.releases
        for pos, node in enumerate(nodes):
            calls = releases.get(pos)  # the leaves that receive .grad stay (Note [release] in core/tape.py)
            if calls is None:
                node.release()
            elif calls:
                node.release_calls(calls)
    if results is None:
        fn = step.fn
        if device is CUDA and not on_tensors:
            fn = module("tidu.backends.cuda.graphs").runner(step)
        results = fn(values)
    totals = {}
    for (target, _, dtype), value in zip(step.results, results):
        key = walk.leaves[target] if type(target) is int else nodes[target[0]].primal_out_keys[target[1]]
        totals[key] = value if on_tensors else wrap(value, dtype, device)
    return totals


def _gather(step: Step, nodes: list[TraceNode], seed: Any, on_tensors: bool) -> list[Any]:
    """The program's inputs: the seed, then the saved values it reads, each version-checked:
    arrays, or with ``on_tensors`` the saved
    tensors themselves (a saved output unpacked with its key and trace), so that the bound
    backward joins the graph."""
    values = [seed]
    append = values.append
    for pos, reads, name in step.gathers:
        node = nodes[pos]
        saved = node.saved_data
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        comp = node.computation
        for is_output, index in reads:
            if comp is None:  # a group: saved by raw key
                key = (node.primal_out_keys[index] if is_output else node.input_edges[index][1]).key
            elif is_output:
                key = comp.output_keys()[index]
            else:
                key = node.input_edges[index][1]
            value = saved.get(key)
            cls = value.__class__
            if cls is SavedInput:
                tensor = value.tensor
                if tensor._version.value != value.version:
                    value.unpack(name)  # raises: modified by an in-place operation
                value = tensor if on_tensors else tensor._buf  # (queued work: ``_execute`` runs it)
            elif cls is SavedOutput and not on_tensors:
                if value.counter.value != value.version:
                    value.unpack(_maker(node, comp, is_output, index, name))  # raises
                value = value.data
            elif value is None:
                raise RuntimeError(
                    f"internal error: the backward of {name} reads a value its node did not save ({key!r})"
                )
            elif on_tensors:
                if cls is SavedOutput and value.counter.value != value.version:
                    value.unpack(_maker(node, comp, is_output, index, name))  # raises
                value = value.unpack(name)
                if comp is None and is_output:  # a value made in a group: its place in the graph
                    value._trace = GroupTrace(node, index)
            else:
                value = value.unpack(name)._buf
            append(value)
    return values


def _maker(node: TraceNode, comp: Any, is_output: bool, index: int, reader: str) -> str:
    """The name of the call that made a saved output: in a group, the value's own call (the
    gather is named by the first call that reads it); else the node's ``reader``."""
    return node.name(index) if comp is None and is_output else reader


class _Builder:
    """Emits a step's instructions over fresh slots (slot 0 is the seed), each with an
    ``Application`` that carries its avals (passes such as fusion read them); ``on_tensors``:
    each binds its primitive on tensors instead of calling the kernel."""

    def __init__(self, device: str, seed: Any, on_tensors: bool = False) -> None:
        self.device = device
        self.avals = [seed]  # slot -> ShapeDtype
        self.program: list[Instr] = []
        self.on_tensors = on_tensors

    def instr(self, app: Application, ins: Any, outs: Any) -> Instr:
        if self.on_tensors:
            return bind_instr(app, ins, outs)
        return impl_instr(app, ins, outs, self.device)

    def slot(self, aval: Any) -> int:
        self.avals.append(aval)
        return len(self.avals) - 1

    def emit(self, graph: Any, node: Any, env: dict[Any, int]) -> None:
        ins = [env[graph.values[i].key] for i in node.inputs]
        app = node.operation
        if app.in_avals is None:  # the engine's accumulation add: both operands have one aval
            app = self.accumulation(self.avals[ins[0]])
        outs = [self.slot(a) for a in app.out_avals]
        for o, s in zip(node.outputs, outs):
            env[graph.values[o].key] = s
        self.program.append(self.instr(app, ins, outs))

    def add(self, a: int, b: int) -> int:
        """A slot holding ``a + b`` (two cotangents of one value)."""
        total = self.slot(self.avals[a])
        app = self.accumulation(self.avals[a])
        if self.on_tensors:  # the general walk's ``add_operands``: ``+`` (promotes, broadcasts)
            self.program.append(Instr(operator.add, (a, b), (total,), app))
        else:
            self.program.append(impl_instr(app, (a, b), (total,), self.device))
        return total

    @staticmethod
    def accumulation(aval: Any) -> Application:
        return Application(accumulate_add().prim, (), (aval, aval), (aval,))


def bind_instr(app: Application, ins: Any, outs: Any, lazy: bool = False) -> Instr:
    """The instruction binding ``app``'s primitive on tensors (recorded when grad mode is on):
    through the short path its avals allow (``_short_bind``) when every operand is of the short
    paths' types, else through ``bind_eager``. ``lazy``: a product the step returns, queued on
    the host until something reads it (``dispatch.bind_product``)."""
    prim, params = app.prim, dict(app.params)
    short = _short_bind(app, params, lazy)

    def fn(*args: Tensor) -> Any:
        if short is not None:
            for a in args:
                if type(a) not in SHORT_PATH_TYPES:
                    break
            else:
                return short(args)
        return bind_eager(prim, args, params)

    return Instr(fn, tuple(ins), tuple(outs), app)


def _short_bind(app: Application, params: dict[str, Any], lazy: bool = False) -> Any:
    """``args -> outputs`` through a short path of ``core.dispatch`` for calls of ``app`` (its
    avals fixed by the step's key), or ``None``: ``bind_same`` for operands of one aval and no
    params, ``bind_product`` for a product of one non-bool dtype, ``bind_one`` for one operand.
    Each gives ``bind_eager``'s result; calls that move devices, make several outputs or have
    no kernel on their device (``bind_eager``'s error) take it."""
    prim, avals = app.prim, app.in_avals
    if prim.moves_device or not avals or len(app.out_avals) != 1 or avals[-1].device not in prim.impls:
        return None
    if not params and all(a == avals[0] for a in avals):
        return lambda args: bind_same(prim, args)
    if prim is dot_general_p and len(avals) == 2 and avals[0].dtype is avals[1].dtype is not bool_:
        return lambda args: bind_product(args[0], args[1], params, None, lazy)
    if len(avals) == 1:
        return lambda args: bind_one(prim, args[0], params)
    return None


def _build(walk: Walk, device: str, on_tensors: bool = False) -> Step:
    nodes = walk.nodes
    pos_of = {n: p for p, n in enumerate(nodes)}
    root = nodes[0]
    root_app = root.records[walk.root_slot][0] if root.__class__ is GroupNode else root.computation._op
    root_aval = root_app.out_avals[0 if root.__class__ is GroupNode else walk.root_slot]
    b = _Builder(device, root_aval, on_tensors)
    cts: dict[Any, int] = {(0, walk.root_slot): 0}  # leaf index or (position, output slot) -> slot
    dtypes: dict[Any, Any] = {(0, walk.root_slot): root_aval.dtype}
    gathers: list = []

    def send(target: Any, ct: int, dtype: Any) -> None:
        """Add the cotangent slot ``ct`` to ``target`` (a leaf index or (position, output slot))."""
        existing = cts.get(target)
        if existing is None:
            cts[target] = ct
            dtypes[target] = dtype
        else:
            cts[target] = b.add(existing, ct)

    group_slots: dict[int, dict] = {}  # position -> (a call's output?, call or edge index) -> residual slot
    order = _call_order(walk, pos_of)
    for pos, call in order:
        node = nodes[pos]
        if call >= 0:
            slots = group_slots.get(pos)
            if slots is None:
                slots = group_slots[pos] = {}
            _group_call_backward(b, pos, node, call, cts, dtypes, gathers, slots, send, walk.leaf_index, pos_of)
            continue
        out_cts = [cts.get((pos, s)) for s in range(len(node.primal_out_keys))]
        active = tuple(s for s, c in enumerate(out_cts) if c is not None)
        if not active:
            continue
        op = node.computation._op
        edges = node.input_edges
        reads: list = []

        def read(is_output: bool, index: int, op: Any = op, reads: list = reads) -> int:
            s = b.slot(op.out_avals[index] if is_output else op.in_avals[index])
            reads.append((is_output, index, s))
            return s

        name, in_cts = _call_backward(b, op, [k for _, k, _ in edges], [e[2] for e in edges], active,
                                      [out_cts[s] for s in active], read)
        gathers.append((pos, reads, name))
        for i, ct in in_cts:
            trace, key, _ = edges[i]
            send(_target(trace, key, walk.leaf_index, pos_of), ct, op.in_avals[i].dtype)
    targets: list[Any] = list(walk.wanted_leaves)
    targets += [(c >> _SLOT_BITS, c & ((1 << _SLOT_BITS) - 1)) for c in walk.wanted_outs]
    results = [(t, cts[t], dtypes[t]) for t in targets if t in cts]
    keep = {slot for _, slot, _ in results}
    program = _dead_code(b.program, keep)
    if walk.unit_seed:
        program = _dead_code(_unit_seed(program, keep), keep)
    if not on_tensors:  # binds on tensors are fused by the forward's deferral instead
        program = _optimize(program, keep, device)
    else:
        program = _lazy_results(_constants_once(program), keep)
    program = _with_frees(program, keep)
    # a value no instruction reads (no wanted gradient needs it) is neither gathered nor checked:
    # as in PyTorch and the general walk (``leading_to``), it cannot fail the pass
    read = {i for instr in program for i in instr.ins}
    inputs = [0] + [slot for _, reads, _ in gathers for _, _, slot in reads if slot in read]
    gathers = [(pos, used, name) for pos, reads, name in gathers
               if (used := tuple((is_output, index) for is_output, index, slot in reads if slot in read))]
    fn, source = _compile(program, inputs, [slot for _, slot, _ in results])
    step = Step(program, gathers, results, fn, source, on_tensors)
    step.releases = _releases(walk, order, pos_of)
    if not on_tensors:
        step.queued = _queued_loop(program, inputs, [slot for _, slot, _ in results])
    return step


def _queued_loop(program: list[Instr], inputs: list[int], results: list[int]) -> deferred.QueuedLoop | None:
    """A step that is one fused loop of one result, of parts the forward's queue takes
    (elementwise work on the result's shape, and constants), as queued work
    (``deferred.queue_loop``); ``None`` for any other step."""
    if len(program) != 1 or len(results) != 1:
        return None
    (loop,) = program
    if loop.app is not None or not loop.parts or loop.outs != (results[0],):
        return None
    run = loop.fn
    queued = deferred.QueuedLoop(lambda *arrays: run(*arrays)[0], loop.parts, loop.ins, results[0],
                                 [inputs.index(slot) for slot in loop.ins])
    shape = queued.out_avals[0].shape
    for part in loop.parts:
        app = part.app
        if app.out_avals[0].shape != shape or not (deferred.queueable(app) or not app.in_avals):
            return None
    return queued


def _call_backward(b: _Builder, op: Any, in_keys: list, requires_grad: list, active: tuple, out_cts: list,
                   read: Any) -> tuple[str, list[tuple[int, int]]]:
    """Emit the backward of one call of ``op`` (its cached program): ``out_cts`` are the slots of
    the cotangents of its ``active`` outputs; ``read(is_output, index)`` gives the slot of a
    residual it reads. Returns its name and (input position, cotangent slot) per input reached."""
    distinct, pattern = programs._distinct(in_keys)
    first = [pattern.index(i) for i in range(len(distinct))]
    active_in = tuple(i for i, e in enumerate(first) if requires_grad[e])
    prog = programs._program(op, active, pattern, active_in, None)
    linear = prog.linear.as_graph()
    name = operation_name(op)  # the call's, for its errors
    env: dict[Any, int] = {}
    for p, canon in enumerate(prog.in_keys):
        if canon in prog.reads:
            env[canon] = read(False, first[p])
    for o, canon in enumerate(prog.out_keys):
        if canon in prog.reads:
            env[canon] = read(True, o)
    for operation in linear.operations:
        if not (operation.role.is_linearized() and any(operation.role.active_mask)):
            b.emit(linear, operation, env)
    transposed = prog.transposed.as_graph()
    for (_, tid), ct in zip(prog.transposed.tangent_inputs, programs.active_seeds(prog, out_cts)):
        env[transposed.values[tid].key] = ct
    for operation in transposed.operations:
        b.emit(transposed, operation, env)
    in_cts = {raw: None if t is None else env[transposed.values[t].key]
              for (raw, _), t in zip(prog.linear.tangent_inputs, prog.transposed.tangent_outputs)}
    reached = []
    for i in active_in:
        ct = in_cts.get(prog.in_keys[i].key)
        if ct is not None:
            reached.append((first[i], ct))
    return name, reached


def _target(trace: Any, key: Any, leaf_index: dict, pos_of: dict) -> Any:
    """Where a cotangent for the value ``key`` (made by ``trace``'s call) accumulates."""
    if trace is None:
        return leaf_index[key.key]
    code = _producer(trace, key, pos_of)
    return (code >> _SLOT_BITS, code & ((1 << _SLOT_BITS) - 1))


def _releases(walk: Walk, order: list[tuple[int, int]], pos_of: dict) -> dict[int, frozenset]:
    """What a pass without ``retain_graph`` frees, as PyTorch's frees the nodes it runs: the calls
    (of ``order``, consumers first) on a path to a wanted key. By position: the calls of a group
    that frees only those (``GroupNode.release_calls``), an empty set for a node that frees
    nothing; a position not listed frees all it saved."""
    nodes = walk.nodes
    wanted_leaves = set(walk.wanted_leaves)
    wanted_outs = set(walk.wanted_outs)
    leaf_index = walk.leaf_index
    needed: set[tuple[int, int]] = set()

    def reaches(target: Any) -> bool:
        if type(target) is int:
            return target in wanted_leaves
        pos, slot = target
        if pos << _SLOT_BITS | slot in wanted_outs:
            return True
        return (pos, slot if nodes[pos].__class__ is GroupNode else -1) in needed

    for pos, call in reversed(order):  # producers first
        node = nodes[pos]
        if call >= 0:
            edges = node.input_edges
            inputs = [((pos, c), True) if c >= 0 else
                      (_target(edges[~c][0], edges[~c][1], leaf_index, pos_of), edges[~c][2])
                      for c in node.records[call][2]]
        else:
            inputs = [(_target(t, k, leaf_index, pos_of), r) for t, k, r in node.input_edges]
        if any(r and reaches(target) for target, r in inputs):
            needed.add((pos, call))
    releases: dict[int, frozenset] = {}
    for pos, node in enumerate(nodes):
        if node.__class__ is GroupNode:
            calls = frozenset(c for p, c in needed if p == pos)
            if len(calls) < len(node.records):
                releases[pos] = calls
        elif (pos, -1) not in needed:
            releases[pos] = frozenset()
    return releases


def _call_order(walk: Walk, pos_of: dict) -> list[tuple[int, int]]:
    """Every call of the walk, consumers first, as ``(position, call)``: call ``-1`` is a whole
    node, ``j >= 0`` a group's call ``j``. The order is the general walk's over the groups'
    calls (``topological_traces`` of the split graph), so cotangents are summed in its order
    and results agree bit for bit."""
    nodes = walk.nodes

    def unit(trace: Any) -> tuple[int, int]:
        if trace.__class__ is GroupTrace and trace.group.split_nodes is None:
            return pos_of[trace.group], trace.index
        return pos_of[raw_node(trace)], -1

    def producers(u: tuple[int, int]) -> list[tuple[int, int]]:
        pos, call = u
        node = nodes[pos]
        if call < 0:
            return [unit(t) for t, _, _ in node.input_edges if t is not None]
        edges = node.input_edges
        found = []
        for c in node.records[call][2]:
            if c >= 0:
                found.append((pos, c))
            elif edges[~c][0] is not None:
                found.append(unit(edges[~c][0]))
        return found

    root = (0, walk.root_slot if nodes[0].__class__ is GroupNode else -1)
    order: list[tuple[int, int]] = []
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[tuple[int, int], bool]] = [(root, False)]
    while stack:
        u, expanded = stack.pop()
        if expanded:
            order.append(u)
            continue
        if u in seen:
            continue
        seen.add(u)
        stack.append((u, True))
        for p in producers(u):
            if p not in seen:
                stack.append((p, False))
    order.reverse()
    return order


def _group_call_backward(b: _Builder, pos: int, group: GroupNode, j: int, cts: dict, dtypes: dict,
                         gathers: list, slots: dict, send: Any, leaf_index: dict, pos_of: dict) -> None:
    """Emit the backward of a group's call ``j``: its cotangent is ``cts[(pos, j)]``, what its
    consumers inside and outside the group sent it; ``slots`` are the group's residuals read so far."""
    ct = cts.get((pos, j))
    if ct is None:
        return
    records, edges = group.records, group.input_edges
    app, in_keys, codes, _, _ = records[j]
    reads: list = []

    def read(is_output: bool, index: int) -> int:
        code = j if is_output else codes[index]
        where = (True, code) if code >= 0 else (False, ~code)
        s = slots.get(where)
        if s is None:
            s = slots[where] = b.slot(records[code][0].out_avals[0] if code >= 0 else app.in_avals[index])
            reads.append((*where, s))
        return s

    name, in_cts = _call_backward(b, app, in_keys, [c >= 0 or edges[~c][2] for c in codes], (0,), [ct], read)
    if reads:
        gathers.append((pos, reads, name))
    for i, ct_in in in_cts:
        code = codes[i]
        if code >= 0:
            send((pos, code), ct_in, app.in_avals[i].dtype)
        else:
            trace, key, _ = edges[~code]
            send(_target(trace, key, leaf_index, pos_of), ct_in, app.in_avals[i].dtype)


def _dead_code(program: list[Instr], keep: set[int]) -> list[Instr]:
    """Drop instructions none of whose outputs reach a result."""
    live = set(keep)
    kept = []
    for instr in reversed(program):
        if any(o in live for o in instr.outs):
            kept.append(instr)
            live.update(instr.ins)
    kept.reverse()
    return kept


def _unit_seed(program: list[Instr], keep: set[int]) -> list[Instr]:
    """``program`` (seeded at slot 0 with the implicit one) without its products by that one: a
    ``mul`` of a value by the seed broadcast (``sum``'s cotangent, as ``tanh(x).sum()``'s backward
    makes ``ones * (1 - t * t)``) reads the value itself. Exact (``1 * x == x``), and a pass that
    records (``create_graph``) binds two ops fewer. Only where every reader of the product makes
    a new array (an elementwise op, a product), so no result is a saved value's storage.

    >>> import tidu
    >>> from tidu.core.instructions import impl_instr
    >>> from tidu.core.primitive import Application
    >>> from tidu.primitives import elementwise as ew, structural
    >>> one, v = tidu.ShapeDtype((), tidu.float32), tidu.ShapeDtype((3,), tidu.float32)
    >>> spread = Application(structural.broadcast_in_dim, (("broadcast_dimensions", ()), ("shape", (3,))), (one,))
    >>> program = [impl_instr(spread, [0], [2]), impl_instr(Application(ew.mul, (), (v, v)), [2, 1], [3]),
    ...            impl_instr(Application(ew.tanh, (), (v,)), [3], [4])]
    >>> [(i.app.name.split("[")[0], i.ins) for i in _dead_code(_unit_seed(program, {4}), {4})]
    [('tanh', (1,))]
    """
    ones = {0}
    readers: dict[int, list[Instr]] = {}
    for instr in program:
        for i in instr.ins:
            readers.setdefault(i, []).append(instr)
    alias: dict[int, int] = {}
    out = []
    for instr in program:
        ins = tuple([alias.get(i, i) for i in instr.ins])
        app = instr.app
        name = None if app is None else app.prim.name
        if name == "broadcast_in_dim" and ins[0] in ones:
            ones.add(instr.outs[0])
        elif name == "mul" and len(instr.outs) == 1 and instr.outs[0] not in keep and (ins[0] in ones) != (ins[1] in ones):
            other = 1 if ins[0] in ones else 0
            if app.in_avals[other] == app.out_avals[0] and all(map(_fresh_reader, readers.get(instr.outs[0], ()))):
                alias[instr.outs[0]] = ins[other]
                continue
        out.append(instr if ins == instr.ins else instr._replace(ins=ins))
    return out


def _fresh_reader(instr: Instr) -> bool:
    """Whether ``instr`` makes a new array from its inputs (never returns one of them)."""
    app = instr.app
    return app is not None and (app.prim is dot_general_p or fusion._kind(instr) == "fn")


def _optimize(program: list[Instr], keep: set[int], device: str) -> list[Instr]:
    """The finished program before slots are freed: transposed products made in their result's
    layout, then its elementwise chains fused into generated kernels (Numba loops on the CPU,
    numba.cuda kernels on the GPU; ``TIDU_FUSION=0`` turns this off), and on the CPU the stacks
    of the sums of small products written in place by the loops that make their parts
    (``backends.stacking``); ``keep`` are the result slots, read after the run."""
    program = _transposed_products(program, keep, device)
    if device != "cpu":
        return fusion.fuse(program, keep)
    return stacks_in_place(fusion.fuse(_shared_transposed_operands(program), keep), keep)


def _transposed_products(program: list[Instr], keep: set[int], device: str) -> list[Instr]:
    """``transpose(dot_general(a, b))`` of a product with one free dim per operand (no batch)
    becomes ``dot_general(b, a)``: the same matrix, made in the transposed layout instead of
    viewed so (the gradient of a weight used as ``w.t()``, which ``.grad`` would copy)."""
    readers: dict[int, int] = {}
    for instr in program:
        for i in instr.ins:
            readers[i] = readers.get(i, 0) + 1
    made = {instr.outs[0]: k for k, instr in enumerate(program) if len(instr.outs) == 1}
    swapped: dict[int, Instr] = {}  # a product's position -> its swapped instruction
    dropped: set[int] = set()
    for k, instr in enumerate(program):
        app = instr.app
        if app is None or app.prim is not transpose_p or dict(app.params)["permutation"] != (1, 0):
            continue
        (src,) = instr.ins
        d = made.get(src)
        if d is None or src in keep or readers.get(src) != 1 or d in swapped:
            continue
        product = program[d].app
        if product is None or product.prim is not dot_general_p:
            continue
        (ca, cb), (ba, bb) = dict(product.params)["dimension_numbers"]
        a, b = product.in_avals
        if ba or bb or len(a.shape) - len(ca) != 1 or len(b.shape) - len(cb) != 1:
            continue
        flipped = Application(dot_general_p, (("dimension_numbers", ((cb, ca), ((), ()))),), (b, a), app.out_avals)
        swapped[d] = impl_instr(flipped, program[d].ins[::-1], instr.outs, device)
        dropped.add(k)
    if not swapped:
        return program
    return [swapped.get(k, instr) for k, instr in enumerate(program) if k not in dropped]


def _shared_transposed_operands(program: list[Instr]) -> list[Instr]:
    """A matrix that several 2-D products read transposed as their right operand (``ct @ w.T``
    for every step of a recurrent loop) is transposed into a C-contiguous copy once, and the
    products read the copy: OpenBLAS runs ``a @ b.T`` at about half the rate of ``a @ b`` when
    ``a`` has few rows (32 x 128 @ 128 x 128: 19 against 10 us), and one transposed copy costs
    about one such product. The pass finds a matrix only where it is one slot: a group
    (core/groups.py) saves it once for all its calls; one node per call gathers it into a slot
    per node."""
    readers: dict[int, list[int]] = {}
    for k, instr in enumerate(program):
        app = instr.app
        if app is not None and app.prim is dot_general_p and _reads_right_transposed(app):
            readers.setdefault(instr.ins[1], []).append(k)
    shared = {slot: ks for slot, ks in readers.items() if len(ks) >= 2}
    if not shared:
        return program
    fresh = 1 + max(s for instr in program for s in (*instr.ins, *instr.outs))
    copies: dict[int, Instr] = {}  # the first reader's position -> the copy made before it
    rewritten: dict[int, Instr] = {}
    for slot, ks in shared.items():
        b = program[ks[0]].app.in_avals[1]
        copy_aval = b._replace(shape=b.shape[::-1])
        copy_app = Application(transpose_p, (("permutation", (1, 0)),), (b,), (copy_aval,))
        copies[ks[0]] = Instr(_transposed_copy, (slot,), (fresh,), copy_app)
        for k in ks:
            instr = program[k]
            app = instr.app
            product = Application(dot_general_p, (("dimension_numbers", (((1,), (0,)), ((), ()))),),
                                  (app.in_avals[0], copy_aval), app.out_avals)
            rewritten[k] = impl_instr(product, (instr.ins[0], fresh), instr.outs)
        fresh += 1
    out = []
    for k, instr in enumerate(program):
        if k in copies:
            out.append(copies[k])
        out.append(rewritten.get(k, instr))
    return out


def _reads_right_transposed(app: Application) -> bool:
    """Whether the product ``app`` is a 2-D ``a @ b.T`` (no batch dims)."""
    a, b = app.in_avals
    return (len(a.shape) == len(b.shape) == 2
            and dict(app.params)["dimension_numbers"] == (((1,), (1,)), ((), ())))


def _transposed_copy(b: Any) -> Any:
    return b.T.copy()


def _constants_once(program: list[Instr]) -> list[Instr]:
    """A bound program's constants (a rule's ``full``, as in ``1 - y * y``) are made once, when
    the step is built, and each pass reuses the tensor: binds never write their inputs."""
    out = []
    for instr in program:
        if not instr.ins and instr.app is not None and instr.app.prim is full_p:
            with grad_mode.no_grad():
                value = instr.fn()
            instr = instr._replace(fn=lambda value=value: value)
        out.append(instr)
    return out


def _lazy_results(program: list[Instr], keep: set[int]) -> list[Instr]:
    """A bound program whose results (the gradients ``keep``) are products binds those lazily:
    on the host each is queued until something reads it, so a gradient taken only to be
    differentiated again (a Hessian-vector product's ``g``) costs no product."""
    return [bind_instr(instr.app, instr.ins, instr.outs, lazy=True)
            if instr.outs[0] in keep and instr.app is not None and instr.app.prim is dot_general_p else instr
            for instr in program]


def _with_frees(program: list[Instr], keep: set[int]) -> list[Instr]:
    """Each slot is freed right after its last reader (or its writer, if nothing reads it)."""
    last: dict[int, int] = {}
    for n, instr in enumerate(program):
        for o in instr.outs:
            last[o] = n
        for i in instr.ins:
            last[i] = n
    frees: list[list[int]] = [[] for _ in program]
    for slot, n in last.items():
        if slot not in keep:
            frees[n].append(slot)
    return [instr._replace(free=tuple(sorted(f))) if f else instr for instr, f in zip(program, frees)]


def _compile(program: list[Instr], inputs: list[int], results: list[int]) -> tuple[Any, str]:
    """``program`` as one straight-line Python function over local variables (``v<slot>``):
    no interpreter loop, and ``del`` drops each value after its last reader."""
    names: dict[str, Any] = {}
    lines = ["def step(s):", f"    {''.join(f'v{i}, ' for i in inputs)}= s", "    s.clear()"]
    for n, instr in enumerate(program):
        names[f"f{n}"] = instr.fn
        what = instr.app.name if instr.app is not None else "fused" if instr.parts else "allocation"
        lines.append(f"    # {what}")
        call = f"f{n}({', '.join(f'v{i}' for i in instr.ins)})"
        if len(instr.outs) == 1:
            out = f"v{instr.outs[0]}"
            lines.append(f"    {out} = {call}")
            lines.append(f"    if {out}.__class__ is tuple: {out} = {out}[0]")
        else:
            lines.append(f"    {''.join(f'v{o}, ' for o in instr.outs)}= {call}")
        if instr.free:
            lines.append(f"    del {', '.join(f'v{i}' for i in instr.free)}")
    lines.append(f"    return ({''.join(f'v{i}, ' for i in results)})")
    source = "\n".join(lines)
    exec(compile(source, "<tidu backward step>", "exec"), names)  # noqa: S102 - generated from slots
    return names["step"], source
