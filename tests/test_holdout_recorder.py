"""The holdout's LM-call recorder (harness.tracking.holdout_traces.answer_and_grade, issue 18): on a copy of the task
LM it records exactly the calls a global DSPy callback records, leaves the caller's LM as it was, and falls back to
a global callback when a predictor has an LM of its own."""

from __future__ import annotations

from typing import Any

import dspy
import pytest

from harness.engine.program import SkillProgram
from harness.models.lm import ModelSpec, build_lm
from harness.tracking import holdout_traces
from harness.tracking.holdout_traces import LMCallRecorder, answer_and_grade
from verifiers import get_verifier


def _calls(records: list[Any]) -> list[tuple[str, Any, Any, str]]:
    return [(r.task.task_id, c.inputs, c.outputs, c.error) for r in records for c in r.lm_calls]


@pytest.fixture()
def no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every call reaches the LM (DSPy's cache would answer the second pass from memory, with the same calls)."""
    monkeypatch.setattr(dspy.cache, "enable_memory_cache", False, raising=False)
    monkeypatch.setattr(dspy.cache, "enable_disk_cache", False, raising=False)


def test_the_lm_copy_records_the_calls_a_global_callback_records(no_cache: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    tasks = get_verifier("arxiv").build_dataset(12, 0).holdout[:4]
    program = SkillProgram("Answer with the paper's arXiv ID.")
    lm = build_lm(ModelSpec("test/oracle", cache=False))
    before = list(lm.callbacks)
    with dspy.context(lm=lm):
        on_copy = answer_and_grade(program, tasks, [])
        assert lm.callbacks == before and not any(isinstance(c, LMCallRecorder) for c in lm.callbacks)
        with monkeypatch.context() as patch:  # the recorder as a global callback, as before the copy
            patch.setattr(holdout_traces, "_recording_lm", lambda *args: None)
            global_ = answer_and_grade(program, tasks, [])
    assert [r.text for r in on_copy] == [r.text for r in global_] and all(r.text for r in on_copy)
    assert len(_calls(global_)) == len(tasks) and _calls(on_copy) == _calls(global_)


def test_a_predictor_with_its_own_lm_is_still_recorded(no_cache: None) -> None:
    tasks = get_verifier("arxiv").build_dataset(12, 0).holdout[:2]
    program = SkillProgram("Answer with the paper's arXiv ID.")
    program.respond.lm = build_lm(ModelSpec("test/oracle", cache=False))  # not the one in DSPy's settings
    settings_lm = build_lm(ModelSpec("test/lessons", cache=False))
    assert holdout_traces._recording_lm(program, settings_lm, LMCallRecorder()) is None
    with dspy.context(lm=settings_lm):
        records = answer_and_grade(program, tasks, [])
    assert [len(r.lm_calls) for r in records] == [1, 1]
    assert all(c.inputs["model"] == "test/oracle" for r in records for c in r.lm_calls)
