"""Pytrees of tensors: nested tuples, lists and dicts flattened to a list of leaves.

A leaf is anything that is not a tuple, list or dict (a tensor, a number,
``None``). ``unflatten(spec, leaves)`` rebuilds the container; dicts keep
their insertion order, as ``torch.utils._pytree`` does.

>>> leaves, spec = flatten({"a": (1, 2), "b": [3]})
>>> leaves
[1, 2, 3]
>>> unflatten(spec, [x * 10 for x in leaves])
{'a': (10, 20), 'b': [30]}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

LEAF = None


def flatten(tree: Any) -> tuple[list[Any], Any]:
    """The leaves of ``tree`` (depth first) and the spec to rebuild it."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> Any:
    if isinstance(tree, tuple | list):
        return (type(tree), [_flatten(t, leaves) for t in tree])
    if isinstance(tree, dict):
        return (dict, list(tree), [_flatten(v, leaves) for v in tree.values()])
    leaves.append(tree)
    return LEAF


def unflatten(spec: Any, leaves: list[Any]) -> Any:
    it = iter(leaves)
    return _build(spec, it)


def _build(spec: Any, it: Any) -> Any:
    if spec is LEAF:
        return next(it)
    if spec[0] is dict:
        return {k: _build(s, it) for k, s in zip(spec[1], spec[2])}
    items = [_build(s, it) for s in spec[1]]
    if spec[0] is list:
        return items
    return tuple(items) if spec[0] is tuple else spec[0](*items)  # a namedtuple


def tree_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    leaves, spec = flatten(tree)
    return unflatten(spec, [fn(x) for x in leaves])


def broadcast_prefix(prefix: Any, tree: Any, what: str) -> list[Any]:
    """One entry of ``prefix`` per leaf of ``tree``; a leaf of ``prefix`` covers a whole subtree.

    >>> broadcast_prefix((0, None), ((1, 2), 3), "in_dims")
    [0, 0, None]
    """
    out: list[Any] = []
    _prefix(prefix, tree, what, out)
    return out


def _prefix(prefix: Any, tree: Any, what: str, out: list[Any]) -> None:
    if not isinstance(prefix, tuple | list | dict):
        out.extend([prefix] * len(flatten(tree)[0]))
        return
    if isinstance(prefix, dict):
        if not isinstance(tree, dict) or list(prefix) != list(tree):
            raise ValueError(f"{what}: the structure {prefix!r} does not match the inputs' structure")
        for k in prefix:
            _prefix(prefix[k], tree[k], what, out)
        return
    if not isinstance(tree, tuple | list) or len(prefix) != len(tree):
        raise ValueError(
            f"{what}: expected {what} to match the structure of the inputs; got {what}={prefix!r} "
            f"for {len(tree) if isinstance(tree, tuple | list) else 1} input(s)"
        )
    for p, t in zip(prefix, tree):
        _prefix(p, t, what, out)
