"""``harness tasks``: check a task file (and grade given answers), or draft one from a skill with an LM.

The library halves are :mod:`verifiers.taskfile.report` and :mod:`verifiers.taskfile.generate`; this module
reads the options, prints and exits.  A bad file is one ``Error:`` line, exit code 2, before any LM call.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from harness.cli.common import WHOLE, UsageError, guarded

#: completion cap of the drafting LM: a batch of 40 drafted tasks as JSON
DRAFT_MAX_TOKENS = 4096


@click.group("tasks")
def tasks_group() -> None:
    """Task files: check one (``check``) or draft one from a skill's text (``generate``)."""


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.items()) or "none"


def _summary_lines(summary: Any) -> list[str]:
    lines = [f"{summary.path}: {summary.format} format, {summary.tasks} tasks, {summary.checked} with checks, "
             f"sha256 {summary.sha256[:12]}",
             f"groups ({len(summary.groups)}): {_counts(summary.groups)}",
             f"check types: {_counts(summary.check_types)}",
             f"split (seed {summary.seed}, digest {summary.split_digest}): {_counts(summary.split_sizes)}"]
    lines += [f"  {name}: {', '.join(groups)}" for name, groups in summary.split_groups.items()]
    if summary.checked < summary.tasks:
        lines.append(f"{summary.tasks - summary.checked} task(s) have no checks: fitness=verifier refuses this "
                     f"file, fitness=auto uses keyword")
    return lines


def _graded_line(graded: Any) -> str:
    g = graded.grade
    case = f" [{graded.answer.case}]" if graded.answer.case else ""
    labels = f" · label {graded.labels[0]} -> {graded.labels[1]}" if graded.labels else ""
    return (f"{graded.answer.task_id}{case}: composite {g.composite:.2f} (correctness {g.correctness:.2f}, "
            f"well-formed {g.well_formed:.2f}, concise {g.conciseness:.2f}){labels} · {g.feedback}")


@tasks_group.command("check")
@click.argument("path")
@click.option("--answers", default="", help="JSON Lines of {\"id\", \"output\", \"case\"}: grade these answers.")
@click.option("--seed", type=WHOLE, default=0, show_default=True, help="Seed of the split shown.")
def check_command(path: str, answers: str, seed: int) -> None:
    """Validate the task file PATH, print what it holds and the split it makes; grade --answers."""

    def work() -> None:
        from verifiers.taskfile import load_tasks
        from verifiers.taskfile.report import grade_answers, load_answers, summarize

        # TaskFileError / DatasetError become one-line exit-2 errors in guarded()
        taskfile = load_tasks(path)
        summary = summarize(taskfile, seed)
        graded = grade_answers(taskfile, load_answers(answers), answers) if answers else []
        for line in _summary_lines(summary):
            click.echo(line)
        for row in graded:
            click.echo(_graded_line(row))

    guarded(work)


@tasks_group.command("generate")
@click.option("--skill", required=True, help="Skill name (folder name or frontmatter name).")
@click.option("--model", required=True, help="DSPy/LiteLLM model string of the drafting LM (a capable one).")
@click.option("--n", "count", type=WHOLE, default=40, show_default=True, help="Tasks to draft.")
@click.option("--out", required=True, help="JSONL file to write (our format: id, input, rubric).")
@click.option("--api-base", default="", help="OpenAI-compatible endpoint of the model.")
@click.option("--skills-dir", default="", help="Look for the skill here first (as for evolve).")
@click.option("--force", is_flag=True, help="Overwrite --out when it exists.")
def generate_command(skill: str, model: str, count: int, out: str, api_base: str, skills_dir: str,
                     force: bool) -> None:
    """Draft --n tasks (input and rubric, no checks) from a skill's text with an LM, for review."""
    target = Path(out).expanduser()
    if count < 1:
        raise UsageError(f"invalid n={count}: draft at least 1 task")
    if target.exists() and not force:
        raise UsageError(f"{target} exists; pass --force to overwrite it, or another --out")
    if not target.parent.is_dir():
        raise UsageError(f"folder {target.parent} of --out does not exist; create it first")

    def work() -> None:
        import json

        from harness.models.lm import ModelSpec, build_lm
        from harness.skills.files import find_skill
        from verifiers.taskfile import TaskFileError, load_tasks
        from verifiers.taskfile.generate import draft_tasks

        found = find_skill(skill, Path(skills_dir) if skills_dir else None)
        lm = build_lm(ModelSpec(model, api_base or None, max_tokens=DRAFT_MAX_TOKENS))
        rows = draft_tasks(found.text, lm, count)
        target.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
        click.echo(f"wrote {len(rows)} drafted task(s) to {target} (asked for {count}); review them, add checks "
                   f"and run `harness tasks check {target}`")
        try:
            load_tasks(target)
        except TaskFileError as exc:
            click.echo(f"warning: the drafts do not load as a task file yet: {exc}", err=True)

    guarded(work)
