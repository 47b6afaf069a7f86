"""``op_db`` rows for the convolution and pooling primitives (appended to ``OP_DB``)."""

from __future__ import annotations

from op_db import OpCase  # noqa: F401

ROWS: list[OpCase] = []
