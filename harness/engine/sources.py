"""Where a run's tasks come from: today, the verifier registered for the skill."""

from __future__ import annotations

from verifiers import UnknownVerifierError, Verifier, available_verifiers, get_verifier, has_verifier


def dataset_verifier(skill_name: str) -> Verifier:
    """The verifier whose tasks make the dataset for ``skill_name``.

    Raises:
        UnknownVerifierError: no verifier is registered for the skill (tasks come from verifiers).
    """
    if not has_verifier(skill_name):
        raise UnknownVerifierError(
            f"no dataset for skill {skill_name!r}: tasks come from a registered verifier and none is registered "
            f"for it (registered: {', '.join(available_verifiers())}); give the skill a task file "
            f"(<skill folder>/evals/tasks.jsonl: README, 'Evolve your own skill'), or register a verifier with "
            f"@register_verifier({skill_name!r}) or the entry point group skill_evolution_harness.verifiers")
    return get_verifier(skill_name)
