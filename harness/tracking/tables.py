"""MLflow table artifacts written as ``MlflowClient.log_table`` writes them, without its store round trips.

``MlflowClient.log_table`` lists the run's artifacts, reads the run and sets a tag on every call (three store
round trips, about 0.2-0.4 s each on a busy SQLite store in a profiled run; issue 18).  A tracker that knows what
it logged needs none of that: :func:`table_json` gives the same file and :class:`LoggedTables` the same
``mlflow.loggedArtifacts`` tag, so ``mlflow.load_table`` and the UI's table views read them unchanged.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any

import pandas as pd

#: the extension of the tables this module writes (MLflow's JSON table format)
TABLE_SUFFIX = ".json"


def table_json(frame: pd.DataFrame) -> str:
    """``frame`` as MLflow's JSON table file: ``{"columns": [...], "data": [[...], ...]}`` (pandas' ``split``
    orient without the index, ISO dates), exactly what ``MlflowClient.log_table`` writes for a ``.json`` file."""
    return str(frame.to_json(orient="split", index=False, date_format="iso"))


class LoggedTables:
    """The tables logged into one run: their frames (a table logged again under the same path is appended to,
    as ``MlflowClient.log_table`` does) and the run's ``mlflow.loggedArtifacts`` tag value.

    Args:
        existing_tag: the run's ``mlflow.loggedArtifacts`` value when the run was opened (a resumed run), or None.
    """

    def __init__(self, existing_tag: str | None = None) -> None:
        try:
            entries = json.loads(existing_tag) if existing_tag else []
        except ValueError:  # a malformed tag is replaced, as MLflow would fail to read it anyway
            entries = []
        self._entries: list[dict[str, Any]] = entries if isinstance(entries, list) else []
        self._frames: dict[str, pd.DataFrame] = {}

    def add(self, frame: pd.DataFrame, artifact_file: str) -> tuple[str, str]:
        """Record ``frame`` as the table ``artifact_file`` (a relative ``.json`` path); returns (the file's text,
        the new ``mlflow.loggedArtifacts`` tag value).

        Raises:
            ValueError: ``artifact_file`` does not end in ``.json``.
        """
        table, tag = self.add_frame(frame, artifact_file)
        return table_json(table), tag

    def add_frame(self, frame: pd.DataFrame, artifact_file: str) -> tuple[pd.DataFrame, str]:
        """:meth:`add`, returning the whole table as a frame (its file is :func:`table_json` of it) instead of its
        text, so the JSON encoding can run elsewhere (the tracker's writer).

        Raises:
            ValueError: ``artifact_file`` does not end in ``.json``.
        """
        if not artifact_file.endswith(TABLE_SUFFIX):
            raise ValueError(f"table artifact {artifact_file!r} must end in {TABLE_SUFFIX} (MLflow's JSON table)")
        path = posixpath.normpath(artifact_file)
        if path in self._frames:
            frame = pd.concat([self._frames[path], frame], ignore_index=True)
        self._frames[path] = frame.copy()  # the caller may change its frame later
        entry = {"path": artifact_file, "type": "table"}
        if entry not in self._entries:
            self._entries.append(entry)
        return self._frames[path], json.dumps(self._entries)


__all__ = ["TABLE_SUFFIX", "LoggedTables", "table_json"]
