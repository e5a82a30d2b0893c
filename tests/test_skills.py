"""Tests for harness.skills.files: parsing, loading, discovery, lookup and round trip of SKILL.md files."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.skills import files as skills
from harness.skills.files import (
    MAX_SKILL_BYTES,
    Skill,
    SkillError,
    bundled_skills_dir,
    discover_skills,
    find_skill,
    load_skill,
    parse_skill,
    split_frontmatter,
    validate_skill_name,
)

FRONTMATTER = "---\nname: demo\ndescription: A demo skill.\n---\n"
BODY = "# Demo\n\n## Steps\n\n1. Do the thing.\n"

#: Every loadable file shape: id -> raw bytes.
LOADABLE: dict[str, bytes] = {
    "plain": (FRONTMATTER + BODY).encode(),
    "bom": b"\xef\xbb\xbf" + (FRONTMATTER + BODY).encode(),
    "crlf": (FRONTMATTER + BODY).replace("\n", "\r\n").encode(),
    "bom_crlf": b"\xef\xbb\xbf" + (FRONTMATTER + BODY).replace("\n", "\r\n").encode(),
    "delimiter_trailing_ws": b"---  \nname: demo\ndescription: d\n--- \t\nbody\n",
    "dashes_in_quoted_value": b'---\nname: demo\ndescription: "a --- b"\n---\nbody\n',
    "dashes_in_plain_value": b"---\nname: demo\ndescription: a --- b\n---\nbody\n",
    "dashes_single_quoted": b"---\nname: demo\ndescription: '---'\n---\nbody\n",
    "dashes_in_literal": b"---\nname: demo\ndescription: |\n  one\n  ---\n  two\n---\nbody\n",
    "dashes_prefix_key": b"---\nname: demo\n---x: 1\n---\nbody\n",
    "nested_metadata": (
        b"---\nmetadata:\n  name: inner\n  description: inner desc\n  hermes:\n    name: deeper\n"
        b"name: demo\ndescription: outer\n---\nbody\n"
    ),
    "folded": b"---\nname: demo\ndescription: >\n  one\n  two\n---\nbody\n",
    "literal": b"---\nname: demo\ndescription: |\n  one\n  two\n---\nbody\n",
    "body_with_dashes": b"---\nname: demo\n---\nintro\n---\nname: x\n---\nmore\n---\n",
    "no_name": b"---\ndescription: d\n---\nbody\n",
    "no_description": b"---\nname: demo\n---\nbody\n",
    "no_trailing_newline": b"---\nname: demo\n---\nbody",
    "unicode": "---\nname: démo\ndescription: «ünïcødé» ✓\n---\nbödy ✓\n".encode(),
}


def write(path: Path, content: str | bytes) -> Path:
    """Write ``content`` (bytes verbatim, str as UTF-8 without newline translation) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def make_skill(root: Path, folder: str, name: str | None = None, body: str = "body\n") -> Path:
    """Create ``root/folder/SKILL.md`` with an optional frontmatter name."""
    header = f"name: {name}\n" if name is not None else ""
    return write(root / folder / "SKILL.md", f"---\n{header}description: d\n---\n{body}")


def load_case(tmp_path: Path, case: str) -> Skill:
    return load_skill(write(tmp_path / "demo" / "SKILL.md", LOADABLE[case]))


# --- loading the happy path -------------------------------------------------------------------


def test_load_plain_skill(tmp_path: Path) -> None:
    path = write(tmp_path / "demo" / "SKILL.md", FRONTMATTER + BODY)
    skill = load_skill(path)
    assert skill.name == "demo"
    assert skill.description == "A demo skill."
    assert skill.path == path.resolve()
    assert skill.frontmatter == {"name": "demo", "description": "A demo skill."}
    assert skill.frontmatter_text == FRONTMATTER
    assert skill.body == BODY
    assert skill.text == FRONTMATTER + BODY
    assert skill.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_load_skill_accepts_folder(tmp_path: Path) -> None:
    path = write(tmp_path / "demo" / "SKILL.md", FRONTMATTER + BODY)
    assert load_skill(path.parent).path == path.resolve()


def test_missing_file_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "SKILL.md"
    with pytest.raises(SkillError, match="not found") as info:
        load_skill(missing)
    assert str(missing) in str(info.value)


# --- BOM, line endings ------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["bom", "bom_crlf"])
def test_bom_is_stripped(tmp_path: Path, case: str) -> None:
    skill = load_case(tmp_path, case)
    assert skill.frontmatter_text.startswith("---")
    assert not skill.text.startswith("\ufeff")
    assert skill.name == "demo"
    assert skill.sha256 == hashlib.sha256(LOADABLE[case]).hexdigest()


def test_parse_skill_strips_bom_from_text(tmp_path: Path) -> None:
    skill = parse_skill("\ufeff" + FRONTMATTER + BODY, tmp_path / "demo" / "SKILL.md")
    assert skill.frontmatter_text == FRONTMATTER
    assert skill.sha256 == hashlib.sha256(("\ufeff" + FRONTMATTER + BODY).encode()).hexdigest()


def test_crlf_kept_byte_for_byte(tmp_path: Path) -> None:
    skill = load_case(tmp_path, "crlf")
    assert skill.frontmatter_text == FRONTMATTER.replace("\n", "\r\n")
    assert skill.frontmatter_text.endswith("\n---\r\n")
    assert skill.body == BODY.replace("\n", "\r\n")
    assert skill.description == "A demo skill."
    assert skill.name == "demo"


def test_mixed_line_endings(tmp_path: Path) -> None:
    path = write(tmp_path / "m" / "SKILL.md", "---\r\nname: m\ndescription: d\r\n---\nbody\r\n")
    skill = load_skill(path)
    assert skill.frontmatter_text == "---\r\nname: m\ndescription: d\r\n---\n"
    assert (skill.name, skill.description, skill.body) == ("m", "d", "body\r\n")


def test_cr_only_line_endings_rejected(tmp_path: Path) -> None:
    content = (FRONTMATTER + BODY).replace("\n", "\r")
    assert_load_fails(tmp_path, content, "CR-only", "convert the file to LF or CRLF")


def test_delimiters_with_trailing_whitespace(tmp_path: Path) -> None:
    skill = load_case(tmp_path, "delimiter_trailing_ws")
    assert skill.frontmatter_text == "---  \nname: demo\ndescription: d\n--- \t\n"
    assert skill.body == "body\n"


# --- frontmatter content ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "description"),
    [
        ("dashes_in_quoted_value", "a --- b"),
        ("dashes_in_plain_value", "a --- b"),
        ("dashes_single_quoted", "---"),
        ("dashes_in_literal", "one\n---\ntwo\n"),
    ],
)
def test_dashes_inside_values_do_not_close(tmp_path: Path, case: str, description: str) -> None:
    skill = load_case(tmp_path, case)
    assert skill.description == description
    assert skill.body == "body\n"


def test_dashes_prefixed_key_is_not_a_delimiter(tmp_path: Path) -> None:
    skill = load_case(tmp_path, "dashes_prefix_key")
    assert skill.frontmatter == {"name": "demo", "---x": 1}
    assert skill.body == "body\n"


def test_nested_metadata_does_not_shadow_top_level(tmp_path: Path) -> None:
    skill = load_case(tmp_path, "nested_metadata")
    assert skill.name == "demo"
    assert skill.description == "outer"
    assert skill.frontmatter["metadata"]["name"] == "inner"


@pytest.mark.parametrize(
    ("indicator", "expected"),
    [(">", "one two\n"), (">-", "one two"), ("|", "one\ntwo\n"), ("|-", "one\ntwo")],
)
def test_block_scalar_description(tmp_path: Path, indicator: str, expected: str) -> None:
    content = f"---\nname: d\ndescription: {indicator}\n  one\n  two\n---\nb\n"
    path = write(tmp_path / "d" / "SKILL.md", content)
    assert load_skill(path).description == expected


def test_missing_name_falls_back_to_folder(tmp_path: Path) -> None:
    assert load_case(tmp_path, "no_name").name == "demo"


def test_missing_description_is_empty(tmp_path: Path) -> None:
    assert load_case(tmp_path, "no_description").description == ""


def test_body_with_dashes_kept_exactly(tmp_path: Path) -> None:
    skill = load_case(tmp_path, "body_with_dashes")
    assert skill.frontmatter == {"name": "demo"}
    assert skill.body == "intro\n---\nname: x\n---\nmore\n---\n"


# --- failures -----------------------------------------------------------------------------------


def assert_load_fails(tmp_path: Path, content: str | bytes, *fragments: str) -> SkillError:
    """Load ``content`` and check the SkillError names the file and contains every fragment."""
    path = write(tmp_path / "bad" / "SKILL.md", content)
    with pytest.raises(SkillError) as info:
        load_skill(path)
    message = str(info.value)
    assert str(path) in message
    for fragment in fragments:
        assert fragment in message
    return info.value


@pytest.mark.parametrize(
    "content",
    ["# Title\n\nbody\n", "\n---\nname: x\n---\nbody\n", "", "  ---\nname: x\n---\nbody\n", "----\nx\n"],
)
def test_no_frontmatter(tmp_path: Path, content: str) -> None:
    assert_load_fails(tmp_path, content, "no frontmatter", "must start with a '---' line")


@pytest.mark.parametrize(
    "content",
    ["---\nname: x\nbody\n", "---\nname: x\n  ---\nbody\n", "---\n", "---\r\nname: x\r\n --- \r\n"],
)
def test_unclosed_frontmatter(tmp_path: Path, content: str) -> None:
    assert_load_fails(tmp_path, content, "not closed")


def test_invalid_yaml_reports_line_and_problem(tmp_path: Path) -> None:
    content = "---\nname: x\ndescription: a: b\n---\nbody\n"
    assert_load_fails(tmp_path, content, "invalid YAML", "line 3", "mapping values are not allowed")


@pytest.mark.parametrize(
    "content",
    [
        "---\nname: [unclosed\n---\nbody\n",
        "---\nname: x\n\tdescription: tab\n---\nbody\n",
        "---\nname: x\ndescription: !!python/object/apply:os.system ['true']\n---\nbody\n",
        "---\nname: x\n...\nother: 1\n---\nbody\n",
    ],
)
def test_invalid_yaml_kinds(tmp_path: Path, content: str) -> None:
    assert_load_fails(tmp_path, content, "invalid YAML")


@pytest.mark.parametrize(
    ("yaml_text", "fragment"),
    [("- a\n- b\n", "got a list"), ("just text\n", "got a str"), ("42\n", "got a int"), ("", "empty")],
)
def test_frontmatter_not_a_mapping(tmp_path: Path, yaml_text: str, fragment: str) -> None:
    assert_load_fails(tmp_path, f"---\n{yaml_text}---\nbody\n", "frontmatter", fragment)


@pytest.mark.parametrize(
    ("raw", "offset"),
    [
        (b"---\nname: x\n---\nbad \xff byte\n", 20),
        (b"\xef\xbb\xbf---\nname: caf\xe9\n---\nbody\n", 16),
        (b"\xff\xfe-\x00-\x00-\x00", 0),
    ],
)
def test_non_utf8_reports_byte_offset(tmp_path: Path, raw: bytes, offset: int) -> None:
    assert_load_fails(tmp_path, raw, "not valid UTF-8", f"byte offset {offset}")


@pytest.mark.parametrize("body", ["", "\n", "   \n\t\n", "\r\n\r\n"])
def test_empty_body(tmp_path: Path, body: str) -> None:
    assert_load_fails(tmp_path, FRONTMATTER + body, "body", "empty")


def test_file_over_size_limit(tmp_path: Path) -> None:
    content = FRONTMATTER + "x" * (MAX_SKILL_BYTES + 1 - len(FRONTMATTER))
    assert len(content) == MAX_SKILL_BYTES + 1
    assert_load_fails(tmp_path, content, f"{MAX_SKILL_BYTES + 1:,} bytes", f"{MAX_SKILL_BYTES:,}-byte limit")


def test_file_at_size_limit_loads(tmp_path: Path) -> None:
    content = FRONTMATTER + "x" * (MAX_SKILL_BYTES - len(FRONTMATTER))
    path = write(tmp_path / "big" / "SKILL.md", content)
    assert len(load_skill(path).body) == MAX_SKILL_BYTES - len(FRONTMATTER)


@pytest.mark.parametrize(
    ("value", "fragment"),
    [("123", "got int"), ("[a, b]", "got list"), ("true", "got bool"), ("2024-01-01", "got date"),
     ("", "no value"), ("{a: 1}", "got dict")],
)
def test_name_not_a_string(tmp_path: Path, value: str, fragment: str) -> None:
    assert_load_fails(tmp_path, f"---\nname: {value}\n---\nbody\n", "'name'", fragment)


@pytest.mark.parametrize("value", ["''", "'   '"])
def test_name_empty_string(tmp_path: Path, value: str) -> None:
    assert_load_fails(tmp_path, f"---\nname: {value}\n---\nbody\n", "'name' is empty")


def test_description_not_a_string(tmp_path: Path) -> None:
    assert_load_fails(tmp_path, "---\nname: x\ndescription: [1, 2]\n---\nbody\n", "'description'", "got list")


# --- round trip -------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(LOADABLE))
def test_round_trip(tmp_path: Path, case: str) -> None:
    skill = load_case(tmp_path, case)
    assert skill.with_body(skill.body) == skill.text
    new_body = "\n# Rewritten\n---\nsteps: 1\n---\nDone ✓\n"
    out = write(tmp_path / "out" / "SKILL.md", skill.with_body(new_body))
    again = load_skill(out)
    assert again.frontmatter_text == skill.frontmatter_text
    assert again.body == new_body
    assert again.frontmatter == skill.frontmatter


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.text(min_size=1).filter(lambda s: s.strip()),
    case=st.sampled_from(["plain", "crlf", "bom", "nested_metadata", "dashes_in_literal"]),
)
def test_round_trip_property(tmp_path: Path, body: str, case: str) -> None:
    skill = load_case(tmp_path, case)
    out = write(tmp_path / "prop" / "SKILL.md", skill.with_body(body))
    again = load_skill(out)
    assert again.frontmatter_text == skill.frontmatter_text
    assert again.body == body
    assert again.with_body(again.body) == again.text


def test_split_frontmatter_parts() -> None:
    front, yaml_text, body = split_frontmatter("---\r\na: 1\r\n---\r\nrest", Path("x"))
    assert (front, yaml_text, body) == ("---\r\na: 1\r\n---\r\n", "a: 1\r\n", "rest")


# --- discovery ----------------------------------------------------------------------------------


def test_discover_sorted_any_depth(tmp_path: Path) -> None:
    b = make_skill(tmp_path, "z/b")
    a = make_skill(tmp_path, "a")
    deep = make_skill(tmp_path, "m/n/o/deep")
    write(tmp_path / "m" / "README.md", "not a skill")
    assert discover_skills(tmp_path) == sorted([a, b, deep])


def test_discover_survives_symlink_loop(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "cat/one")
    os.symlink(tmp_path, tmp_path / "cat" / "one" / "loop")
    os.symlink(tmp_path / "cat", tmp_path / "cat" / "self")
    assert discover_skills(tmp_path) == [skill]


def test_discover_follows_directory_symlinks(tmp_path: Path) -> None:
    outside = make_skill(tmp_path / "elsewhere", "real")
    root = tmp_path / "skills"
    (root / "cat").mkdir(parents=True)
    os.symlink(outside.parent, root / "cat" / "linked")
    assert discover_skills(root) == [root / "cat" / "linked" / "SKILL.md"]


def test_discover_missing_root(tmp_path: Path) -> None:
    with pytest.raises(SkillError, match="does not exist"):
        discover_skills(tmp_path / "missing")


# --- find_skill -------------------------------------------------------------------------------


def test_find_by_folder_and_by_frontmatter_name(tmp_path: Path) -> None:
    path = make_skill(tmp_path, "research/arxiv-folder", name="arxiv")
    empty = tmp_path / "bundled"
    empty.mkdir()
    assert find_skill("arxiv-folder", tmp_path, bundled_dir=empty).path == path.resolve()
    assert find_skill("arxiv", tmp_path, bundled_dir=empty).path == path.resolve()


def test_find_through_symlinked_folder(tmp_path: Path) -> None:
    outside = make_skill(tmp_path / "elsewhere", "real-folder", body="linked body\n")
    root = tmp_path / "skills"
    (root / "cat").mkdir(parents=True)
    os.symlink(outside.parent, root / "cat" / "linked")
    skill = find_skill("linked", root, bundled_dir=tmp_path / "none")
    assert skill.body == "linked body\n"
    assert skill.name == "linked"
    assert skill.path == outside.resolve()


def test_find_ambiguous_lists_both_paths(tmp_path: Path) -> None:
    first = make_skill(tmp_path, "a/dup")
    second = make_skill(tmp_path, "b/other", name="dup")
    with pytest.raises(SkillError, match="ambiguous") as info:
        find_skill("dup", tmp_path, bundled_dir=tmp_path / "none")
    assert str(first) in str(info.value)
    assert str(second) in str(info.value)


def test_same_folder_via_two_links_is_not_ambiguous(tmp_path: Path) -> None:
    real = make_skill(tmp_path / "elsewhere", "shared", name="shared")
    root = tmp_path / "skills"
    root.mkdir()
    os.symlink(real.parent, root / "one")
    os.symlink(real.parent, root / "two")
    assert find_skill("shared", root, bundled_dir=tmp_path / "none").path == real.resolve()


@pytest.mark.parametrize(
    "name", ["../x", "a/b", "a\\b", "..", "", "   ", "/etc/passwd", "C:foo", "x..y", ".", "a\x00b", None, 3]
)
def test_unsafe_names_rejected_before_filesystem_access(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: object
) -> None:
    def no_walk(*args: object, **kwargs: object) -> None:
        raise AssertionError("filesystem walked")

    monkeypatch.setattr(skills.os, "walk", no_walk)
    with pytest.raises(SkillError, match="invalid skill name"):
        find_skill(name, tmp_path / "does-not-exist")  # type: ignore[arg-type]


def test_validate_skill_name_accepts_plain_names() -> None:
    assert validate_skill_name("arxiv-search_2.v1") == "arxiv-search_2.v1"


def test_missing_skills_dir_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    with pytest.raises(SkillError, match="does not exist") as info:
        find_skill("x", missing, bundled_dir=tmp_path)
    assert str(missing) in str(info.value)


def test_not_found_lists_locations(tmp_path: Path) -> None:
    local, bundled = tmp_path / "local", tmp_path / "bundled"
    make_skill(local, "other")
    bundled.mkdir()
    with pytest.raises(SkillError, match="not found") as info:
        find_skill("ghost", local, bundled_dir=bundled)
    assert str(local) in str(info.value)
    assert str(bundled) in str(info.value)


def test_skills_dir_wins_over_bundled(tmp_path: Path) -> None:
    local = make_skill(tmp_path / "local", "s", body="local\n")
    make_skill(tmp_path / "bundled", "s", body="bundled\n")
    assert find_skill("s", tmp_path / "local", bundled_dir=tmp_path / "bundled").path == local.resolve()


def test_bundled_is_fallback(tmp_path: Path) -> None:
    make_skill(tmp_path / "local", "other")
    bundled = make_skill(tmp_path / "bundled", "s")
    assert find_skill("s", tmp_path / "local", bundled_dir=tmp_path / "bundled").path == bundled.resolve()


def test_hermes_env_layout(tmp_path: Path) -> None:
    hermes = tmp_path / "hermes"
    skill = make_skill(hermes / "skills", "research/deep/arxiv")
    make_skill(tmp_path / "bundled", "arxiv")
    env = {"HERMES_AGENT_REPO": str(hermes)}
    assert find_skill("arxiv", bundled_dir=tmp_path / "bundled", env=env).path == skill.resolve()


def test_hermes_env_missing_dir_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    make_skill(tmp_path / "bundled", "arxiv")
    env = {"HERMES_AGENT_REPO": str(tmp_path / "nowhere")}
    with pytest.raises(SkillError, match="does not exist"):  # a location the user named (issue 20, point 5)
        find_skill("arxiv", bundled_dir=tmp_path / "bundled", env=env)
    with pytest.raises(SkillError, match="does not exist") as info:
        find_skill("ghost", bundled_dir=tmp_path / "bundled", env=env)
    assert str(tmp_path / "nowhere" / "skills") in str(info.value)


def test_skills_dir_takes_precedence_over_env(tmp_path: Path) -> None:
    make_skill(tmp_path / "hermes" / "skills", "s")
    local = make_skill(tmp_path / "local", "s")
    env = {"HERMES_AGENT_REPO": str(tmp_path / "hermes")}
    found = find_skill("s", tmp_path / "local", bundled_dir=tmp_path / "none", env=env)
    assert found.path == local.resolve()


def test_unrelated_broken_skill_is_skipped(tmp_path: Path) -> None:
    write(tmp_path / "broken" / "SKILL.md", "no frontmatter\n")
    good = make_skill(tmp_path, "good")
    assert find_skill("good", tmp_path, bundled_dir=tmp_path / "none").path == good.resolve()
    with pytest.raises(SkillError, match="fail to load") as info:  # reported, not silently skipped (issue 20)
        find_skill("ghost", tmp_path, bundled_dir=tmp_path / "none")
    assert "broken" in str(info.value)


def test_broken_matching_skill_reports_its_error(tmp_path: Path) -> None:
    path = write(tmp_path / "target" / "SKILL.md", "---\nname: [x\n---\nbody\n")
    with pytest.raises(SkillError, match="invalid YAML") as info:
        find_skill("target", tmp_path, bundled_dir=tmp_path / "none")
    assert str(path) in str(info.value)


def test_bundled_skills_dir_location() -> None:
    repo = Path(skills.__file__).resolve().parents[2]
    assert bundled_skills_dir() == repo / "experiments" / "skills"
