"""The skill program: body as signature instructions, plain system/user adapter, LMs through engines."""

from __future__ import annotations

import dspy
import pytest

from harness.engine.program import SKILL_ADAPTER, SkillProgram, stock_instructions
from harness.models.lm import ModelSpec, build_lm
from verifiers import get_verifier


def test_body_is_the_signature_instructions() -> None:
    program = SkillProgram("# Skill\nAnswer briefly.")
    assert program.respond.signature.instructions == "# Skill\nAnswer briefly."
    assert program.instructions == "# Skill\nAnswer briefly."


def test_evolved_text_is_read_back_from_the_predictor() -> None:
    program = SkillProgram("old")
    program.respond.signature = program.respond.signature.with_instructions("new text")
    assert program.instructions == "new text"


def test_empty_instructions_are_refused() -> None:
    with pytest.raises(ValueError, match="non-empty"):
        SkillProgram("  \n")


def test_adapter_sends_instructions_as_system_and_task_as_user() -> None:
    sig = SkillProgram("INSTR").respond.signature
    messages = SKILL_ADAPTER.format(sig, [], {"question": "Q?"})
    assert messages == [{"role": "system", "content": "INSTR"}, {"role": "user", "content": "Q?"}]
    assert SKILL_ADAPTER.parse(sig, "  whole reply\nline two ") == {"answer": "whole reply\nline two"}


def test_adapter_refuses_demos() -> None:
    sig = SkillProgram("INSTR").respond.signature
    with pytest.raises(ValueError, match="demos"):
        SKILL_ADAPTER.format(sig, [{"question": "q", "answer": "a"}], {"question": "Q?"})


def test_stock_instructions_differ_from_a_skill() -> None:
    assert "question" in stock_instructions() and "answer" in stock_instructions()


def test_test_lm_answers_through_the_engine_path() -> None:
    task = get_verifier("arxiv").tasks()[0]
    lm = build_lm(ModelSpec("test/oracle", cache=False))
    with dspy.context(lm=lm):
        pred = SkillProgram("Answer.")(question=task.question)
    assert task.answer in pred.answer
    assert lm.history[-1]["messages"][0]["content"] == "Answer."


@pytest.mark.e2e
def test_embedded_model_answers_through_the_same_path() -> None:
    task = next(t for t in get_verifier("arxiv").tasks() if t.kind == "year")
    lm = build_lm(ModelSpec("embedded", max_tokens=32, cache=False))
    with dspy.context(lm=lm):
        pred = SkillProgram("Answer with a four-digit year.")(question=task.question)
    assert isinstance(pred.answer, str) and pred.answer.strip()
    usage = lm.history[-1]["usage"]
    assert usage["prompt_tokens"] > 0 and 0 < usage["completion_tokens"] <= 32
