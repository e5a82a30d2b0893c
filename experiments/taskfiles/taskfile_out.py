"""Writing a generated task file: one JSON object per line, UTF-8, shared by the ``make_*.py`` generators."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def write_task_file(rows: Sequence[dict[str, Any]], out: Path) -> None:
    """Write ``rows`` to ``out`` as JSONL (parent folders created) and say how many were written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} tasks to {out}")
