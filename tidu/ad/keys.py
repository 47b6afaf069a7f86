"""Value identity: keys, roles and rule operands (tidu-rs / computegraph names).

Rust enums become small classes whose variants read the same:
``ValueKey.Input(key)``, ``ValueKey.Derived(operation, output_slot)``,
``OperationRole.Primary``, ``OperationRole.Linearized(active_mask)``,
``PrimitiveValue.Local(id)``, ``PrimitiveValue.External(key)``.
Keys are immutable and hash by value; a derived key's hash is computed once.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

LocalValueId = int
LocalOperationId = int
DiffPassId = int

MAX_PASS: DiffPassId = 2**64 - 1


class TangentKey:
    """The default ``ADKey.tangent_of`` result for input keys without one."""

    __slots__ = ("of", "pass_id", "_hash")

    def __init__(self, of: Hashable, pass_id: DiffPassId) -> None:
        self.of = of
        self.pass_id = pass_id
        self._hash = hash(("tangent", of, pass_id))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TangentKey)
            and self._hash == other._hash
            and self.pass_id == other.pass_id
            and self.of == other.of
        )

    def tangent_of(self, pass_id: DiffPassId) -> TangentKey:
        return TangentKey(self, pass_id)

    def __repr__(self) -> str:
        if self.pass_id > MAX_PASS - 2**16:  # a cotangent seed of linear_transpose
            return f"ct{MAX_PASS - self.pass_id}({self.of!r})"
        return f"d{self.pass_id}({self.of!r})"


def tangent_of(key: Hashable, pass_id: DiffPassId) -> Hashable:
    """``ADKey.tangent_of``: the key's own method when it has one, else a ``TangentKey``."""
    method = getattr(key, "tangent_of", None)
    if method is not None:
        return method(pass_id)
    return TangentKey(key, pass_id)


class OperationRole:
    """``OperationRole.Primary`` or ``OperationRole.Linearized(active_mask)``."""

    __slots__ = ()
    Primary: OperationRole
    Linearized: type

    def is_linearized(self) -> bool:
        return False


class _Primary(OperationRole):
    __slots__ = ()

    def __repr__(self) -> str:
        return "OperationRole.Primary"

    def __reduce__(self) -> str:
        return "Primary"


class _Linearized(OperationRole):
    __slots__ = ("active_mask", "_hash")

    def __init__(self, active_mask: tuple[bool, ...] | list[bool]) -> None:
        self.active_mask = tuple(bool(b) for b in active_mask)
        self._hash = hash(("linearized", self.active_mask))

    def is_linearized(self) -> bool:
        return True

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Linearized) and self.active_mask == other.active_mask

    def __repr__(self) -> str:
        return f"OperationRole.Linearized(active_mask={list(self.active_mask)})"


OperationRole.Primary = _Primary()
OperationRole.Linearized = _Linearized


class OperationKey:
    """Global identity of one operation application: ``(op, inputs, role)``."""

    __slots__ = ("op", "inputs", "role", "_hash")

    def __init__(self, op: Any, inputs: tuple[ValueKey, ...], role: OperationRole) -> None:
        self.op = op
        self.inputs = tuple(inputs)
        self.role = role
        self._hash = hash((op, self.inputs, role))

    def operation(self) -> Any:
        return self.op

    def fingerprint(self) -> int:
        return self._hash

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return (
            isinstance(other, OperationKey)
            and self._hash == other._hash
            and self.op == other.op
            and self.role == other.role
            and self.inputs == other.inputs
        )

    def __repr__(self) -> str:
        return f"OperationKey({self.op!r}, {list(self.inputs)!r}, {self.role!r})"


class ValueKey:
    """``ValueKey.Input(key)`` (a graph input) or ``ValueKey.Derived(operation, output_slot)``."""

    __slots__ = ()
    Input: type
    Derived: type

    def is_input(self) -> bool:
        return False


class _Input(ValueKey):
    __slots__ = ("key", "_hash")

    def __init__(self, key: Hashable) -> None:
        self.key = key
        self._hash = hash(key)  # an int key is its own hash (``core.tape.fresh_key`` relies on it)

    def is_input(self) -> bool:
        return True

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, _Input) and self._hash == other._hash and self.key == other.key
        )

    def __repr__(self) -> str:
        return f"Input({self.key!r})"


class _Derived(ValueKey):
    __slots__ = ("operation", "output_slot", "_hash")

    def __init__(self, operation: OperationKey, output_slot: int) -> None:
        self.operation = operation
        self.output_slot = output_slot
        self._hash = hash((operation._hash, output_slot))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, _Derived)
            and self._hash == other._hash
            and self.output_slot == other.output_slot
            and self.operation == other.operation
        )

    def __repr__(self) -> str:
        return f"Derived({self.operation.op}, slot={self.output_slot})"


ValueKey.Input = _Input
ValueKey.Derived = _Derived


class PrimitiveValue:
    """A rule operand: ``PrimitiveValue.Local(id)`` or ``PrimitiveValue.External(key)``.

    ``Local`` names a value the rule's builder made; ``External`` a value of the
    source graph (a primal input or output). computegraph's ``ValueRef`` is the
    same type.
    """

    __slots__ = ()
    Local: type
    External: type

    def is_local(self) -> bool:
        return False


class _Local(PrimitiveValue):
    __slots__ = ("id",)

    def __init__(self, id: LocalValueId) -> None:  # noqa: A002 - tidu-rs's field name
        self.id = id

    def is_local(self) -> bool:
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Local) and self.id == other.id

    def __hash__(self) -> int:
        return hash(("local", self.id))

    def __repr__(self) -> str:
        return f"Local({self.id})"


class _External(PrimitiveValue):
    __slots__ = ("key",)

    def __init__(self, key: ValueKey) -> None:
        self.key = key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _External) and self.key == other.key

    def __hash__(self) -> int:
        return hash(("external", self.key))

    def __repr__(self) -> str:
        return f"External({self.key!r})"


PrimitiveValue.Local = _Local
PrimitiveValue.External = _External
ValueRef = PrimitiveValue
