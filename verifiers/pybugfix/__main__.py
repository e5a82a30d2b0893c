"""``python -m verifiers.pybugfix --demo``: how sample answers to two tasks are graded, and by which sandbox."""

from __future__ import annotations

import click

from verifiers.arxiv.__main__ import print_demo
from verifiers.base import Grade
from verifiers.pybugfix.verifier import PythonBugfixVerifier

_LOOP = "```python\ndef sum_first(xs, n):\n    while True:\n        pass\n```"
_SHELL = "```python\nimport os\n\ndef sum_first(xs, n):\n    os.system('rm -rf ~')\n    return 0\n```"
_REWRITE = ("```python\ndef sum_first(xs, n):\n    acc = []\n    idx = 0\n    while idx < n:\n"
            "        acc.append(xs[idx])\n        idx = idx + 1\n    result = 0\n    for value in acc:\n"
            "        result = result + value\n    return result\n```")

#: (task_id, case label, output) rows of the demo table; ``{fixed}`` / ``{buggy}`` are the task's own code.
DEMO_CASES: tuple[tuple[str, str, str], ...] = (
    ("off_by_one/sum_first", "reference fix", "The loop stopped one early:\n\n```python\n{fixed}```"),
    ("off_by_one/sum_first", "idiomatic fix", "```python\ndef sum_first(xs, n):\n    return sum(xs[:n])\n```"),
    ("off_by_one/sum_first", "full rewrite", _REWRITE),
    ("off_by_one/sum_first", "unchanged", "```python\n{buggy}```"),
    ("off_by_one/sum_first", "signature changed", "```python\ndef sum_first(xs):\n    return sum(xs)\n```"),
    ("off_by_one/sum_first", "syntax error", "```python\ndef sum_first(xs, n)\n    return sum(xs[:n])\n```"),
    ("off_by_one/sum_first", "no function", "Change range(n - 1) to range(n)."),
    ("off_by_one/sum_first", "infinite loop", _LOOP),
    ("off_by_one/sum_first", "shell call", _SHELL),
    ("missing_edge_case/safe_div", "reference fix", "```python\n{fixed}```"),
    ("missing_edge_case/safe_div", "partial", "```python\ndef safe_div(a, b):\n    if a == 0:\n        return None\n"
                                               "    return a / b\n```"),
)


def demo_rows(verifier: PythonBugfixVerifier | None = None) -> list[tuple[str, str, Grade]]:
    """``(task_id, case, grade)`` for every ``DEMO_CASES`` row."""
    v = verifier or PythonBugfixVerifier()
    by_id = {task.task_id: task for task in v.tasks()}
    rows = []
    for task_id, case, output in DEMO_CASES:
        spec = v.spec_for(by_id[task_id].question)
        assert spec is not None
        text = output.replace("{fixed}", spec.fixed).replace("{buggy}", spec.buggy)
        rows.append((task_id, case, v.score(by_id[task_id].question, text)))
    return rows


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--demo", is_flag=True, help="Print how right, partial, rewritten, malformed and hostile answers score.")
@click.option("--sandbox", "mode", type=click.Choice(["auto", "required", "limits"]), default=None,
              help="Sandbox mode (default: $HARNESS_SANDBOX, else auto).")
def main(demo: bool, mode: str | None) -> None:
    """The python-bugfix verifier: grading demo."""
    if not demo:
        raise click.UsageError("pass --demo")
    verifier = PythonBugfixVerifier(sandbox=mode)
    rows = demo_rows(verifier)
    print_demo(rows, title=f"python-bugfix verifier: how answers are graded (sandbox: {verifier.sandbox_kind})")


if __name__ == "__main__":
    main()
