"""The reporter's stream handling: stdout keeps only the summary, --quiet hides library output but not warnings."""

from __future__ import annotations

import logging
import sys

import dspy  # noqa: F401  (imported for the logger set-up it does: its own handler, no propagation)
import mlflow  # noqa: F401  (likewise)
import pytest

from harness.cli.console import Reporter


def _library_noise() -> None:
    """What libraries do during a run: progress on both streams, INFO and WARNING log records."""
    print("progress bar on stdout")  # DSPy's evaluation bars
    print("progress bar on stderr", file=sys.stderr)  # GEPA's bar, MLflow's banner
    logging.getLogger("mlflow.genai.evaluation.harness").info("mlflow info line")
    logging.getLogger("mlflow.genai.evaluation.harness").warning("scorer 'judge': 3/3 failed")
    logging.getLogger("dspy.clients.lm").warning("LM response was truncated")
    logging.getLogger("harness.some_module").warning("harness warning")


@pytest.mark.parametrize("quiet", [False, True])
def test_library_output_leaves_stdout_to_the_summary(quiet: bool, capsys: pytest.CaptureFixture[str]) -> None:
    reporter = Reporter(quiet=quiet)
    with reporter.library_output():
        _library_noise()
        reporter.warn("our own warning")
    reporter.summary("title", [("skill", "arxiv")], {"run id": "abc"})
    out, err = capsys.readouterr()
    assert "progress bar" not in out and "warning" not in out.lower()
    assert out.rstrip().endswith("run id: abc")
    # shown once, quiet or not (a propagating logger's record goes to pytest's root handler when not quiet)
    shown = ("scorer 'judge': 3/3 failed", "LM response was truncated", "our own warning")
    for warning in (*shown, "harness warning") if quiet else shown:
        assert err.count(warning) == 1, err
    assert ("progress bar on stdout" in err) is not quiet and ("progress bar on stderr" in err) is not quiet
    assert ("mlflow info line" in err) is not quiet


def test_loggers_are_as_before_after_the_block() -> None:
    names = ["", "mlflow", "dspy"]
    before = {n: (logging.getLogger(n).level, list(logging.getLogger(n).handlers)) for n in names}
    with Reporter(quiet=True).library_output():
        pass
    assert {n: (logging.getLogger(n).level, list(logging.getLogger(n).handlers)) for n in names} == before
