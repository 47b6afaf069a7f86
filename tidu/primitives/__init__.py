"""Every tensor primitive, declared once: kernels, shape rule, JVP and transpose.

Importing this package registers each family in ``tidu.core.primitive.REGISTRY``.
"""

from ..core.primitive import REGISTRY
from . import creation, elementwise, gather, linalg, reduce, slicing, structural

__all__ = ["REGISTRY", "creation", "elementwise", "gather", "linalg", "reduce", "slicing", "structural", "table"]

from . import (  # noqa: E402,F401 - one line per added family
    conv,
    decompositions,
    nn,
    scan,
    special,
    strided,
    transfer,  # noqa: E402,F401
)


def table() -> str:
    """A markdown table of every primitive: kernels, rules and where it is declared.

    ``docs/primitives.md`` is this table (a test keeps it current).

    >>> "| add |" in table()
    True
    """
    rows = [
        "| primitive | kernels | shape rule | JVP | transpose | declared at |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name in sorted(REGISTRY):
        prim = REGISTRY[name]
        if prim.where.startswith("tests") or name.startswith(("doc_", "test_")):  # a test's, declared in a function
            continue
        jvp = "not differentiable" if prim.nondiff else ("yes" if prim.jvp_rules else "**missing**")
        linear = "yes" if prim.transpose else "-"
        kernels = ", ".join(sorted(prim.impls)) or "**none**"
        shape = "yes" if prim.abstract_eval else "**missing**"
        rows.append(f"| {name} | {kernels} | {shape} | {jvp} | {linear} | `{prim.where.rsplit(':', 1)[0]}` |")
    return "\n".join(rows)
