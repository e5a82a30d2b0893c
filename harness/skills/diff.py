"""An evolved skill as a file: the baseline's frontmatter with a candidate body, and its diff to the baseline."""

from __future__ import annotations

import difflib

from harness.skills.files import Skill


def evolved_skill_text(skill: Skill, instructions: str) -> str:
    """The SKILL.md of a candidate: the baseline's frontmatter, then ``instructions`` as the body.

    DSPy strips the whitespace around signature instructions, so a candidate equal to the baseline body up to
    that whitespace *is* the baseline: its text is returned byte for byte (no diff, no new registry version).
    Any other candidate ends the way the baseline body ends (its trailing newline kept).
    A CRLF skill stays CRLF: the candidate's line endings (LF from DSPy and the proposers) follow the file's.
    """
    if instructions.strip() == skill.body.strip():
        return skill.text
    body_tail = skill.body[len(skill.body.rstrip()):]
    body = instructions.rstrip() + body_tail
    if skill.crlf:
        body = body.replace("\r\n", "\n").replace("\n", "\r\n")
    return skill.with_body(body)


def unified_diff(before: str, after: str, name: str) -> str:
    """A unified diff of two skill texts (``a/<name>`` -> ``b/<name>``); ``""`` when they are equal."""
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))
