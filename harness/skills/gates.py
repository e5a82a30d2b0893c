"""Constraint gates on an evolved skill.

The optimizer proposes a new body for a SKILL.md (Anthropic Agent Skills / Hermes agent skills
format: YAML frontmatter between ``---`` lines, then a markdown body).  Before a candidate is kept
it must pass every gate below.  Gates are checked on the reassembled file (frontmatter + body),
not on the body alone, so the unchanged baseline always passes the growth and frontmatter gates.

Gates (all evaluated; every failing one contributes a reason):

* size: at most :data:`MAX_SKILL_CHARS` characters for the whole file;
* growth: at most :data:`MAX_GROWTH` (a fraction) larger than the baseline file, in characters;
* frontmatter: byte-for-byte identical to the baseline's frontmatter block;
* non-empty body;
* no second frontmatter block emitted by the optimizer at the start of the body;
* every markdown ATX heading of the baseline body is still present;
* the body is not just the stock (default) instructions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from harness.skills.files import Skill, SkillError, is_delimiter, split_frontmatter

#: Largest evolved SKILL.md, in characters of the reassembled file.
MAX_SKILL_CHARS = 15_000
#: Largest allowed growth over the baseline file, as a fraction (0.20 = 20 %).
MAX_GROWTH = 0.20

_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LINE_BREAK_RE = re.compile(r"\r?\n")
_YAML_KEY_RE = re.compile(r"^[A-Za-z_][\w.-]*[ \t]*:(?:[ \t]|$)")


@dataclass(frozen=True)
class GateResult:
    """Outcome of :func:`check_evolved`.

    Attributes:
        passed: True when every gate passed.
        reasons: one human-readable reason per failed gate, in gate order; empty when passed.
        checks: ``(gate, status, reason)`` per gate in gate order; status is ``passed``, ``failed`` or
            ``not run`` (a gate that was disabled or could not apply, never reported as passed).
    """

    passed: bool
    reasons: tuple[str, ...]
    checks: tuple[tuple[str, str, str], ...] = field(default=(), compare=False)  # detail, not the outcome


def _lines(text: str) -> list[str]:
    """Lines of ``text`` without line endings (LF or CRLF, as in :mod:`harness.skills.files`)."""
    return _LINE_BREAK_RE.split(text)


def _outside_fences(lines: list[str]) -> Iterator[str]:
    """Yield lines not inside fenced code blocks (``` or ~~~), so ``# comment`` in code is skipped."""
    fence: str | None = None
    for line in lines:
        match = _FENCE_RE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and match and match.group(1).startswith(fence[0] * len(fence)):
            fence = None
        elif fence is None:
            yield line


def headings(body: str) -> list[str]:
    """ATX headings of a markdown body, normalised to ``"## Text"``, in order, without repeats.

    Lines inside fenced code blocks are ignored; closing ``#`` sequences and surrounding
    whitespace are dropped.
    """
    found: list[str] = []
    for line in _outside_fences(_lines(body)):
        match = _HEADING_RE.match(line)
        if match:
            heading = f"{match.group(1)} {(match.group(2) or '').strip()}".strip()
            if heading not in found:
                found.append(heading)
    return found


def leading_frontmatter_block(body: str) -> str | None:
    """The frontmatter-looking block at the start of ``body``, or None.

    After optional blank lines: a ``---`` line, YAML-ish lines (``#`` comment lines aside, the
    first is a ``key:`` line and every unindented one is a ``key:`` line), then a closing ``---``
    line.  This is what an optimizer emits when it repeats the header.
    """
    lines = _lines(body)
    index = 0
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index >= len(lines) or not is_delimiter(lines[index]):
        return None
    inner: list[str] = []
    for line in lines[index + 1:]:
        if is_delimiter(line):
            return "\n".join(inner) if _looks_like_yaml(inner) else None
        inner.append(line)
    return None


def _looks_like_yaml(lines: list[str]) -> bool:
    """True if the lines look like a YAML mapping (see :func:`leading_frontmatter_block`)."""
    content = [line for line in lines if line.strip() and not line.startswith("#")]
    if not content or not _YAML_KEY_RE.match(content[0]):
        return False
    return all(_YAML_KEY_RE.match(line) for line in content if not line[0].isspace())


def _percent(fraction: float) -> str:
    """``0.34 -> '34%'``; one decimal when whole-percent rounding would hide a breach."""
    text = f"{fraction:.0%}"
    return f"{fraction:.1%}" if text == f"{MAX_GROWTH:.0%}" else text


def _size_reason(text: str) -> str | None:
    """Reason if the reassembled file exceeds MAX_SKILL_CHARS."""
    if len(text) > MAX_SKILL_CHARS:
        return f"size {len(text):,} characters exceeds the {MAX_SKILL_CHARS:,} limit"
    return None


def _growth_reason(baseline: Skill, text: str) -> str | None:
    """Reason if the file grew more than MAX_GROWTH over the baseline file (in characters)."""
    base = len(baseline.text)
    growth = (len(text) - base) / base if base else 0.0
    if growth > MAX_GROWTH:
        return (
            f"grew {_percent(growth)} over the baseline ({base:,} -> {len(text):,} characters; "
            f"limit {MAX_GROWTH:.0%})"
        )
    return None


def _first_difference(a: str, b: str) -> int:
    """1-based line number of the first differing line of ``a`` and ``b``."""
    a_lines, b_lines = a.splitlines(keepends=True), b.splitlines(keepends=True)
    for number, (left, right) in enumerate(zip(a_lines, b_lines, strict=False), start=1):
        if left != right:
            return number
    return min(len(a_lines), len(b_lines)) + 1


def _frontmatter_reason(baseline: Skill, frontmatter_text: str | None, error: str | None) -> str | None:
    """Reason if the evolved frontmatter is missing/unparseable or differs from the baseline's."""
    if error is not None:
        return f"evolved skill does not parse: {error}"
    if frontmatter_text != baseline.frontmatter_text:
        line = _first_difference(baseline.frontmatter_text, frontmatter_text or "")
        return (
            f"frontmatter differs from the baseline's (first difference at line {line}); "
            f"only the body may change"
        )
    return None


def _second_frontmatter_reason(baseline: Skill, body: str) -> str | None:
    """Reason if the body starts with a frontmatter-looking block the baseline body did not have."""
    block = leading_frontmatter_block(body)
    if block is not None and block != leading_frontmatter_block(baseline.body):
        return "body starts with a second frontmatter block ('---', key: lines, '---'); remove it"
    return None


def _headings_reason(baseline: Skill, body: str) -> str | None:
    """Reason naming the baseline headings missing from the evolved body."""
    present = set(headings(body))
    missing = [h for h in headings(baseline.body) if h not in present]
    if not missing:
        return None
    if len(missing) == 1:
        return f"heading '{missing[0]}' of the baseline is missing"
    return f"headings {', '.join(repr(h) for h in missing)} of the baseline are missing"


def _body_reasons(body: str, stock_instructions: str) -> list[str]:
    """Reasons for an empty body or one that is just the stock instructions."""
    if not body.strip():
        return ["body is empty; the body is the skill's instruction text"]
    stock = stock_instructions.strip()
    if stock and body.strip() == stock:
        return ["body equals the stock instructions; the optimizer fell back to the default prompt"]
    return []


def _split(evolved_text: str, baseline: Skill) -> tuple[str | None, str, str | None]:
    """``(frontmatter_text, body, error)`` of the evolved text; without frontmatter the whole text
    counts as the body so the body gates still say something useful."""
    try:
        frontmatter_text, _, body = split_frontmatter(evolved_text, baseline.path)
    except SkillError as exc:
        return None, evolved_text, str(exc)
    return frontmatter_text, body, None


def check_evolved(baseline: Skill, evolved_text: str, *, stock_instructions: str = "") -> GateResult:
    """Check an evolved SKILL.md text against the baseline skill.

    Args:
        baseline: the skill as loaded before evolution.
        evolved_text: the reassembled evolved file (normally ``baseline.with_body(new_body)``);
            a leading BOM is ignored.
        stock_instructions: the optimizer's default instructions; a body equal to them (after
            stripping) is rejected.  Empty disables that gate.

    Returns:
        A :class:`GateResult`; all gates are evaluated and every failure gives one reason.
        Never raises for bad candidate text: parse problems become reasons.
    """
    text = evolved_text.removeprefix("\ufeff")
    frontmatter_text, body, error = _split(text, baseline)
    body_reasons = _body_reasons(body, stock_instructions)
    empty = bool(body_reasons) and not body.strip()
    checks = [
        ("size", _size_reason(text)),
        ("growth", _growth_reason(baseline, text)),
        ("frontmatter", _frontmatter_reason(baseline, frontmatter_text, error)),
        ("non-empty body", body_reasons[0] if empty else None),
        ("not the stock instructions", None if empty else (body_reasons[0] if body_reasons else None)),
        ("no second frontmatter", _second_frontmatter_reason(baseline, body)),
        ("headings kept", _headings_reason(baseline, body)),
    ]
    reasons = tuple(reason for _, reason in checks if reason)
    # the stock-instructions gate does not run without stock instructions, nor on an empty body
    skipped = {"not the stock instructions"} if empty or not stock_instructions.strip() else set()
    statuses = tuple((name, "not run" if name in skipped else "failed" if reason else "passed", reason or "")
                     for name, reason in checks)
    return GateResult(passed=not reasons, reasons=reasons, checks=statuses)
