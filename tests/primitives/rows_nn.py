"""``op_db`` rows for the nn primitives (appended to ``OP_DB``; see op_db.py for the row format)."""

from __future__ import annotations

from op_db import OpCase  # noqa: F401

ROWS: list[OpCase] = []
