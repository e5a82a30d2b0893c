"""Tests for harness.skills.gates: each constraint gate on an evolved SKILL.md, alone and together."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.skills.files import Skill, load_skill
from harness.skills.gates import (
    MAX_GROWTH,
    MAX_SKILL_CHARS,
    GateResult,
    check_evolved,
    headings,
    leading_frontmatter_block,
)

FRONTMATTER = "---\nname: demo\ndescription: A demo skill.\nmetadata:\n  name: inner\n---\n"
BODY = (
    "# Demo\n\nUse this skill to demo things.\n\n## Steps\n\n1. Look.\n2. Do.\n\n"
    "```bash\n# not a heading\necho hi\n```\n\n## Notes\n\nBe brief.\n"
    + "Keep the answer grounded in what the tools returned; say so when unsure.\n" * 6
)
STOCK = "Given the fields `task`, produce the fields `answer`."


def make_baseline(
    tmp_path: Path, body: str = BODY, frontmatter: str = FRONTMATTER, raw: bytes = b""
) -> Skill:
    """Write and load a baseline SKILL.md."""
    path = tmp_path / "demo" / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw or (frontmatter + body).encode())
    return load_skill(path)


def assert_only(result: GateResult, *fragments: str) -> None:
    """The result failed with exactly one reason containing every fragment."""
    assert not result.passed
    assert len(result.reasons) == 1, result.reasons
    for fragment in fragments:
        assert fragment in result.reasons[0]


@pytest.mark.parametrize(
    "raw",
    [
        (FRONTMATTER + BODY).encode(),
        (FRONTMATTER + BODY).replace("\n", "\r\n").encode(),
        b"\xef\xbb\xbf" + (FRONTMATTER + BODY).replace("\n", "\r\n").encode(),
    ],
    ids=["lf", "crlf", "bom-crlf"],
)
def test_unchanged_baseline_passes(tmp_path: Path, raw: bytes) -> None:
    baseline = make_baseline(tmp_path, raw=raw)
    result = check_evolved(baseline, baseline.with_body(baseline.body), stock_instructions=STOCK)
    assert result == GateResult(passed=True, reasons=())
    assert check_evolved(baseline, raw.decode("utf-8")).passed


def test_reasonable_edit_passes(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path)
    body = BODY.replace("Be brief.", "Be brief and cite the source.")
    assert check_evolved(baseline, baseline.with_body(body), stock_instructions=STOCK).passed


def test_size_gate(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path, body=BODY + "x" * 13_000 + "\n")
    evolved = baseline.with_body(baseline.body + "y" * (15_100 - len(baseline.text)))
    assert len(evolved) == 15_100
    assert_only(check_evolved(baseline, evolved), "size 15,100 characters exceeds the 15,000 limit")


def test_size_gate_boundary(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path, body=BODY + "x" * 13_000 + "\n")
    evolved = baseline.with_body(baseline.body + "y" * (MAX_SKILL_CHARS - len(baseline.text)))
    assert len(evolved) == MAX_SKILL_CHARS
    assert check_evolved(baseline, evolved).passed


def test_growth_gate(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path)
    extra = round(len(baseline.text) * 0.34)
    evolved = baseline.with_body(baseline.body + "z" * extra)
    assert_only(check_evolved(baseline, evolved), "grew 34% over the baseline", "limit 20%")


def test_growth_boundary_and_fine_rounding(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path, body=BODY + "x" * (1000 - len(FRONTMATTER + BODY)))
    assert len(baseline.text) == 1000
    at_limit = baseline.with_body(baseline.body + "z" * round(1000 * MAX_GROWTH))
    assert check_evolved(baseline, at_limit).passed
    just_over = baseline.with_body(baseline.body + "z" * 204)
    assert_only(check_evolved(baseline, just_over), "grew 20.4% over the baseline")


@pytest.mark.parametrize(
    "frontmatter",
    [
        FRONTMATTER.replace("A demo skill.", "An evolved skill."),
        FRONTMATTER.replace("\n", "\r\n"),
        FRONTMATTER.replace("name: demo", "name:  demo"),
        FRONTMATTER.replace("---\n", "--- \n", 1),
    ],
    ids=["description", "line-endings", "whitespace", "delimiter"],
)
def test_frontmatter_gate(tmp_path: Path, frontmatter: str) -> None:
    baseline = make_baseline(tmp_path)
    assert_only(check_evolved(baseline, frontmatter + BODY), "frontmatter differs from the baseline's")


def test_frontmatter_gate_names_first_differing_line(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path)
    evolved = FRONTMATTER.replace("A demo skill.", "Other.") + BODY
    assert_only(check_evolved(baseline, evolved), "first difference at line 3")


@pytest.mark.parametrize(
    "evolved",
    [BODY, "---\nname: demo\n" + BODY],
    ids=["no-frontmatter", "unclosed"],
)
def test_unparseable_evolved_text(tmp_path: Path, evolved: str) -> None:
    baseline = make_baseline(tmp_path)
    result = check_evolved(baseline, evolved)
    assert not result.passed
    assert any(reason.startswith("evolved skill does not parse") for reason in result.reasons)


@pytest.mark.parametrize("body", ["", "\n", "  \n\t\n"])
def test_empty_body_gate(tmp_path: Path, body: str) -> None:
    baseline = make_baseline(tmp_path, body="Plain instructions without headings.\n")
    assert_only(check_evolved(baseline, baseline.with_body(body), stock_instructions=STOCK), "body is empty")


@pytest.mark.parametrize("body", [STOCK, f"\n  {STOCK}\n\n"])
def test_stock_instructions_gate(tmp_path: Path, body: str) -> None:
    baseline = make_baseline(tmp_path, body="Plain instructions without headings.\n")
    result = check_evolved(baseline, baseline.with_body(body), stock_instructions=STOCK)
    assert_only(result, "stock instructions")


def test_stock_gate_disabled_without_stock(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path, body="Plain instructions without headings.\n")
    assert check_evolved(baseline, baseline.with_body(STOCK + "\n")).passed


@pytest.mark.parametrize(
    "prefix",
    [
        "---\nname: demo\ndescription: A demo skill.\n---\n",
        "\n\n---\r\nname: demo\r\nmetadata:\r\n  tags: [a]\r\n---\r\n",
        "---\n# comment\nversion: 2\n---\n",
    ],
    ids=["copy", "blank-lines-crlf", "comment"],
)
def test_second_frontmatter_gate(tmp_path: Path, prefix: str) -> None:
    baseline = make_baseline(tmp_path)
    assert_only(check_evolved(baseline, baseline.with_body(prefix + BODY)), "second frontmatter block")


@pytest.mark.parametrize(
    "prefix",
    [
        "---\n\nA horizontal rule, then prose.\n\n---\n",
        "---\nNo closing rule: just text\n",
        "text\n---\na: 1\n---\n",
    ],
    ids=["rules-around-prose", "unclosed", "not-at-start"],
)
def test_horizontal_rules_are_not_frontmatter(tmp_path: Path, prefix: str) -> None:
    baseline = make_baseline(tmp_path)
    assert check_evolved(baseline, baseline.with_body(prefix + BODY)).passed


def test_baseline_with_leading_block_passes_unchanged(tmp_path: Path) -> None:
    body = "---\nstep: 1\n---\n" + BODY
    baseline = make_baseline(tmp_path, body=body)
    assert leading_frontmatter_block(baseline.body) == "step: 1"
    assert check_evolved(baseline, baseline.text).passed


def test_heading_gate(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path)
    body = BODY.replace("## Steps\n", "Steps:\n")
    result = check_evolved(baseline, baseline.with_body(body))
    assert_only(result, "heading '## Steps' of the baseline is missing")


def test_heading_gate_reports_all_missing(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path)
    body = BODY.replace("## Steps\n", "").replace("## Notes\n", "")
    assert_only(check_evolved(baseline, baseline.with_body(body)), "'## Steps', '## Notes'", "are missing")


def test_heading_level_change_counts_as_missing(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path)
    body = BODY.replace("## Notes", "### Notes")
    assert_only(check_evolved(baseline, baseline.with_body(body)), "'## Notes'")


def test_heading_whitespace_and_code_blocks(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path)
    body = BODY.replace("## Steps", "##   Steps  ##").replace("# not a heading\n", "")
    assert check_evolved(baseline, baseline.with_body(body)).passed


def test_headings_helper() -> None:
    text = "# A\n#NoSpace\n    # indented code\n ## B ##\n~~~\n# in fence\n~~~\n#\n# A\n"
    assert headings(text) == ["# A", "## B", "#"]


def test_multiple_failures_reported_together(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path)
    frontmatter = FRONTMATTER.replace("A demo skill.", "Changed.")
    body = "---\nname: demo\n---\n" + BODY.replace("## Steps\n", "") + "w" * len(baseline.text)
    result = check_evolved(baseline, frontmatter + body)
    assert not result.passed
    assert len(result.reasons) == 4, result.reasons
    joined = "\n".join(result.reasons)
    for fragment in ("grew", "frontmatter differs", "second frontmatter block", "'## Steps'"):
        assert fragment in joined


def test_all_gates_fail_together(tmp_path: Path) -> None:
    baseline = make_baseline(tmp_path)
    result = check_evolved(baseline, "x" * (MAX_SKILL_CHARS + 1))
    joined = "\n".join(result.reasons)
    for fragment in ("size", "grew", "does not parse", "heading"):
        assert fragment in joined
