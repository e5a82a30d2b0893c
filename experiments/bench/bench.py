"""Benchmark the harness on the machine it runs on and print one table (markdown).

Measures, with the offline test LMs of :mod:`harness.models.testing` (so the figures measure the harness, never a
model):

1. **grading** — ``ArxivVerifier.score`` throughput on one core over 5,000 realistic outputs (right, bare,
   wrong, hedged, evasive, refusals, corrections, echoes, empty, markdown, and multi-paragraph answers of a few
   KB for every task of the pool); **taskfile** — the same
   for ``TaskFileVerifier.score`` on the shipped task files (unit-date-math, tool-choice);
2. **harness overhead** — a full ``evolve`` run (68 tasks, budget 100) with the zero-latency ``test/oracle``
   LM into a SQLite MLflow store: wall time; the same run into a :class:`NullTracker`; the time inside the
   ``MlflowTracker`` methods (each public method and run start/end wrapped with a timer) and inside
   ``mlflow.genai.evaluate`` (the tracked holdout);
3. **threads** — holdout evaluation (baseline and evolved variants, answered and graded) through
   ``harness.run.grade_variant`` with ``test/sleepy-200`` (200 ms per call) at 1 and 8 threads, without a
   run (the engine's threads) and inside a tracked run (``mlflow.genai.evaluate``'s workers);
4. **cached rerun** — the same evolve twice against one DSPy disk cache in a temp folder, with a test LM
   that sleeps per call (``test/sleepy-20``, and ``test/sleepy-500`` for a hosted model's latency) so the
   first run has LM latency; the rerun starts with an empty memory cache, as a new process would;
5. **export** — :func:`harness.tracking.export.holdout_table` over 1,000 runs (``bench_export.bench_export``);
6. **pybugfix** — the python-bugfix verifier, which runs every answer in a sandboxed process: the time to
   grade a holdout of 16 tasks x 2 variants with ``score_many`` on all cores, and grades per second over
   the 64-task pool x 2 variants, inside bubblewrap (when it starts here) and with the limits alone.

Timed runs happen in this process after a small warm-up run, so imports are not counted.

Usage::

    python experiments/bench/bench.py                 # everything (about 3 minutes on 2 cores)
    python experiments/bench/bench.py --only grading,threads
    python experiments/bench/bench.py --export-runs 200 --cache-models test/sleepy-20
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.metadata
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_export, when run as a script

from bench_export import bench_export, machine  # noqa: E402

SECTIONS: tuple[str, ...] = ("grading", "worstcase", "taskfile", "overhead", "threads", "cache", "plots", "export",
                             "pybugfix", "lmshare", "compare")
#: sections that run the embedded model (minutes each): only when asked for by name with --only
EMBEDDED_SECTIONS: tuple[str, ...] = ("lmshare", "compare")
PACKAGES: tuple[str, ...] = ("skill-evolution-harness", "dspy", "gepa", "mlflow", "pandas", "SQLAlchemy")
OFFLINE_NOTE = ("Figures come from the offline test LMs of harness.models.testing (test/oracle, test/sleepy-<ms>): "
                "they measure the harness, not any model.")

#: targets the harness is held to
TARGET_GRADES_PER_S = 50_000
TARGET_OVERHEAD_S = 10.0
TARGET_TRACKED_RATIO = 1.3
TARGET_HARNESS_SHARE = 0.10
TARGET_COMPARE_S = 600.0
TARGET_SPEEDUP = 5.0
TARGET_CACHE_SPEEDUP = 20.0
TARGET_EXPORT_S = 5.0
TARGET_PYBUGFIX_HOLDOUT_S = 10.0
#: a grade of any output up to the scan limit (MAX_GRADED_CHARS) should cost under this much CPU
TARGET_WORST_GRADE_S = 1.0
#: share of the plots' in-line cost they may still add to a run's path when drawn in the background (issue 18)
TARGET_PLOTS_LEFT = 0.1


@dataclass
class Row:
    """One line of the result table."""

    measure: str
    result: str
    target: str
    met: bool | None
    detail: str = ""


# ------------------------------------------------------------------------------------------------ machine


def machine_info() -> dict[str, str]:
    """nproc, CPU model, Python and the versions of the packages that matter here."""
    info = machine()
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name} (not installed)")
    return {"nproc": str(info["nproc"]), "cpu": str(info["cpu_model"]),
            "python": f"{platform.python_implementation()} {platform.python_version()}",
            "os": f"{platform.system()} {platform.release()}", "packages": ", ".join(versions),
            "load": " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"}


# ------------------------------------------------------------------------------------------------ helpers


def use_dspy_cache(folder: Path) -> None:
    """From now on, DSPy caches LM responses on disk in ``folder``, behind a fresh (empty) memory cache."""
    import dspy

    dspy.configure_cache(enable_disk_cache=True, enable_memory_cache=True, disk_cache_dir=str(folder))


@contextlib.contextmanager
def engine_call_counter() -> Iterator[list[int]]:
    """Count the calls that reach a test LM's engine (i.e. were not answered by DSPy's cache)."""
    from harness.models.testing import ScriptedEngine

    calls = [0]
    original = ScriptedEngine.complete

    @functools.wraps(original)
    def counted(self: Any, request: Any) -> Any:
        calls[0] += 1
        return original(self, request)

    ScriptedEngine.complete = counted  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        ScriptedEngine.complete = original  # type: ignore[method-assign]


@contextlib.contextmanager
def timed_attribute(owner: Any, name: str) -> Iterator[list[float]]:
    """Time every call of ``owner.<name>`` (replaced for the block); yields ``[seconds, calls]``."""
    original = getattr(owner, name)
    totals = [0.0, 0.0]

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            totals[0] += time.perf_counter() - started
            totals[1] += 1

    setattr(owner, name, timed)
    try:
        yield totals
    finally:
        setattr(owner, name, original)


def timed_tracker_class() -> type:
    """An ``MlflowTracker`` subclass whose public methods, ``__enter__`` and ``__exit__`` add their wall
    time to ``self.seconds`` (nested calls, e.g. ``log_dict`` -> ``log_text``, are counted once)."""
    from harness.tracking.tracker import MlflowTracker

    names = [n for n in dir(MlflowTracker) if (not n.startswith("_") or n in ("__enter__", "__exit__"))
             and callable(getattr(MlflowTracker, n)) and not isinstance(getattr(MlflowTracker, n), property)]

    def wrap(method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def timed(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self._timing_depth:
                return method(self, *args, **kwargs)
            self._timing_depth += 1
            started = time.perf_counter()
            try:
                return method(self, *args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1
                self._timing_depth -= 1
        return timed

    namespace: dict[str, Any] = {n: wrap(getattr(MlflowTracker, n)) for n in names}
    namespace.update(seconds=0.0, calls=0, _timing_depth=0)
    return type("TimedMlflowTracker", (MlflowTracker,), namespace)


def genai_tracker_class(base: type | None = None) -> type:
    """``base`` (default ``MlflowTracker``) answering the tracked holdout through ``mlflow.genai.evaluate``
    (:func:`harness.tracking.genai_eval.genai_holdout`), the writer before issue 18, for before/after rows."""
    from harness.tracking.genai_eval import genai_holdout
    from harness.tracking.tracker import MlflowTracker

    def evaluate_holdout(self: Any, program: Any, tasks: Any, graders: Any, variant: str, *, num_threads: int = 1,
                         on_done: Any = None) -> Any:
        return genai_holdout(program, tasks, graders, variant, self.run_id, num_threads=num_threads,
                             on_done=on_done, tracking_uri=self.client.tracking_uri)

    return type("GenaiMlflowTracker", (base or MlflowTracker,), {"evaluate_holdout": evaluate_holdout})


WRITERS: dict[str, str] = {"batch": "in-process, traces written in one batch (harness.tracking.holdout_traces)",
                           "genai": "mlflow.genai.evaluate (before issue 18)"}


def tracker_for(writer: str, *args: Any, timed: bool = False, **kwargs: Any) -> Any:
    """An ``MlflowTracker`` (optionally timed) whose holdout goes through ``writer`` (a key of WRITERS)."""
    from harness.tracking.tracker import MlflowTracker

    base = timed_tracker_class() if timed else MlflowTracker
    cls = genai_tracker_class(base) if writer == "genai" else base
    return cls(*args, **kwargs)


def use_sqlite_store(folder: Path) -> str:
    """Make a SQLite tracking store in ``folder`` the process's store, as ``MLFLOW_TRACKING_URI`` does for the
    CLI, with MLflow's tables created (not timed: in use, the store exists); returns its URI."""
    import mlflow

    uri = f"sqlite:///{folder / 'mlflow.db'}"
    os.environ["MLFLOW_TRACKING_URI"] = uri
    mlflow.set_tracking_uri(uri)
    mlflow.MlflowClient(tracking_uri=uri).search_experiments(max_results=1)
    return uri


def quiet_logs() -> None:
    """Library INFO logs off (DSPy and MLflow turn theirs back on as they set themselves up)."""
    for name in ("dspy", "gepa", "mlflow", "LiteLLM", "httpx", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)


def run_evolve(config: Any, tracker: Any) -> tuple[Any, float]:
    """``harness.run.evolve`` with ``tracker`` entered around it (as the CLI does); returns (result, seconds)."""
    from harness.cli.console import Reporter
    from harness.run import evolve
    from harness.tracking.tracker import MlflowTracker

    quiet_logs()
    started = time.perf_counter()
    if isinstance(tracker, MlflowTracker):
        with tracker:
            result = evolve(config, tracker, Reporter(quiet=True))
    else:
        result = evolve(config, tracker, Reporter(quiet=True))
    return result, time.perf_counter() - started


def _config(**overrides: Any) -> Any:
    from harness.config import EvolveConfig

    base: dict[str, Any] = {"task_model": "test/oracle", "num_cases": None, "budget": 100, "seed": 0}
    base.update(overrides)
    return EvolveConfig(**base)


# ------------------------------------------------------------------------------------------------ sections


#: Paragraphs of discussion for the long answers: realistic LLM prose (capitalised names, numbers, a venue) that
#: carries no second ID, year, title or author, so a long answer commits to exactly what it states.
_DISCUSSION: tuple[str, ...] = (
    "The work is one of the most cited papers in machine learning. It proposed a method that was simple to "
    "implement and scaled well with data and compute, which is a large part of why it spread so quickly. "
    "Follow-up studies reproduced the main results on standard benchmarks, and many open-source libraries "
    "(for example PyTorch and TensorFlow implementations) include it as a building block.",
    "In terms of impact, the approach changed how practitioners design models: instead of hand-crafted "
    "features, it relies on representations learned end to end. The authors evaluated it on several tasks and "
    "reported consistent gains over strong baselines, often by a margin of 2 to 5 percentage points, and the "
    "ablations showed which components matter most.",
    "If you need the exact bibliographic details, the arXiv abstract page is the authoritative source: it "
    "lists every version of the submission, the full author list and the subject categories (cs.LG, cs.CL or "
    "cs.CV). Conference versions sometimes differ slightly from the preprint, so it is worth checking both "
    "before citing.",
    "A few caveats apply. Later work found that some of the original hyperparameters do not transfer to very "
    "large scales, and several variants were proposed to address stability and memory use. Still, the core "
    "idea remains a standard reference, and most textbooks written since then discuss it in detail.",
    "To summarise the key points:\n\n- the method is general and easy to reuse;\n- the reported results "
    "were reproduced independently;\n- the paper is usually cited together with its code release.\n",
)


#: The same paragraphs as chat models typeset them (``_DISCUSSION`` with each pair's first text replaced by its
#: second): curly apostrophes and quotes, em and en dashes, an ellipsis, an accented word, all outside ASCII.
_TYPESETTING: tuple[tuple[str, str], ...] = (
    ("machine learning. It proposed", "machine learning — it proposed"),
    ("(for example PyTorch and TensorFlow implementations)", "(e.g. PyTorch’s and TensorFlow’s implementations)"),
    ("instead of hand-crafted features", "instead of hand-crafted “features”"),
    ("2 to 5 percentage points", "2–5 percentage points"),
    ("the arXiv abstract page is", "the arXiv “abs” page is"),
    ("A few caveats apply.", "A few caveats apply…"),
    ("the core idea remains", "the core idea — its raison d’être — remains"),
)


def _typeset(paragraph: str) -> str:
    """``paragraph`` with the replacements of ``_TYPESETTING`` that occur in it."""
    for plain, typeset in _TYPESETTING:
        paragraph = paragraph.replace(plain, typeset)
    return paragraph


_DISCUSSION_TYPESET: tuple[str, ...] = tuple(_typeset(p) for p in _DISCUSSION)


def realistic_outputs(n: int = 5000, typographic: bool = True) -> list[tuple[str, str]]:
    """``n`` (question, output) pairs cycling over the pool's tasks: the answers task LMs give, short and long.

    Per task the mix has bare, sentence and markdown answers, wrong, hedged, evasive and empty ones, a refusal
    with numbers in it, a correction, the question echoed back, and multi-paragraph answers of about 1-4 KB
    (the answer at the start, in the middle or at the end of three to eight paragraphs of discussion); 8 of the
    21 outputs of a task are long.  Deterministic.

    ``typographic`` (the default): 7 of the 21 (a third: half the long answers, three short ones) are written
    with the typography chat models use in much of their prose, outside ASCII (curly apostrophes and quotes,
    em and en dashes, an ellipsis, an accented word: ``_TYPESETTING``); the share is chosen to resemble chat
    output, not measured on a corpus.  ``typographic=False``: the all-ASCII mix of the figures up to stop 32
    (the grade snapshot's corpus).
    """
    from verifiers.arxiv import PAPERS, ArxivVerifier

    wrong = {"id": "9912.00001", "title": "A Survey of Nothing in Particular", "author": "Zzyzx Nobody",
             "year": "1999"}
    tasks = ArxivVerifier(PAPERS).tasks()
    per_task: list[list[str]] = []
    for i, task in enumerate(tasks):
        answer, other = task.answer, wrong[task.kind]
        short = [
            answer, f"The answer is {answer}.", f"**Answer:** {answer}\n\nSource: arXiv listing.",
            f"The answer is {other}.", f"It is either {answer} or {other}.", "I'm sorry, I cannot recall that.",
            "", f"I'm sorry, I can't browse arXiv (request id 7f3a-{1000 + i}); my knowledge cut-off is 2023.",
            f"Not {other}; it is {answer}.", task.question, f"Possible answers:\n1. {answer}\n2. {other}",
            f"Sure! {answer}", f"I believe the answer is {answer}, but please double-check on arXiv.",
        ]
        if typographic:  # the refusals and the hedge as chat models typeset them
            short[5] = "I’m sorry — I can’t recall that."
            short[7] = short[7].replace("'", "’")
            short[12] = f"I believe it’s {answer} — but please double-check on arXiv."
        long = []
        for j in range(8):
            typeset = typographic and j % 2 == 1
            discussion = _DISCUSSION_TYPESET if typeset else _DISCUSSION
            paragraphs = [discussion[(i + j + k) % len(discussion)] for k in range(3 + j % 6)]
            value = answer if j % 3 else other
            statement = f"The answer to your question is {value}."
            if typeset:
                statement = f"Here’s the answer to your question: {f'“{value}”' if task.kind == 'title' else value}."
            paragraphs.insert((j % 3) * len(paragraphs) // 2, statement)
            long.append("\n\n".join(paragraphs))
        per_task.append(short + long)
    questions = [task.question for task in tasks]
    pairs = []
    for k in range(n):  # round-robin over tasks, then over each task's outputs
        t = k % len(tasks)
        outputs = per_task[t]
        pairs.append((questions[t], outputs[(k // len(tasks)) % len(outputs)]))
    return pairs


def bench_grading(seconds: float = 3.0, typographic: bool = True) -> Row:
    """``ArxivVerifier.score`` grades per second on one thread (best of at least 3 timed passes over all pairs of
    ``realistic_outputs(typographic=typographic)``).

    Timed in CPU seconds of this process (``time.process_time``), i.e. the work of one core, so that other jobs
    on a shared machine do not count as grading time.
    """
    from verifiers.arxiv import ArxivVerifier

    verifier = ArxivVerifier()
    pairs = realistic_outputs(typographic=typographic)
    score = verifier.score
    for question, output in pairs:  # warm-up (regex caches, first-use allocations)
        score(question, output)
    long_share = sum(len(output) > 1000 for _, output in pairs) / len(pairs)
    other_share = sum(not output.isascii() for _, output in pairs) / len(pairs)
    mean_chars = sum(len(output) for _, output in pairs) / len(pairs)
    rates = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(rates) < 3:
        started = time.process_time()
        for question, output in pairs:
            score(question, output)
        rates.append(len(pairs) / (time.process_time() - started))
    best = max(rates)
    mix = "typographic mix" if typographic else "all-ASCII mix (to stop 32)"
    return Row(f"verifier grading (ArxivVerifier.score, 1 thread), {mix}", f"{best:,.0f} grades/s",
               f">= {TARGET_GRADES_PER_S:,} grades/s", best >= TARGET_GRADES_PER_S,
               f"{len(pairs):,} realistic outputs ({long_share:.0%} multi-paragraph, {other_share:.0%} with curly "
               f"quotes, dashes or accents outside ASCII, {mean_chars:,.0f} chars on average: right, bare, wrong, "
               "hedged, evasive, refusals with numbers, corrections, echoes, empty, markdown); "
               f"CPU time; best of {len(rates)} passes, median {statistics.median(rates):,.0f}/s")


#: Phrases a degenerate output repeats up to the scan limit: words the grader's rules key on (negations, cues,
#: corrections, labels, brackets, a surname that is also a pronoun), each of which starts a look around it.
REPEATED_PHRASES: tuple[str, ...] = ("not ", "No, ", "Actually, ", "maybe ", "A or B? ", "He he He. ", "He said no. ",
                                     "Title: ", "**", "[", "1301.3781 ", "2013 ", "Mikolov, T. ")


def worst_case_outputs() -> list[tuple[str, str, str]]:
    """``(label, question, output)``: every phrase of ``REPEATED_PHRASES`` repeated to ``MAX_GRADED_CHARS``
    characters, asked as the first task of each kind and as the task whose first author's surname is an English
    word (the slowest author rule)."""
    from verifiers.arxiv import ArxivVerifier
    from verifiers.arxiv.matching import MAX_GRADED_CHARS
    from verifiers.arxiv.normalise import NON_CONTENT_WORDS

    verifier = ArxivVerifier()
    tasks = {}
    for task in verifier.tasks():
        tasks.setdefault(task.kind, task)
    tasks.update({f"author ({t.task_id})": t for t in verifier.tasks()
                  if t.kind == "author" and t.answer.split()[-1].lower() in NON_CONTENT_WORDS})
    return [(f"{phrase!r} x {MAX_GRADED_CHARS // len(phrase):,} on {kind}", task.question,
             (phrase * (MAX_GRADED_CHARS // len(phrase) + 1))[:MAX_GRADED_CHARS])
            for phrase in REPEATED_PHRASES for kind, task in tasks.items()]


def bench_worstcase() -> Row:
    """The slowest single ``ArxivVerifier.score`` (CPU seconds, best of 2) over :func:`worst_case_outputs`:
    degenerate outputs at the scan limit, where a rule that looks around each occurrence of its key word would
    read the text once per occurrence."""
    from verifiers.arxiv import ArxivVerifier

    score = ArxivVerifier().score
    times = []
    for label, question, output in worst_case_outputs():
        spent = []
        for _ in range(2):
            started = time.process_time()
            score(question, output)
            spent.append(time.process_time() - started)
        times.append((min(spent), label))
    times.sort(reverse=True)
    worst, label = times[0]
    return Row("worst single grade at the scan limit (ArxivVerifier.score)", f"{worst * 1e3:,.0f} ms",
               f"<= {TARGET_WORST_GRADE_S * 1e3:,.0f} ms", worst <= TARGET_WORST_GRADE_S,
               f"{len(times)} degenerate outputs of a repeated phrase; slowest: {label}; next: "
               + ", ".join(f"{t * 1e3:,.0f} ms ({lab})" for t, lab in times[1:3]) + "; CPU time, best of 2")


SHIPPED_TASK_SKILLS: tuple[str, ...] = ("unit-date-math", "tool-choice")


def taskfile_outputs() -> list[tuple[Any, str, str]]:
    """(verifier, question, output) triples over the shipped task files: for every task, the answers a task LM
    gives (right, bare, wrong, hedged, evasive, verbose, empty and markdown)."""
    from verifiers.taskfile import TaskFileVerifier, find_task_file, load_tasks

    skills = Path(__file__).resolve().parents[1] / "skills"
    pad = ("I worked through the request step by step, checked each part against the instructions, and "
           "wrote the result below in the format that was asked for. ") * 3
    wrong = {"tool_call": '{"tool": "calculator", "arguments": {}}', "json": '{"plan": ["calculator"]}',
             "choice": "web_search"}
    triples = []
    for name in SHIPPED_TASK_SKILLS:
        verifier = TaskFileVerifier(load_tasks(find_task_file(skills / name)))
        for task in verifier.tasks():
            right, other = task.answer, wrong.get(task.kind, "12345 units")  # answers are right answers
            for output in (f"The answer is {right}.", right, f"The answer is {other}.",
                           f"It is either {right} or {other}.", "I'm sorry, I cannot work that out.",
                           f"{pad}Answer: {right}", "", f"**Answer:** {right}\n\n(checked against the skill)"):
                triples.append((verifier, task.question, output))
    return triples


def _best_rate(triples: list[tuple[Any, str, str]], seconds: float, repeats: int = 5) -> tuple[float, list[float]]:
    """Best and all grades/s of timed passes (``repeats`` gradings of every triple each) for ``seconds``."""
    rates = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(rates) < 3:
        started = time.perf_counter()
        for _ in range(repeats):
            for verifier, question, output in triples:
                verifier.score(question, output)
        rates.append(repeats * len(triples) / (time.perf_counter() - started))
    return max(rates), rates


def bench_taskfile(seconds: float = 3.0) -> Row:
    """``TaskFileVerifier.score`` grades per second on one thread over the shipped task files (best of 3+
    timed passes), with the same target as the arXiv grading row; also the figure with the json checks'
    verdict memo off (every schema validated afresh, as on answers never seen before)."""
    from verifiers.taskfile.checks import Json

    triples = taskfile_outputs()
    for verifier, question, output in triples:  # warm-up
        verifier.score(question, output)
    best, rates = _best_rate(triples, seconds)
    memo_size = Json.MEMO_SIZE
    Json.MEMO_SIZE = 0  # the memo starts over on every verdict: each validation is done again
    try:
        cold, _ = _best_rate(triples, seconds / 3)
    finally:
        Json.MEMO_SIZE = memo_size
    return Row("task-file grading (TaskFileVerifier.score, shipped skills, 1 thread)", f"{best:,.0f} grades/s",
               f">= {TARGET_GRADES_PER_S:,} grades/s", best >= TARGET_GRADES_PER_S,
               f"{len(triples)} realistic outputs over {', '.join(SHIPPED_TASK_SKILLS)} (right, bare, wrong, hedged, "
               f"evasive, verbose, empty, markdown); best of {len(rates)} passes, median "
               f"{statistics.median(rates):,.0f}/s; json verdict memo off: {cold:,.0f}/s")


def warm_up(root: Path) -> None:
    """A small tracked run first, so imports and first-use costs (DSPy, GEPA, MLflow's dataset and table
    code, matplotlib) are not counted in the timed runs."""
    from harness.tracking.tracker import MlflowTracker

    use_dspy_cache(root / "warm-up-cache")
    run_evolve(_config(num_cases=12, budget=6, output_dir=str(root / "warm-up")),
               MlflowTracker("bench/warm-up", run_name="warm-up"))


def bench_overhead(num_cases: int | None = None, budget: int = 100, repeats: int = 5) -> list[Row]:
    """A full run with the zero-latency test LM into SQLite through a timed ``MlflowTracker`` with each holdout
    writer (:data:`WRITERS`), and the same run into a ``NullTracker``, each on an empty DSPy cache after
    :func:`warm_up`; runs interleaved ``repeats`` times, the best time of each kept (the medians in the detail:
    at zero LM latency a run takes about 2 s, so one slow run moves a best-of-2 ratio by a tenth or more)."""
    import mlflow.genai

    from harness.tracking.tracker import NullTracker

    config = _config(num_cases=num_cases, budget=budget)
    best: dict[str, float] = {}
    seen: dict[str, list[float]] = {}  # every run's seconds, for the medians
    trackers: dict[str, Any] = {}
    genai_calls: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-overhead-") as tmp:
        root = Path(tmp)
        use_sqlite_store(root)
        warm_up(root)
        for attempt in range(repeats):
            for name in ("null", *WRITERS):
                use_dspy_cache(root / f"cache-{name}-{attempt}")
                out = replace(config, output_dir=str(root / f"{name}-{attempt}"))
                if name == "null":
                    _, seconds = run_evolve(out, NullTracker())
                else:
                    tracker = tracker_for(name, config.experiment_name(), run_name=f"bench-overhead-{name}",
                                          timed=True)
                    with engine_call_counter() as calls, timed_attribute(mlflow.genai, "evaluate") as genai:
                        result, seconds = run_evolve(out, tracker)
                    if seconds < best.get(name, float("inf")):
                        trackers[name], genai_calls[name] = tracker, genai
                best[name] = min(seconds, best.get(name, float("inf")))
                seen.setdefault(name, []).append(seconds)
    cases = num_cases or 68
    median = {name: statistics.median(times) for name, times in seen.items()}
    lm_calls = int(result.metrics.get("lm_calls.task", calls[0]))
    null_s, after, before = best["null"], best["batch"], best["genai"]
    ratio, ratio_before = after / null_s, before / null_s
    rows = [
        Row(f"tracked / untracked run, zero-latency LM ({cases} tasks, budget {budget}), MLflow (SQLite)",
            f"{ratio:.2f}x (before {ratio_before:.2f}x)", f"<= {TARGET_TRACKED_RATIO}x", ratio <= TARGET_TRACKED_RATIO,
            f"tracked {after:.2f} s (before: {before:.2f} s through mlflow.genai.evaluate), untracked (NullTracker) "
            f"{null_s:.2f} s; best of {repeats} interleaved runs each (medians: tracked {median['batch']:.2f} s, "
            f"untracked {median['null']:.2f} s, {median['batch'] / median['null']:.2f}x); {lm_calls} task-LM calls; "
            "holdout "
            f"{len(result.splits.holdout)} tasks x 2 variants, each a trace with its LM span and every grader's "
            "assessment in both writers"),
        Row(f"full run, zero-latency LM ({cases} tasks, budget {budget}), MLflow (SQLite)", f"{after:.1f} s",
            f"< {TARGET_OVERHEAD_S:.0f} s", after < TARGET_OVERHEAD_S,
            f"before: {before:.1f} s; in-process after a warm-up run (imports not counted)"),
    ]
    for name in WRITERS:
        tracker, genai = trackers[name], genai_calls[name]
        total = best[name]
        detail = f"{tracker.calls} calls (params, metrics, tags, artifacts, tables, datasets, holdout, run start/end)"
        writer = getattr(tracker, "_writer", None)
        if writer is not None:  # the store writes queued by those calls (harness.tracking.writer)
            detail += (f"; their writes in the writer ({type(writer).__name__}: harness.tracking.worker's process, or "
                       f"a thread): {writer.seconds:.2f} s wall, {writer.cpu_seconds:.2f} s CPU, overlapping the run")
        if genai[1]:
            detail += f"; of which {genai[0]:.2f} s in {int(genai[1])} mlflow.genai.evaluate calls"
        rows.append(Row(f"  in MlflowTracker methods, holdout via {WRITERS[name]}",
                        f"{tracker.seconds:.2f} s ({tracker.seconds / total:.0%})", "", None, detail))
    return rows


def _holdout_seconds(model: str, num_threads: int, root: Path, writer: str | None) -> tuple[float, list[str]]:
    """Seconds for one holdout evaluation (baseline and evolved variants, each answered and graded by the
    verifier and keyword graders) through ``harness.run.grade_variant``, and the outputs.  ``writer``: inside
    an MLflow run (SQLite) with that holdout writer (a key of :data:`WRITERS`); None: no run."""
    import dspy

    from harness.cli.console import Reporter
    from harness.engine.graders import KeywordGrader, VerifierGrader
    from harness.models.lm import ModelSpec, build_lm
    from harness.run import grade_variant, prepare

    config = _config(task_model=model, num_threads=num_threads, output_dir=str(root / f"threads-{num_threads}"))
    setup = prepare(config)
    graders = [VerifierGrader(setup.verifier), KeywordGrader()]
    lm = build_lm(ModelSpec(model, cache=False))
    quiet = Reporter(quiet=True)
    with contextlib.ExitStack() as stack:
        tracker = None
        if writer:
            tracker = stack.enter_context(tracker_for(writer, "bench/threads", run_name=f"threads-{num_threads}"))
        stack.enter_context(dspy.context(lm=lm))
        started = time.perf_counter()
        rows = []
        for variant in ("baseline", "evolved"):
            rows += grade_variant(setup.skill.body, variant, setup, graders, num_threads, quiet, tracker)
        seconds = time.perf_counter() - started
    return seconds, [r.output for r in rows]


def bench_threads(model: str = "test/sleepy-200", threads: tuple[int, int] = (1, 8)) -> list[Row]:
    """Holdout evaluation at 1 and 8 threads with a test LM that sleeps per call: untracked (the engine's own
    threads) and in a tracked run (``mlflow.genai.evaluate``'s workers, what ``harness evolve`` does)."""
    lo, hi = threads
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-threads-") as tmp:
        root = Path(tmp)
        use_sqlite_store(root)
        warm_up(root)
        for writer in (None, *WRITERS):
            slow, slow_out = _holdout_seconds(model, lo, root, writer)
            fast, fast_out = _holdout_seconds(model, hi, root, writer)
            assert slow_out == fast_out, "threaded holdout outputs differ from serial ones"
            tasks = len(slow_out) // 4  # 2 variants x 2 graders per task
            speedup = slow / fast
            ceiling = tasks / -(-tasks // hi)
            where = f"tracked run, holdout via {WRITERS[writer]}" if writer else "no run: in-process threads"
            rows.append(Row(f"holdout evaluation, {model}, {lo} -> {hi} threads ({where})", f"{speedup:.1f}x",
                            f">= {TARGET_SPEEDUP:.0f}x", speedup >= TARGET_SPEEDUP,
                            f"{tasks} tasks x 2 variants: {slow:.2f} s -> {fast:.2f} s (ceiling with {tasks} "
                            f"tasks on {hi} threads: {ceiling:.1f}x)"))
    return rows


def bench_cache(model: str = "test/sleepy-500", num_cases: int | None = None, budget: int = 100) -> Row:
    """The same run twice on one DSPy disk cache (MLflow into SQLite), after :func:`warm_up`; the rerun starts
    with an empty memory cache, as a new process would, so its hits come from disk.  A third run, on the same
    cache, writes its holdout through ``mlflow.genai.evaluate`` (the before figure: first / that rerun)."""
    import mlflow.genai

    config = _config(task_model=model, num_cases=num_cases, budget=budget)
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp:
        root = Path(tmp)
        use_sqlite_store(root)
        warm_up(root)
        times, engine_calls, lm_calls, genai_s = [], [], [], []
        for attempt, writer in (("first", "batch"), ("rerun", "batch"), ("rerun-genai", "genai")):
            use_dspy_cache(root / "dspy-cache")
            tracker = tracker_for(writer, config.experiment_name(), run_name=f"bench-cache-{attempt}")
            with engine_call_counter() as calls, timed_attribute(mlflow.genai, "evaluate") as genai:
                result, seconds = run_evolve(replace(config, output_dir=str(root / attempt)), tracker)
            times.append(seconds)
            engine_calls.append(calls[0])
            lm_calls.append(int(result.metrics.get("lm_calls.task", 0)))
            genai_s.append(genai[0])
    speedup, before = times[0] / times[1], times[0] / times[2]
    needed = ""
    if engine_calls[0]:
        # first ~= rerun + calls x latency, so 20x needs calls x latency >= 19 x rerun
        needed = (f"; 20x needs >= {19 * times[1] / engine_calls[0] * 1000:,.0f} ms of LM latency per uncached "
                  "call at this rerun time")
    return Row(f"cached rerun ({model}, {num_cases or 68} tasks, budget {budget}, MLflow SQLite)",
               f"{speedup:.1f}x faster (before {before:.1f}x)", f">= {TARGET_CACHE_SPEEDUP:.0f}x",
               speedup >= TARGET_CACHE_SPEEDUP,
               f"first {times[0]:.1f} s, rerun {times[1]:.2f} s; before: rerun {times[2]:.2f} s with the holdout "
               f"through mlflow.genai.evaluate ({genai_s[2]:.1f} s in it; same cache and first run); LM calls "
               f"reaching the engine {engine_calls[0]} -> {engine_calls[1]} (of {lm_calls[1]} task-LM calls){needed}")


def bench_plots(num_cases: int | None = None, budget: int = 100, repeats: int = 3) -> Row:
    """The untracked zero-latency run with its plots drawn in the background (``harness.analysis.plot_jobs``)
    against the same run drawing each plot where it is asked for (before issue 18) and against the run drawing
    none (the floor: what the plots cost on the run's path is a run's time minus this), interleaved ``repeats``
    times on fresh DSPy caches, best of each; the two drawing arms must write the same plot files.  Met when the
    background leaves under a tenth of the in-line cost on the path (``TARGET_PLOTS_LEFT``)."""
    import harness.run as run_module
    from harness.analysis.plot_jobs import PlotJobs
    from harness.tracking.tracker import NullTracker

    class InlinePlots:
        """Each plot drawn at once, in the calling thread (the run's critical path)."""

        def __init__(self, cache: Any = None) -> None:  # drawn every time: no cache, as before
            self._placed: list[tuple[Path, str]] = []

        def submit(self, render: Callable[..., Path], *args: Any, artifact_path: str = "plots",
                   **kwargs: Any) -> None:
            self._placed.append((render(*args, **kwargs), artifact_path))

        def placed(self) -> list[tuple[Path, str]]:
            placed, self._placed = self._placed, []
            return placed

        def results(self) -> list[Path]:
            return [path for path, _ in self.placed()]

    class NoPlots(InlinePlots):
        """No plot drawn (the floor; loses every plot, so only for this measure)."""

        def submit(self, render: Callable[..., Path], *args: Any, artifact_path: str = "plots",
                   **kwargs: Any) -> None:
            pass

    config = _config(num_cases=num_cases, budget=budget)
    best: dict[str, float] = {}
    files: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-plots-") as tmp:
        root = Path(tmp)
        use_sqlite_store(root)
        warm_up(root)
        for attempt in range(repeats):
            for name, jobs in (("background", PlotJobs), ("inline", InlinePlots), ("none", NoPlots)):
                use_dspy_cache(root / f"cache-{name}-{attempt}")
                out = root / f"{name}-{attempt}"
                run_module.PlotJobs = jobs  # type: ignore[misc]
                try:
                    _, seconds = run_evolve(replace(config, output_dir=str(out)), NullTracker())
                finally:
                    run_module.PlotJobs = PlotJobs  # type: ignore[misc]
                best[name] = min(seconds, best.get(name, float("inf")))
                files[name] = sorted(p.name for p in out.glob("plots-*/*.png"))
    assert files["background"] == files["inline"] and files["inline"], f"plot files differ: {files}"
    inline_cost, left = best["inline"] - best["none"], best["background"] - best["none"]
    return Row(f"plots off the critical path (untracked zero-latency run, {num_cases or 68} tasks, budget {budget})",
               f"{left:.2f} s left on the path of {inline_cost:.2f} s in line", "off the path (under a tenth "
               "left), none lost", bool(files["inline"]) and left < TARGET_PLOTS_LEFT * inline_cost,
               f"{best['background']:.2f} s with the plots drawn in a background process, {best['inline']:.2f} s drawn "
               f"in line (before), {best['none']:.2f} s drawing none; best of {repeats} interleaved runs; same "
               f"{len(files['inline'])} PNG files ({', '.join(files['inline'])})")


def bench_export_runs(num_runs: int = 1000) -> Row:
    """``holdout_table`` over ``num_runs`` runs (median of 3; building the store is not timed)."""
    r = bench_export(num_runs)
    return Row(f"export of {r['runs']:,} runs (holdout_table, SQLite + local artifacts)", f"{r['seconds']:.2f} s",
               f"< {TARGET_EXPORT_S:.0f} s", r["seconds"] < TARGET_EXPORT_S,
               f"{r['rows']:,} rows; median of {', '.join(f'{t:.2f}' for t in r['times'])} s; "
               f"store built in {r['setup_seconds']:.0f} s (not timed)")


def pybugfix_pairs(tasks: Any, specs: Any) -> list[tuple[str, str]]:
    """Two variants' answers per task, as a baseline and an evolved skill give them: the unchanged buggy
    code with a sentence (fails a hidden test) and the reference fix in a fenced block with prose (passes)."""
    by_id = {spec.task_id: spec for spec in specs}
    pairs = []
    for task in tasks:
        spec = by_id[task.task_id]
        pairs.append((task.question, f"I think this is right:\n\n```python\n{spec.buggy}```"))
        pairs.append((task.question, f"The bug is in one line; fixed:\n\n```python\n{spec.fixed}```\n"
                                     f"Only that line changed."))
    return pairs


def bench_pybugfix() -> list[Row]:
    """python-bugfix grading on all cores: a 16-task holdout x 2 variants (seconds), and the whole pool x 2
    (grades/s), per sandbox (bubblewrap when it starts here, then the limits alone)."""
    import warnings

    from verifiers.pybugfix import PythonBugfixVerifier, Sandbox, SandboxWarning
    from verifiers.pybugfix.tasks import SPECS

    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxWarning)
        kinds = ["auto", "limits"] if Sandbox("auto").kind == "bubblewrap" else ["limits"]
    for mode in kinds:
        verifier = PythonBugfixVerifier(sandbox=mode)
        kind = verifier.sandbox_kind
        holdout = verifier.build_dataset(None, 0).holdout
        verifier.score_many(pybugfix_pairs(holdout[:2], SPECS))  # warm-up: the probe, page cache
        pairs = pybugfix_pairs(holdout, SPECS)
        started = time.perf_counter()
        grades = verifier.score_many(pairs)
        holdout_s = time.perf_counter() - started
        right = sum(g.composite == 1.0 for g in grades)
        pool_pairs = pybugfix_pairs(verifier.tasks(), SPECS)
        started = time.perf_counter()
        verifier.score_many(pool_pairs)
        rate = len(pool_pairs) / (time.perf_counter() - started)
        cores = os.cpu_count() or 1
        rows.append(Row(f"python-bugfix holdout grading ({len(holdout)} tasks x 2 variants, {kind}, {cores} cores)",
                        f"{holdout_s:.2f} s", f"< {TARGET_PYBUGFIX_HOLDOUT_S:g} s",
                        holdout_s < TARGET_PYBUGFIX_HOLDOUT_S,
                        f"score_many, {cores} sandboxes at once; {right}/{len(pairs)} answers scored 1.00 "
                        f"(the fixes), the rest are the unchanged buggy code"))
        rows.append(Row(f"python-bugfix grading throughput ({kind}, {cores} cores)", f"{rate:.1f} grades/s", "",
                        None, f"{len(pool_pairs)} answers (64 tasks x 2 variants), one sandboxed process each"))
    return rows


def _cli_run(args: list[str], root: Path) -> tuple[float, list[Any]]:
    """``harness <args>`` in a fresh process on a SQLite store and an empty DSPy cache in ``root``: its wall
    time (start-up included) and the runs it made (``mlflow.search_runs``, list form).

    Raises:
        RuntimeError: the command failed (its output's tail in the message).
    """
    import subprocess

    import mlflow

    uri = f"sqlite:///{root / 'mlflow.db'}"
    env = {**os.environ, "MLFLOW_TRACKING_URI": uri}
    env.pop("MLFLOW_RUN_ID", None)
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "harness.cli", *args, "--cache-dir", str(root / "cache"),
                           "--quiet"], cwd=root, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"harness {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-1500:]}")
    return seconds, mlflow.MlflowClient(tracking_uri=uri).search_runs(
        [e.experiment_id for e in mlflow.MlflowClient(tracking_uri=uri).search_experiments()])


def _evolution_runs(runs: list[Any]) -> list[Any]:
    """The evolution runs among ``runs`` (those with a ``wall_time_s`` metric): a run's holdout evaluation runs
    (experiment ``<experiment>/holdout``) and a side-by-side parent have none."""
    return [r for r in runs if "wall_time_s" in r.data.metrics]


def _statistics_row(root: Path, run_id: str, grader: str) -> dict[str, Any]:
    """``grader``'s row of the run's long-tail statistics table (``harness.artifacts.STATS_TABLE``, MLflow's table
    JSON: ``columns`` and ``data``), where the per-variant unscored counts live since issue 16; empty when the
    run has none."""
    import json

    import mlflow

    from harness import artifacts

    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{root / 'mlflow.db'}")
    with tempfile.TemporaryDirectory(prefix="bench-stats-") as dst:
        table = json.loads(Path(client.download_artifacts(run_id, artifacts.STATS_TABLE, dst)).read_text())
    rows = [dict(zip(table["columns"], row, strict=True)) for row in table["data"]]
    return next((row for row in rows if row.get("grader") == grader), {})


def _store_folder(prefix: str, keep: Path | None) -> contextlib.AbstractContextManager[str]:
    """A fresh folder for one embedded section's store and cache: a temporary one, or ``keep/<prefix>`` (kept
    after the bench, so its runs can be read in the MLflow UI or by ``harness report``) when ``keep`` is given.

    Raises:
        FileExistsError: ``keep/<prefix>`` exists already (a kept store is never mixed with an older one).
    """
    if keep is None:
        return tempfile.TemporaryDirectory(prefix=f"bench-{prefix}-")
    folder = keep / prefix
    folder.mkdir(parents=True)
    return contextlib.nullcontext(str(folder))


def bench_lmshare(keep: Path | None = None) -> Row:
    """The README's main job (``harness evolve --skill arxiv --fitness verifier``: embedded model, budget 60,
    every task) in a fresh process with an empty cache: the LM's share of the time (``lm_time_s.total`` over
    the run's ``wall_time_s``, and over the process's wall time) and the calls made."""
    with _store_folder("lmshare", keep) as tmp:
        seconds, runs = _cli_run(["evolve", "--skill", "arxiv", "--fitness", "verifier"], Path(tmp))
    metrics = _evolution_runs(runs)[0].data.metrics
    lm, wall = metrics["lm_time_s.total"], metrics["wall_time_s"]
    harness_share = (wall - lm) / lm
    return Row("README main job, embedded model, empty cache: harness time over LM time", f"{harness_share:.0%}",
               f"< {TARGET_HARNESS_SHARE:.0%}", harness_share < TARGET_HARNESS_SHARE,
               f"LM {lm:.1f} s of the run's {wall:.1f} s ({lm / wall:.0%}); process {seconds:.1f} s with start-up "
               f"(LM {lm / seconds:.0%} of it); {int(metrics['lm_calls.total'])} LM calls "
               f"({int(metrics['lm_calls.uncached'])} uncached)")


def bench_compare(keep: Path | None = None) -> Row:
    """The README's side-by-side on the embedded defaults (``harness compare --skill arxiv``: keyword, judge and
    verifier arms, gepa, one seed) in a fresh process with an empty cache: wall time, each arm's time and
    how many of the judge's grades were unscored."""
    with _store_folder("compare", keep) as tmp:
        seconds, runs = _cli_run(["compare", "--skill", "arxiv"], Path(tmp))
        children = [r for r in _evolution_runs(runs) if "mlflow.parentRunId" in r.data.tags]
        judge = next((r for r in children if r.data.tags.get("fitness") == "judge"), None)
        judge_stats = _statistics_row(Path(tmp), judge.info.run_id, "judge") if judge is not None else {}
    arms = ", ".join(f"{r.data.tags.get('fitness')} {r.data.metrics.get('wall_time_s', float('nan')):.0f} s "
                     f"({int(r.data.metrics.get('gepa.proposals', 0))} proposals, "
                     f"{int(r.data.metrics.get('gepa.accepted', 0))} accepted)" for r in children)
    unscored = ""
    if judge is not None:
        m = judge.data.metrics
        unscored = (f"; judge unscored: fitness {int(m.get('fitness.unscored', 0))}/{int(m.get('fitness.grades', 0))}"
                    f", holdout {int(judge_stats.get('baseline.unscored', 0))} baseline + "
                    f"{int(judge_stats.get('evolved.unscored', 0))} evolved")
    return Row("side-by-side on the embedded defaults (3 arms, 2 cores)", f"{seconds:.0f} s",
               f"< {TARGET_COMPARE_S:.0f} s", seconds < TARGET_COMPARE_S, f"arms: {arms}{unscored}")


# ------------------------------------------------------------------------------------------------ output


def render(rows: list[Row], info: dict[str, str]) -> str:
    """The machine, the note on test LMs, and the markdown table."""
    lines = [f"machine: {info['nproc']} CPUs ({info['cpu']}), {info['python']}, {info['os']}, "
             f"load average at start {info['load']}",
             f"packages: {info['packages']}", f"note: {OFFLINE_NOTE}", "",
             "| measure | result | target | met | detail |", "|---|---|---|---|---|"]
    for row in rows:
        met = "" if row.met is None else ("yes" if row.met else "**no**")
        lines.append(f"| {row.measure} | {row.result} | {row.target} | {met} | {row.detail} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the selected sections and print the table; exit code 0 even when a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(s for s in SECTIONS if s not in EMBEDDED_SECTIONS),
                        help=f"comma list of {', '.join(SECTIONS)} (default: all but {', '.join(EMBEDDED_SECTIONS)},"
                             " which run the embedded model for minutes)")
    parser.add_argument("--export-runs", type=int, default=1000, help="runs in the export benchmark's store")
    parser.add_argument("--budget", type=int, default=100, help="GEPA budget of the full runs")
    parser.add_argument("--cache-models", default="test/sleepy-500",
                        help="test LMs of the cached-rerun benchmark (comma list, one row each)")
    parser.add_argument("--keep-stores", type=Path, default=None,
                        help="keep the stores of the embedded sections (lmshare, compare) in this folder")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")

    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    quiet_logs()
    info = machine_info()
    print(f"benchmarking {', '.join(chosen)} on {info['nproc']} CPUs ({info['cpu']}) ...", file=sys.stderr)
    rows: list[Row] = []
    runners: dict[str, Callable[[], Row | list[Row]]] = {
        "grading": lambda: [bench_grading(), bench_grading(typographic=False)],
        "worstcase": bench_worstcase,
        "taskfile": bench_taskfile,
        "overhead": lambda: bench_overhead(budget=args.budget),
        "threads": bench_threads,
        "cache": lambda: [bench_cache(model, budget=args.budget) for model in args.cache_models.split(",")],
        "plots": lambda: bench_plots(budget=args.budget),
        "lmshare": lambda: bench_lmshare(args.keep_stores),
        "compare": lambda: bench_compare(args.keep_stores),
        "export": lambda: bench_export_runs(args.export_runs),
        "pybugfix": bench_pybugfix,
    }
    table_out = sys.stdout
    # progress bars (DSPy, GEPA) and MLflow's evaluation notes go to stderr: stdout carries only the table
    with contextlib.redirect_stdout(sys.stderr):
        for section in SECTIONS:
            if section in chosen:
                started = time.perf_counter()
                out = runners[section]()
                rows.extend(out if isinstance(out, list) else [out])
                print(f"  {section}: done in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    print(render(rows, info), file=table_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
