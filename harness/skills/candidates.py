"""Hand-written candidate SKILL.md files for an A/B comparison: find them, load them, refuse what the gates refuse.

A candidate is a whole SKILL.md (frontmatter and body) that is to be compared with a baseline of the same skill.
Only the body may differ, as for an evolved skill: a candidate whose frontmatter differs is refused with a
unified diff of the two frontmatter blocks, and every other gate of :func:`harness.skills.gates.check_evolved`
(size, growth, headings, ...) applies unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.skills.diff import unified_diff
from harness.skills.files import SKILL_FILENAME, Skill, SkillError, load_skill
from harness.skills.gates import check_evolved

#: longest frontmatter diff shown in a refusal, in lines (a frontmatter block is a few lines)
MAX_DIFF_LINES = 20


class CandidateError(SkillError):
    """A candidate cannot be compared: its frontmatter differs from the baseline's, or it fails a gate.

    The message names the file, says what is wrong (the frontmatter diff, or every failing gate) and the fix.
    """


@dataclass(frozen=True)
class Candidate:
    """One checked candidate.

    Attributes:
        name: a short label: the file's stem (``variants/hedge.md`` -> ``hedge``), or for a ``SKILL.md`` its
            folder's name.
        skill: the parsed file.
    """

    name: str
    skill: Skill


def candidate_name(path: Path) -> str:
    """The label of a candidate file: its folder's name for a ``SKILL.md``, else its stem."""
    path = Path(path)
    return path.parent.name if path.name == SKILL_FILENAME else path.stem


def frontmatter_diff(baseline: Skill, candidate: Skill) -> str:
    """A unified diff of the two frontmatter blocks (``""`` when equal), cut to :data:`MAX_DIFF_LINES` lines."""
    diff = unified_diff(baseline.frontmatter_text, candidate.frontmatter_text, "frontmatter")
    lines = diff.splitlines()
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"... ({len(lines) - MAX_DIFF_LINES} more diff lines)"]
    return "\n".join(lines)


def same_frontmatter(baseline: Skill, other: Skill, role: str) -> None:
    """Refuse ``other`` unless its frontmatter block is byte for byte the baseline's.

    Raises:
        CandidateError: naming the file and showing the frontmatter diff.
    """
    if other.frontmatter_text == baseline.frontmatter_text:
        return
    diff = frontmatter_diff(baseline, other)
    raise CandidateError(
        f"{other.path}: the {role}'s frontmatter differs from the baseline's ({baseline.path}); only the body may "
        f"change, so copy the baseline's frontmatter:\n{diff or '(the blocks differ only in line endings)'}")


def load_candidate(path: Path, baseline: Skill, *, stock_instructions: str = "") -> Candidate:
    """Load the SKILL.md at ``path`` and check it against ``baseline`` with the gates of an evolved skill.

    Args:
        path: a candidate file (any name) or a folder holding a ``SKILL.md``.
        baseline: the skill the candidate is compared with.
        stock_instructions: the optimizer's default instructions (a body equal to them is refused).
    Raises:
        SkillError: the file is missing, unreadable, not UTF-8, too large or not a SKILL.md (no frontmatter,
            bad YAML, empty body).
        CandidateError: the frontmatter differs (with its diff) or another gate fails (with every reason).
    """
    skill = load_skill(Path(path))
    same_frontmatter(baseline, skill, "candidate")
    gate = check_evolved(baseline, skill.text, stock_instructions=stock_instructions)
    if not gate.passed:
        raise CandidateError(f"{skill.path}: the candidate fails the gates of an evolved skill: "
                             + "; ".join(gate.reasons))
    return Candidate(candidate_name(skill.path), skill)


def candidate_files(folder: Path) -> list[Path]:
    """The candidates in ``folder``: every ``*.md`` file in it and every ``<folder>/*/SKILL.md``, sorted.

    Raises:
        SkillError: ``folder`` is not a directory, holds no candidate, or two candidates share a label.
    """
    folder = Path(folder)
    if not folder.is_dir():
        problem = "is not a directory" if folder.exists() else "does not exist"
        raise SkillError(f"candidates folder {folder} {problem}; pass a folder of *.md files or */SKILL.md")
    paths = sorted({*(p for p in folder.glob("*.md") if p.is_file()),
                    *(p for p in folder.glob(f"*/{SKILL_FILENAME}") if p.is_file())})
    if not paths:
        raise SkillError(f"candidates folder {folder} holds no *.md file and no */{SKILL_FILENAME}")
    labels: dict[str, Path] = {}
    for path in paths:
        other = labels.setdefault(candidate_name(path), path)
        if other != path:
            raise SkillError(f"candidates {other} and {path} have the same label {candidate_name(path)!r}; "
                             "rename one")
    return paths
