"""The models of a run by role (task, reflection, judge), built once per experiment and counted per role."""

from __future__ import annotations

from dataclasses import dataclass

import dspy

from harness.config import DEFAULT_MAX_TOKENS, JUDGE_REPLY_GRAMMAR, EvolveConfig
from harness.models.lm import ModelSpec, build_lm
from harness.models.usage import UsageCounter

#: the judge's completion cap, in tokens: its terse one-line reply (harness.engine.judge) takes about a dozen, so
#: 32 leaves room for a few words of feedback while a rambling reply (unscored anyway) stops early; at the
#: embedded model's ~45 tokens/s this caps a judge reply at under a second (issue 18; was 160)
JUDGE_MAX_TOKENS = 32
#: the embedded judge's own llama.cpp context (``ModelSpec.context``): its prompt prefix (rubric and skill) stays
#: cached between grades instead of being evicted by the task LM's calls
JUDGE_CONTEXT = "judge"
#: the reflection LM's completion cap, in tokens (a whole rewritten skill body)
REFLECTION_MAX_TOKENS = 2048


@dataclass
class Models:
    """The LMs of an experiment, built once; ``usage`` counts their calls per role."""

    task: dspy.LM
    reflection: dspy.LM | None
    judge: dspy.LM | None
    usage: UsageCounter


def model_specs(config: EvolveConfig, *, judge: bool) -> dict[str, ModelSpec | None]:
    """The model of each role: the task LM, the reflection LM (``llm`` proposer only; else None) and the
    judge LM (when ``judge``; else None)."""
    base = config.api_base or None
    reflection = config.resolved_proposer() == "llm"
    return {
        "task": ModelSpec(config.task_model, base, max_tokens=config.max_tokens or DEFAULT_MAX_TOKENS,
                          seed=config.seed),
        "reflection": (ModelSpec(config.reflection_model, base, temperature=1.0, max_tokens=REFLECTION_MAX_TOKENS,
                                 seed=config.seed) if reflection else None),
        "judge": (ModelSpec(config.judge_model, base, max_tokens=JUDGE_MAX_TOKENS, seed=config.seed,
                            context=JUDGE_CONTEXT, grammar=JUDGE_REPLY_GRAMMAR) if judge else None),
    }


def build_models(config: EvolveConfig, *, judge: bool) -> Models:
    """The LMs of :func:`model_specs`, each counted under its role.

    Raises:
        harness.models.lm.ModelError: a model string cannot be used.
    """
    usage = UsageCounter()
    lms: dict[str, dspy.LM | None] = {}
    for role, spec in model_specs(config, judge=judge).items():
        lms[role] = build_lm(spec) if spec is not None else None
        if lms[role] is not None:
            usage.attach(lms[role], role)
    task = lms["task"]
    assert task is not None
    return Models(task, lms["reflection"], lms["judge"], usage)
