"""Snapshot every field of the arXiv verifier's grades over a large fixed corpus, and compare a later version to it.

A speed change to the grader must change no grade.  ``build`` grades a corpus and stores the inputs with every
field of every grade (correctness, well_formed, conciseness, composite, feedback; the reason of an ``Unscored``);
``compare`` grades the stored inputs with the code on ``PYTHONPATH`` and lists every difference.

The corpus: (a) the bench's 5,000 realistic outputs (``bench.realistic_outputs``); (b) every string constant of
``tests/test_arxiv_verifier.py`` and, with ``--pairs``, every output a recorded test run graded, each against all
68 tasks; (c) ``--random`` seeded random strings built from fragments of real answers (IDs, years, dates, titles,
names, hedges, negations, refusals, metadata labels, markdown, LaTeX, non-ASCII, long padding), each against one
task of every kind; (d) answers over ``MAX_GRADED_CHARS`` characters against all tasks.

Usage::

    python experiments/bench/grade_snapshot.py build /tmp/grades.pickle.gz [--pairs test_pairs.json]
    python experiments/bench/grade_snapshot.py compare /tmp/grades.pickle.gz
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import pickle
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench, when run as a script

ROOT = Path(__file__).resolve().parents[2]
Pair = tuple[str, str]


def grade_fields(grade: Any) -> tuple[Any, ...]:
    """Every field of a grade, with its type name (an ``Unscored`` gives its reason)."""
    if hasattr(grade, "reason"):
        return (type(grade).__name__, grade.reason)
    return (type(grade).__name__, grade.correctness, grade.well_formed, grade.conciseness, grade.composite,
            grade.feedback)


def _test_strings() -> list[str]:
    """Every string constant in the arXiv verifier's tests."""
    tree = ast.parse((ROOT / "tests" / "test_arxiv_verifier.py").read_text(encoding="utf-8"))
    found = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    return sorted(found)


def _fragments(tasks: list[Any], papers: list[Any]) -> list[str]:
    """Pieces of real answers and of the text around them."""
    from bench import _DISCUSSION

    frags: list[str] = []
    for p in papers:
        i, t, a = p.arxiv_id, p.title, p.first_author
        words = t.split()
        frags += [i, f"{i}v2", f"arXiv:{i}", f"https://arxiv.org/abs/{i}v1", f"{i[:5]}{int(i[5:]) + 1}",
                  t, t.lower(), t.upper(), f'"{t}"', f"“{t}”", f"*{t}*", f"**{t}**", f"`{t}`", f"'{t}'",
                  t.replace("-", " "), t.replace(" ", "  "), " ".join(words[: len(words) // 2 + 1]),
                  " ".join(reversed(words)), f"{t} in Speech Separation", f"Self-{t}", f"{t}: A Survey",
                  f"Towards {t}", f"{t} Revisited", a, p.last_name, f"{p.given_name[0]}. {p.last_name}",
                  f"{p.last_name} et al.", f"{p.last_name}, {p.given_name[0]}.", f"{p.last_name}, {p.given_name}",
                  p.given_name, a.upper(), a.lower(), str(p.year), str(p.year + 1), f"{p.year}-06-12",
                  f"12/06/{p.year}", f"{p.year}.06.12", f"06.12.{p.year}", f"{p.year}/13/40"]
    for task in tasks[::3]:
        frags += [task.question, task.expected_behavior]
    frags += list(_DISCUSSION)
    frags += [
        " or ", " / ", "maybe ", "perhaps ", "possibly ", "either ", " vs. ", ", possibly ", "; maybe ", " nor ",
        "not ", "Not ", "isn't ", "rather than ", "instead of ", "never ", "as opposed to ", "other than ",
        "unlike ", "except ", "? No - ", ", or rather ", ", sorry, ", " is wrong", " wait, ", "correction: ",
        "I'm sorry, I can't browse arXiv", "I don't know", "As an AI language model, ", "I cannot verify this",
        "not sure", " but ", " however, ", "my best guess is ", "I think ", "probably ", "I am unable to access",
        "no idea", "beyond my knowledge", "I don't have access to the internet",
        "request id ", "(request id 7f3a-2019)", "knowledge cut-off ", "my knowledge cut-off is 2023", "as of ",
        "ticket #", "error code ", "session ID: ", "trace id=", "last updated in ", "training data up to ",
        " is the second author", "the last author is ", " (co-author)", " was not the first author",
        "the first author is ", "second author: ", "written by ", " and ", ", ", "Jimmy Ba", "Noam Shazeer",
        "Ilya Sutskever", "Yoshua Bengio", "Zzyzx Nobody",
        "**", "*", "_", "`", "```\n", "```", "# ", "## ", "- ", "* ", "1. ", "2) ", "(a) ", "\n", "\n\n", "> ",
        "Title: ", "**Answer:** ", "Answer: ", "Final answer: ", "Authors: ", "Year: ", "Option 2 - ",
        "“", "”", "‘", "’", "«", "»", '"', "'", "(", ")", "[", "]", ":", ";", ".", "!", "?", "...", "—", "–",
        "\\textbf{", "\\emph{", "}", "{", "$16\\times16$", "×", "``", "''", "$", "\\", "\\times ",
        "é", "Ü", "ß", "İ", "ﬁ", "Ωmega", "Ваня", "ΑΒΓ", "\u200b", "\u00a0", "🙂", "\t", "\r\n", "\x00", "\ud800",
        "Great question!", "Sure! ", "Thanks for asking.", "Hmm, okay.", "N/A", "Unknown.", "The answer is ",
        "It is ", "The paper is ", "I believe it was ", "Here you go: ", "16x16", "2D", "3.11.2", "12345.6789",
        "2005.14165.1", "19999", "1999", "2099", "1899", "0.5", "v2", "arXiv", "cs.LG", "NeurIPS 2017",
        "Google Brain", "Deep Learning", "A Survey of Nothing in Particular", "9912.00001", "1706.03799",
        "Attention Is All You Want", "Self-Attention Networks for Translation",
    ]
    return frags


def random_strings(count: int, seed: int, frags: list[str]) -> list[str]:
    """``count`` strings of 1 to 15 random fragments with random separators, some padded to a few KB."""
    rng = random.Random(seed)
    seps = [" ", "", "\n", ", ", ". ", "\n\n", " - ", ": ", "; "]
    out = []
    for k in range(count):
        parts = [rng.choice(frags) for _ in range(rng.randint(1, 15))]
        text = "".join(p + rng.choice(seps) for p in parts)
        if k % 7 == 0:
            pad = rng.choice(frags[-60:]) * rng.randint(1, 40)
            text = pad + text if rng.random() < 0.5 else text + pad
        if k % 11 == 0:
            text = text.strip()
        out.append(text)
    return out


def huge_outputs(tasks: list[Any]) -> list[str]:
    """Answers over the scan limit: the answer before, across and after the limit, ASCII and not."""
    from verifiers.arxiv import MAX_GRADED_CHARS

    pad = "and so on, and so forth. " * (MAX_GRADED_CHARS // 25 + 2)
    answers = " ".join(t.answer for t in tasks[:8])
    uni = "Ünïcödé pådding — “quoted” ‘words’ İ. " * (MAX_GRADED_CHARS // 38 + 2)
    ids = " ".join(f"{1000 + k % 1200}.{k:05d}" for k in range(30_000))
    return [pad + answers, answers + pad, pad[: MAX_GRADED_CHARS - 10] + answers + pad, uni + answers,
            answers + "\n" + uni, ids, "A" * 250_000, ("Attention Is All You Need or " * 9000)]


def corpus(pairs_file: Path | None, n_random: int, seed: int) -> list[Pair]:
    """The (task_input, output) pairs of the snapshot, in a fixed order."""
    from bench import realistic_outputs

    from verifiers.arxiv import PAPERS, ArxivVerifier

    tasks = list(ArxivVerifier().tasks())
    questions = [t.question for t in tasks]
    pairs: list[Pair] = list(realistic_outputs(typographic=False))  # the mix the stored snapshots were built on
    outputs = dict.fromkeys(_test_strings())
    if pairs_file is not None:
        recorded = json.loads(pairs_file.read_text(encoding="utf-8"))
        pairs += [(q, o) for q, o in recorded]
        outputs.update(dict.fromkeys(o for _, o in recorded if isinstance(o, str)))
    pairs += [(q, o) for o in outputs for q in questions]
    by_kind: dict[str, list[str]] = {}
    for t in tasks:
        by_kind.setdefault(t.kind, []).append(t.question)
    rng = random.Random(seed + 1)
    for text in random_strings(n_random, seed, _fragments(tasks, list(PAPERS))):
        pairs += [(rng.choice(qs), text) for qs in by_kind.values()]
    pairs += [(q, o) for o in huge_outputs(tasks) for q in questions]
    pairs += [("not a known question", "1706.03762")]
    return pairs


def grade_all(pairs: list[Pair]) -> list[tuple[Any, ...]]:
    from verifiers.arxiv import ArxivVerifier

    score = ArxivVerifier().score
    return [grade_fields(score(q, o)) for q, o in pairs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["build", "compare"])
    parser.add_argument("snapshot", type=Path)
    parser.add_argument("--pairs", type=Path, help="JSON list of [task_input, output] recorded from a test run")
    parser.add_argument("--random", type=int, default=25_000, help="random strings (build)")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--show", type=int, default=10, help="differences printed (compare)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.action == "build":
        pairs = corpus(args.pairs, args.random, args.seed)
        grades = grade_all(pairs)
        with gzip.open(args.snapshot, "wb") as f:
            pickle.dump({"pairs": pairs, "grades": grades}, f, protocol=pickle.HIGHEST_PROTOCOL)
        print(f"{len(pairs):,} grades stored in {args.snapshot} ({time.perf_counter() - started:.1f} s)")
        return 0
    with gzip.open(args.snapshot, "rb") as f:
        stored = pickle.load(f)
    pairs, want = stored["pairs"], stored["grades"]
    got = grade_all(pairs)
    diffs = [k for k, (a, b) in enumerate(zip(want, got, strict=True)) if a != b]
    for k in diffs[: args.show]:
        q, o = pairs[k]
        print(f"#{k}: {q!r}\n  output {o[:200]!r}{'...' if len(o) > 200 else ''}\n  was {want[k]}\n  now {got[k]}")
    print(f"{len(pairs):,} grades compared, {len(diffs):,} differences ({time.perf_counter() - started:.1f} s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
