"""Code blocks in docs/ marked ``<!-- snippet-source: FILE#NAME -->`` equal the marked region of FILE.

In FILE the region is the lines between ``# [START NAME]`` and ``# [END NAME]``, without
nested marker lines, dedented. This keeps the tutorials true to the examples that the
tests run (tidu-rs's snippet-source convention).
"""

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").rglob("*.md"))
SOURCE = re.compile(r"<!--\s*snippet-source:\s*(\S+?)#(\S+)\s*-->")
MARKER = re.compile(r"^\s*# \[(START|END) ([\w.-]+)\]\s*$")


def snippets(doc: Path):
    """(line number, source path, region name, code block text) for each marked block."""
    lines = doc.read_text().splitlines()
    found = []
    for number, line in enumerate(lines):
        match = SOURCE.search(line)
        if not match:
            continue
        start = number + 1
        while start < len(lines) and not lines[start].strip():
            start += 1
        assert start < len(lines) and lines[start].startswith("```"), (
            f"{doc.relative_to(ROOT)}:{number + 1}: snippet-source must be followed by a code block"
        )
        end = start + 1
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        assert end < len(lines), f"{doc.relative_to(ROOT)}:{start + 1}: unclosed code block"
        found.append((number + 1, match.group(1), match.group(2), "\n".join(lines[start + 1 : end])))
    return found


def region(path: Path, name: str) -> str:
    lines = path.read_text().splitlines()
    starts = [i for i, line in enumerate(lines) if re.match(rf"^\s*# \[START {re.escape(name)}\]\s*$", line)]
    ends = [i for i, line in enumerate(lines) if re.match(rf"^\s*# \[END {re.escape(name)}\]\s*$", line)]
    assert len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0], f"{path}: bad markers for {name!r}"
    body = [line for line in lines[starts[0] + 1 : ends[0]] if not MARKER.match(line)]
    return normalize("\n".join(body))


def normalize(text: str) -> str:
    return textwrap.dedent("\n".join(line.rstrip() for line in text.splitlines())).strip("\n")


ALL = [(doc, *s) for doc in DOCS for s in snippets(doc)]


def test_the_tutorials_have_snippets():
    names = {(doc.name, source) for doc, _, source, _, _ in ALL}
    assert ("eager_reverse_mode.md", "examples/eager_reverse_mode.py") in names
    assert ("primitive_linearization.md", "examples/primitive_linearization.py") in names


@pytest.mark.parametrize(
    ("doc", "line", "source", "name", "code"),
    ALL,
    ids=[f"{doc.relative_to(ROOT / 'docs')}:{line}:{name}" for doc, line, _, name, _ in ALL],
)
def test_snippet_matches_its_source(doc, line, source, name, code):
    path = ROOT / source
    assert path.is_file(), f"{doc.relative_to(ROOT)}:{line}: no such file {source}"
    assert normalize(code) == region(path, name), (
        f"{doc.relative_to(ROOT)}:{line}: the block differs from {source}#{name}; copy the region again"
    )


@pytest.mark.parametrize("doc", [d for d in DOCS if "tutorials" in d.parts], ids=lambda d: d.name)
def test_every_python_block_in_a_tutorial_has_a_source(doc):
    lines = doc.read_text().splitlines()
    for number, line in enumerate(lines):
        if line.strip() == "```python":
            previous = next((lines[i] for i in range(number - 1, -1, -1) if lines[i].strip()), "")
            assert SOURCE.search(previous), (
                f"{doc.relative_to(ROOT)}:{number + 1}: python block without snippet-source"
            )


def test_example_markers_are_balanced():
    for path in sorted((ROOT / "examples").glob("*.py")):
        opened: list[str] = []
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = MARKER.match(line)
            if match and match.group(1) == "START":
                opened.append(match.group(2))
            elif match:
                assert opened and opened.pop() == match.group(2), f"{path.name}:{number}: unbalanced [END]"
        assert not opened, f"{path.name}: unclosed [START {opened[-1]}]"
