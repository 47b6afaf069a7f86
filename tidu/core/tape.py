"""The tensor layer's tape: its ``Recorder`` (``TensorRecorder``) and what a node saves.

Inputs are saved as the tensors themselves (their data, key and trace give
higher-order gradients); outputs as their array plus a weak reference to the
node, so a tensor never keeps itself alive through its own trace. Each saved
value remembers its storage's version and refuses to be used once an
in-place operation has changed it. A backward without ``retain_graph`` releases
the nodes it walked: Note [release], below.
"""

from __future__ import annotations

import gc
import weakref
from typing import Any

from ..ad import ValueKey
from ..eager import FREED_MESSAGE, CountingKeySource, Recorder, ReleasedValues, Trace, TraceNode
from ..eager.trace import operation_name
from .imports import module


class TapeNode(TraceNode):
    """A node the tensor layer builds itself (``core.dispatch._record``), with no weak reference
    from the recorder: ``TensorRecorder.live_nodes`` finds these through the garbage collector."""

    __slots__ = ()

    def release(self) -> None:
        """Free the saved values but keep the leaves that receive ``.grad`` (Note [release])."""
        saved = self.saved_data
        if saved is not None:
            self.saved_data = release_saved(saved)


class TensorRecorder(Recorder):
    """The tensor layer's recorder: its live nodes are those it recorded (``record_graph``,
    listed through weak references) and the ``TapeNode``s still alive, in recording order
    (grouped calls split into theirs)."""

    def record_graph(self, *args: Any, **kwargs: Any) -> Any:
        from .groups import close

        close()  # a group never reads what this node produces
        return super().record_graph(*args, **kwargs)

    def live_nodes(self) -> list[TraceNode]:
        from .groups import split_all

        split_all()
        nodes = super().live_nodes()
        nodes += [o for o in gc.get_objects() if type(o) is TapeNode]
        nodes.sort(key=_recorded_at)
        return nodes


def _recorded_at(node: TraceNode) -> int:
    return node.primal_out_keys[0].key if node.primal_out_keys else -1  # keys count up


_keys = CountingKeySource()
RECORDER = TensorRecorder(_keys)


def current_recorder() -> Recorder:
    """The ``Recorder`` tensor operations are recorded on; ``print`` it to see live nodes."""
    return RECORDER


_Input = ValueKey.Input
_count = _keys.counter


def fresh_key() -> ValueKey:
    """A new input key, numbered after every earlier one."""
    key = _new(_Input)  # ``_Input(_count())`` without its call: every recorded output takes one
    key.key = key._hash = _count()
    return key


_new = object.__new__


def _modified(tensor: Any, expected: int, role: str) -> RuntimeError:
    shape = list(tensor._buf.shape)
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: [{tensor.dtype.name} tensor of shape {shape}], which is {role}, is at version "
        f"{tensor._version.value}; expected version {expected} instead."
    )


class SavedInput:
    """A saved input tensor and the version its storage had when saved."""

    __slots__ = ("tensor", "version")

    def __init__(self, tensor: Any) -> None:
        self.tensor = tensor
        self.version = tensor._version.value

    def unpack(self, node_name: str) -> Any:
        if self.tensor._version.value != self.version:
            raise _modified(self.tensor, self.version, f"an input of {node_name}")
        return self.tensor

    def keep_original(self) -> None:
        """The in-place op that recorded this node is about to overwrite the saved storage:
        keep the original value (PyTorch's ``original_self``), with the same graph position."""
        from ..tensor import Tensor, VersionCounter

        old = self.tensor
        counter = VersionCounter()
        counter.value = self.version
        copy = Tensor(old._data.copy(), old._dtype, _version=counter, device=old._device)
        copy._requires_grad, copy._key, copy._trace = old._requires_grad, old._key, old._trace
        self.tensor = copy


class SavedOutput:
    """A saved output: its array, key and version; the tensor is rebuilt on use."""

    __slots__ = ("data", "dtype", "device", "key", "counter", "version", "node")

    def __init__(self, tensor: Any, key: Any = None, node: weakref.ref | None = None) -> None:
        self.data = tensor._buf  # deferred work may still be writing it: read at unpack
        self.dtype = tensor._dtype
        self.device = tensor._device
        self.key = key
        self.counter = counter = tensor._version
        self.version = counter.value
        self.node = node

    def keep_original(self) -> None:
        """``SavedInput.keep_original`` for a saved output (of a group's call): its array is copied
        before the in-place op that recorded the reader overwrites the storage."""
        from ..tensor import VersionCounter
        from .deferred import flush

        flush()  # the array may be a queued result
        counter = VersionCounter()
        counter.value = self.version
        self.data = self.data.copy()
        self.counter = counter

    def unpack(self, node_name: str) -> Any:
        tensor = module("tidu.tensor").Tensor  # (tensor imports this module)
        if self.counter.value != self.version:
            t = tensor(self.data, self.dtype, _version=self.counter, device=self.device)
            maker = self.node() if self.node is not None else None  # the call that made it, once split
            op = getattr(getattr(maker, "computation", None), "_op", None)
            raise _modified(t, self.version, f"output of {node_name if op is None else operation_name(op)}")
        t = tensor(self.data, self.dtype, _version=self.counter, device=self.device)
        t._requires_grad = True
        t._key = self.key
        node = self.node() if self.node is not None else None
        t._trace = Trace(node) if node is not None else None
        return t


class Packed:
    """A saved value passed through a ``saved_tensors_hooks`` pack hook at record time
    (``autograd.graph``): ``unpack`` gives the unpack hook's tensor, in the saved value's place
    in the graph, and checks no version (PyTorch's too). The values one node packed unpack
    together, in packing order, when the backward reads the first (``bundle``). ``tensor`` is
    the original when it is a leaf that requires grad (backward finds it there)."""

    __slots__ = ("packed", "unpack_hook", "tensor", "requires_grad", "key", "trace", "node", "bundle", "result")

    def __init__(self, packed: Any, unpack_hook: Any, original: Any, key: Any, trace: Any, node: Any) -> None:
        self.packed = packed
        self.unpack_hook = unpack_hook
        leaf = original._trace is None and original._requires_grad
        self.tensor = original if leaf else None
        self.requires_grad = original._requires_grad
        self.key = key
        self.trace = trace  # an input's producer (kept, as a saved input keeps it), or None
        self.node = node  # an output's node (a weak reference), or None
        self.bundle: list[Packed] = [self]
        self.result: Any = None

    def unpack(self, node_name: str) -> Any:
        if self.result is None:
            for value in self.bundle:
                value.result = value._call_hook()
        result, self.result = self.result, None
        return result

    def _call_hook(self) -> Any:
        from ..tensor import Tensor

        t = self.unpack_hook(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        leaf = self.tensor
        if leaf is not None:
            from .grad_mode import is_grad_enabled

            if is_grad_enabled():  # a recorded backward: the value, connected to the leaf that gets .grad
                return t.detach() + (leaf - leaf.detach())
        out = Tensor(t._buf, t._dtype, _version=t._version, device=t._device)
        out._requires_grad = self.requires_grad
        out._key = self.key
        if self.node is not None:
            node = self.node()
            out._trace = Trace(node) if node is not None else None
        else:
            out._trace = self.trace
        return out


# Note [release]
# A backward without ``retain_graph`` releases the nodes it walked (``TapeNode.release``,
# ``GroupNode.release``; the compiled backward once it has gathered their values). As in
# PyTorch, release frees every saved value, the leaves a node's rules read included, but not
# the node's edges to the leaves that receive ``.grad``: a leaf that requires grad is saved
# (``dispatch._saving_plan``) so that ``backward`` can find it, and release keeps it for that
# (``Freed(leaf)``, which raises when read, as a freed saved leaf does). It also keeps the constants that stand for a
# number PyTorch's backward holds as a number (``KEPT``: ``mean``'s element count, ``add``'s
# alpha); a Python number passed as an operand (``x * 2``) is saved by PyTorch as a tensor and
# freed, and so here. The released node's ``saved_data`` becomes ``ReleasedValues``, with the
# same keys, so nothing on the recording path changes: a later backward runs as long as its
# program reads no freed value (``(x + 1).sum()`` or ``x.mean()`` twice), and raises PyTorch's
# message when it does (``(x * x).sum()``, ``(x * 2).sum()``, ``x.exp().sum()``).


class Freed:
    """A saved value that release freed (Note [release]): unpacking it raises PyTorch's
    message. ``tensor`` is the leaf that requires grad it was, kept to receive ``.grad``
    (``None`` for any other value: the shared ``FREED``)."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Any = None) -> None:
        self.tensor = tensor

    def unpack(self, node_name: str) -> Any:
        raise RuntimeError(FREED_MESSAGE)


FREED = Freed()

# Constants that stand for a number PyTorch's backward holds as a number (``mean``'s count,
# ``add``'s alpha; ``ops._operands.kept_constant`` makes them), by id: release keeps them.
KEPT: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()


def release_saved(saved: dict) -> ReleasedValues:
    """A node's saved values once released (Note [release]): each freed but the leaves that
    require grad, kept in their ``Freed`` marker, and the ``KEPT`` constants, kept as saved.
    Releasing twice gives the same."""
    released = ReleasedValues()
    for key, value in saved.items():
        cls = value.__class__
        if cls is SavedInput:
            t = value.tensor
            if t._trace is None:
                if t._requires_grad:
                    value = Freed(t)
                else:
                    kept = KEPT.data.get(id(t))  # (``KEPT.get`` is Python-level)
                    if kept is None or kept() is not t:
                        value = FREED
            else:
                value = FREED
        elif cls is Packed:
            value = FREED if value.tensor is None else Freed(value.tensor)
        elif cls is not Freed:
            value = FREED
        released[key] = value
    return released
