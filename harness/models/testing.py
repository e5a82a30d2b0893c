"""Deterministic offline test LMs, selected by model strings ``test/<name>``.

They run through the same path as every model (a DSPy 3.4 custom engine handed to ``dspy.LM``), make
no network connection, and answer from the ground truth of the registered verifiers and of the bundled skills'
task files (``experiments/skills/*/evals/``; the answer is ``Task.answer``).  They exist for tests,
dry runs and benchmarks; **a number produced with them says nothing about any real model**.

* ``test/oracle``: answers every known task correctly, in one short sentence.
* ``test/wrong``: answers every known task with a confidently wrong value of the right shape.
* ``test/echo``: repeats the question.
* ``test/lessons``: answers correctly only when its instructions contain a lessons section (the text the
  ``feedback`` proposer adds), else like ``test/wrong``; it lets tests watch an optimizer change a skill.
* ``test/noisy``: answers correctly with probability 1/2, decided by a hash of (seed, question, a
  per-call counter), so repeated runs differ like a sampling LM; for A/A tests.
* ``test/sleepy-<ms>``: ``test/oracle`` after sleeping ``<ms>`` milliseconds per call (thread speed-ups).
* ``test/judge``: answers judge prompts (:func:`harness.engine.judge.judge_request`) with a well-formed judgement:
  correctness 1 when the task's ground-truth answer appears in the graded output (case-insensitive), else 0;
  procedure 1 for a non-empty output; conciseness 1 up to 25 words, else 0.5.  A judge prompt for a task
  without ground truth, or any other prompt, gets an unparseable reply.
* ``test/judge-garbage``: replies to every prompt with unparseable text (an unscored judge).
* ``test/proposer``: a prompt model for optimizers that ask through DSPy's ChatAdapter (MIPROv2's grounded
  proposer): it fills every output field its system message lists (``Your output fields are:``).  A field
  whose name contains ``instruction`` gets the request's ``basic_instruction`` (the current skill body)
  followed by a lessons section (``LESSONS_HEADING``) holding :data:`PROPOSER_SENTENCE`, so ``test/lessons``
  answers right under it (a mechanical check that an optimizer adopts a proposal, not a finding); a
  ``tasks`` field of a request holding ``skill_text`` (``harness tasks generate``) gets ``count`` drafted tasks
  built from the skill's lines; every other field gets a fixed sentence.  A request that lists no output
  fields is echoed.
* ``test/proposer-garbage``: a prompt model that ignores DSPy's structured format, as a 135M model does:
  every reply is free text with no field markers (MIPROv2's proposer cannot parse it).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

from harness.config import JUDGE_OUTPUT_TAGS, JUDGE_TASK_TAGS, LESSONS_HEADING, TEST_PREFIX
from verifiers import Task, available_verifiers, get_verifier
from verifiers.taskfile import find_task_file, load_tasks

PREFIX = TEST_PREFIX


#: the skills shipped with the project (``experiments/skills``); their task files feed the test LMs' pool
BUNDLED_SKILLS = Path(__file__).resolve().parents[2] / "experiments" / "skills"


def bundled_task_files(root: Path = BUNDLED_SKILLS) -> list[Path]:
    """The task file of every bundled skill that has one (``<skill>/evals/tasks.jsonl`` or ``evals.json``)."""
    found = (find_task_file(folder) for folder in sorted(root.iterdir()) if folder.is_dir()) if root.is_dir() else ()
    return [path for path in found if path is not None]


def _pool() -> tuple[dict[str, Task], dict[str, str]]:
    """Every task the test LMs know, by question (the registered verifiers' and the bundled task files'), and
    the wrong answer of each (:func:`_wrong_answers`)."""
    tasks = [t for name in available_verifiers() for t in get_verifier(name).tasks()]
    tasks += [t for path in bundled_task_files() for t in load_tasks(path).tasks]
    return {t.question: t for t in tasks}, _wrong_answers(tasks)


_NO_ANSWER = "A Survey of Nothing in Particular"
#: the confidently wrong answers of the arXiv task kinds
_ARXIV_WRONG = {"id": "9912.00001", "year": "1999", "author": "Zzyzx Nobody", "title": _NO_ANSWER}


def _wrong_answers(tasks: list[Task]) -> dict[str, str]:
    """Question -> a confidently wrong answer of the right shape: a fixed value for the arXiv kinds; for any
    other task the answer of the next task (cyclically, in pool order) of the same kind whose answer differs
    (a task file's tasks: the kind is the first check's type, so a wrong tool call, a wrong number, another
    option); a made-up title when there is none."""
    by_kind: dict[str, list[Task]] = {}
    for task in tasks:
        by_kind.setdefault(task.kind, []).append(task)
    wrong: dict[str, str] = {}
    for kind, group in by_kind.items():
        for i, task in enumerate(group):
            if kind in _ARXIV_WRONG:
                wrong[task.question] = _ARXIV_WRONG[kind]
                continue
            others = (group[(i + k) % len(group)].answer for k in range(1, len(group)))
            wrong[task.question] = next((a for a in others if a and a != task.answer), _NO_ANSWER)
    return wrong


_GARBAGE = "I cannot judge this; it looks fine-ish overall, maybe a seven."

#: every reply of ``test/proposer-garbage``: prose with no ``[[ ## field ## ]]`` markers and no JSON
_PROPOSER_GARBAGE = "Sure! A better instruction would be to answer well and be helpful, I think."

#: sentence ``test/proposer`` adds (under the lessons heading) to the instruction it is asked to improve
PROPOSER_SENTENCE = "Give only the answer, with no other words."
_FIELD_LINE = re.compile(r"^\d+\. `(\w+)`", re.M)


def _chat_field(user: str, name: str) -> str:
    """The value of input field ``name`` in a ChatAdapter user message (``""`` when absent)."""
    _, sep, tail = user.partition(f"[[ ## {name} ## ]]\n")
    if not sep:
        return ""
    return re.split(r"\n\n(?:\[\[ ## |Respond with the corresponding output fields)", tail, maxsplit=1)[0].strip()


def _proposal(system: str, user: str) -> str:
    """``test/proposer``'s reply (see the module docstring)."""
    _, sep, tail = system.partition("Your output fields are:")
    names = _FIELD_LINE.findall(tail.split("All interactions will be structured", 1)[0]) if sep else []
    if not names:
        return user
    parts = []
    for name in names:
        if "instruction" in name:
            value = f"{_chat_field(user, 'basic_instruction')}\n\n{LESSONS_HEADING}\n- {PROPOSER_SENTENCE}".lstrip()
        elif name == "tasks" and sep and "skill_text" in user:
            value = _drafts(_chat_field(user, "skill_text"), _chat_field(user, "count"))
        else:
            value = f"A scripted {name.replace('_', ' ')} from the offline test proposer."
        parts.append(f"[[ ## {name} ## ]]\n{value}")
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


def _drafts(skill_text: str, count: str) -> str:
    """``test/proposer``'s drafted tasks (``harness tasks generate``): ``count`` objects ``{"input", "rubric"}``
    as a JSON list, one per non-heading line of ``skill_text`` (cycled, numbered so every input differs)."""
    parts = skill_text.split("---", 2)
    body = parts[2] if skill_text.lstrip().startswith("---") and len(parts) == 3 else skill_text  # no frontmatter
    lines = [ln.strip("-* ").strip() for ln in body.splitlines()
             if ln.strip() and not ln.lstrip().startswith(("#", "```"))] or ["the skill"]
    n = int(count) if count.strip().isdigit() else 1
    return json.dumps([{"input": f"Task {k + 1}: apply this step of the skill: {lines[k % len(lines)]}",
                        "rubric": f"Follows the step: {lines[k % len(lines)]}"} for k in range(n)])


def _judgement(user: str, tasks: dict[str, Task]) -> str:
    """``test/judge``'s reply to a judge prompt (see the module docstring)."""
    (TASK_OPEN, TASK_CLOSE), (OUTPUT_OPEN, OUTPUT_CLOSE) = JUDGE_TASK_TAGS, JUDGE_OUTPUT_TAGS
    start = user.find(TASK_OPEN)
    end = user.find(TASK_CLOSE, start)
    out_start = user.find(OUTPUT_OPEN, end)
    out_end = user.rfind(OUTPUT_CLOSE)
    task = tasks.get(user[start + len(TASK_OPEN):end].strip()) if -1 < start < end else None
    if task is None or not end < out_start < out_end:
        return _GARBAGE
    output = user[out_start + len(OUTPUT_OPEN):out_end].strip()
    correct = task.answer.lower() in output.lower()
    procedure = 1.0 if output else 0.0
    conciseness = 1.0 if len(output.split()) <= 25 else 0.5
    verdict = "states" if correct else "does not state"
    return (f"correctness: {1.0 if correct else 0.0}\nprocedure: {procedure}\nconciseness: {conciseness}\n"
            f"feedback: The output {verdict} the expected answer {task.answer}.")


class ScriptedEngine:
    """A DSPy custom engine answering by rule (see the module docstring).

    Args:
        name: one of oracle, wrong, echo, lessons, noisy, judge, judge-garbage, proposer, proposer-garbage,
            sleepy-<ms>.
        seed: seed of the ``noisy`` model.
    Raises:
        ValueError: an unknown name.
    """

    NAMES = ("oracle", "wrong", "echo", "lessons", "noisy", "judge", "judge-garbage", "proposer", "proposer-garbage")

    def __init__(self, name: str, seed: int = 0) -> None:
        self.delay_s = 0.0
        if name.startswith("sleepy-"):
            self.delay_s = int(name.split("-", 1)[1]) / 1000.0
            name = "oracle"
        if name not in self.NAMES:
            raise ValueError(f"unknown test model test/{name}; known: "
                             + ", ".join(f"test/{n}" for n in self.NAMES) + ", test/sleepy-<ms>")
        self.name = name
        self.seed = seed
        self.calls = 0
        self._counter = itertools.count()
        self._lock = threading.Lock()
        self._tasks: dict[str, Task] | None = None
        self._wrong: dict[str, str] = {}

    def answer(self, system: str, user: str) -> str:
        """The reply to one (system, user) pair."""
        if self._tasks is None:
            with self._lock:  # loaded once: concurrent first calls (a threaded holdout) would each load it
                if self._tasks is None:
                    tasks, self._wrong = _pool()
                    self._tasks = tasks  # set last: an unlocked reader sees None or the whole pool
        if self.name.startswith("judge"):
            return _judgement(user, self._tasks) if self.name == "judge" else _GARBAGE
        if self.name == "proposer":
            return _proposal(system, user)
        if self.name == "proposer-garbage":
            return _PROPOSER_GARBAGE
        task = self._tasks.get(user)
        if self.name == "echo" or task is None:
            return user
        right = task.answer
        if self.name == "oracle":
            return f"The answer is {right}."
        if self.name == "lessons":
            return f"The answer is {right}." if LESSONS_HEADING in system else f"The answer is {self._wrong[user]}."
        if self.name == "noisy":
            n = next(self._counter)
            digest = hashlib.sha256(f"{self.seed}|{user}|{n}".encode()).digest()
            return f"The answer is {right if digest[0] % 2 == 0 else self._wrong[user]}."
        return f"The answer is {self._wrong[user]}."

    def complete(self, request: Any) -> Any:
        """``dspy.lm15.Request`` -> ``dspy.lm15.Response`` (usage counts whitespace tokens)."""
        from dspy.lm15 import Message, Response, TextPart, Usage

        system = request.system if isinstance(request.system, str) else "".join(
            getattr(p, "text", "") for p in (request.system or ()))
        user = request.messages[-1].text or ""
        if self.delay_s:
            time.sleep(self.delay_s)
        text = self.answer(system, user)
        with self._lock:
            self.calls += 1
        return Response(id=None, model=f"{PREFIX}{self.name}", message=Message.assistant([TextPart(text)]),
                        finish_reason="stop",
                        usage=Usage(input_tokens=len((system + user).split()), output_tokens=len(text.split())))

    def stream(self, request: Any) -> Any:
        """One completed response as stream events."""
        from dspy.lm15 import response_to_events

        return response_to_events(self.complete(request))

    def close(self) -> None:
        """Nothing to release."""
