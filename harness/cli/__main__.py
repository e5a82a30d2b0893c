"""``python -m harness.cli``: the ``harness`` console script."""

import os

from harness.cli import main

if __name__ == "__main__":  # pragma: no cover
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
