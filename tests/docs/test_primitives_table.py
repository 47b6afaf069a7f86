"""docs/primitives.md is the generated table of primitives, kept current."""

from pathlib import Path

import tidu

DOC = Path(__file__).resolve().parents[2] / "docs" / "primitives.md"


def test_primitives_doc_is_current():
    text = DOC.read_text()
    assert tidu.primitives.table() in text, (
        "docs/primitives.md is stale; regenerate it with tidu.primitives.table()"
    )


def test_every_primitive_is_complete():
    for name, prim in tidu.core.primitive.REGISTRY.items():
        if name.startswith(("doc_", "test_")):
            continue
        assert prim.impls.get("cpu"), f"{name} has no cpu kernel"
        assert prim.abstract_eval is not None, f"{name} has no shape rule"
        assert prim.nondiff or prim.jvp_rules, f"{name} has no JVP rule and is not marked nondiff"
