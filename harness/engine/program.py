"""The DSPy program a skill drives: the skill body is the predictor's signature instructions.

An optimizer (GEPA, MIPROv2) rewrites signature instructions, so putting the body there is what lets
it evolve; the evolved text is read back from ``program.respond.signature.instructions``.

The task LM sees the skill the way an agent would: the instructions as the system message, the
task as the user message, and the whole reply is the answer (:class:`SkillAdapter`).  That also
suits a 135M-parameter model, which cannot follow DSPy's field-marker formats.
"""

from __future__ import annotations

from typing import Any

import dspy

#: input and output field names of the skill signature
INPUT_FIELD = "question"
OUTPUT_FIELD = "answer"
#: the no-skill control's whole instruction text (the ``none`` holdout variant): neutral, no skill body, so the
#: control differs from a skill variant only by the skill
CONTROL_INSTRUCTIONS = "Answer the question."


class SkillAdapter(dspy.Adapter):
    """System message = signature instructions; user message = the single input; reply = the single output.

    Few-shot demos are refused: a SKILL.md cannot hold them.
    """

    def format(self, signature: type[dspy.Signature], demos: list[dict[str, Any]],
               inputs: dict[str, Any]) -> list[dict[str, Any]]:
        """Two chat messages: ``[{"role": "system", ...}, {"role": "user", ...}]``.

        Raises:
            ValueError: if demos are passed or the signature does not have exactly one input field.
        """
        if demos:
            raise ValueError("SkillAdapter does not support few-shot demos: a SKILL.md cannot hold them")
        names = list(signature.input_fields)
        if len(names) != 1:
            raise ValueError(f"SkillAdapter needs exactly one input field, got {names}")
        return [
            {"role": "system", "content": signature.instructions},
            {"role": "user", "content": str(inputs.get(names[0], ""))},
        ]

    def parse(self, signature: type[dspy.Signature], completion: str) -> dict[str, Any]:
        """The whole completion, stripped, as the single output field."""
        (name,) = list(signature.output_fields)
        return {name: completion.strip()}


SKILL_ADAPTER = SkillAdapter()


def stock_instructions() -> str:
    """The instructions DSPy writes for a bare ``question -> answer`` signature (an evolved text equal to
    this means the optimizer lost the skill)."""
    return dspy.Signature(f"{INPUT_FIELD} -> {OUTPUT_FIELD}").instructions


class SkillProgram(dspy.Module):
    """``question -> answer`` with the skill body as instructions.

    Args:
        instructions: the skill body (markdown); must be non-empty.
    """

    def __init__(self, instructions: str) -> None:
        super().__init__()
        if not instructions.strip():
            raise ValueError("a skill program needs non-empty instructions (the SKILL.md body)")
        self.respond = dspy.Predict(dspy.Signature(f"{INPUT_FIELD} -> {OUTPUT_FIELD}", instructions))

    @property
    def instructions(self) -> str:
        """The current instruction text (the evolved skill body after optimisation)."""
        return self.respond.signature.instructions

    def forward(self, question: str) -> dspy.Prediction:
        """Answer one task; returns ``Prediction(answer=str)``."""
        with dspy.context(adapter=SKILL_ADAPTER):
            return self.respond(question=question)
