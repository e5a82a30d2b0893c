"""Loading, finding and reassembling SKILL.md files.

A skill is one ``SKILL.md`` file in the Anthropic Agent Skills / Hermes agent skills format:
YAML frontmatter between two ``---`` lines (keys ``name``, ``description``, optionally a nested
``metadata:`` mapping and others), then a markdown body holding the instruction text.  The
Hermes agent keeps skills as ``skills/<category>/<name>/SKILL.md``; this project bundles its own
under ``experiments/skills/<name>/SKILL.md``.

The optimizer only ever rewrites the body; :meth:`Skill.with_body` glues a new body to the
original frontmatter text, byte for byte, so the evolved file keeps its exact header.

Every problem with a file is reported as a :class:`SkillError` whose message names the file,
what is wrong, and how to fix it where there is an obvious fix.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PureWindowsPath
from typing import Any

import yaml

#: Largest accepted SKILL.md, in bytes of the raw file.  Real skills are a few kilobytes; the
#: limit only guards against loading a wrong (binary, generated, runaway) file into a prompt.
MAX_SKILL_BYTES = 200_000

#: File name of a skill inside its folder (Agent Skills / Hermes convention).
SKILL_FILENAME = "SKILL.md"

#: Environment variable pointing at a checkout of the Hermes agent; skills live in ``<it>/skills``.
HERMES_REPO_ENV = "HERMES_AGENT_REPO"

_BOM = "\ufeff"
_LINE_RE = re.compile(r"([^\n]*)(\n|\Z)")


class SkillError(ValueError):
    """A SKILL.md cannot be found, read or parsed.

    The message always names the file (or the skill name and the places searched), states what
    is wrong, and gives the fix where there is one.
    """


@dataclass(frozen=True)
class Skill:
    """One parsed SKILL.md.

    Attributes:
        name: top-level frontmatter ``name``; the skill's folder name when the key is absent.
        description: top-level frontmatter ``description``; ``""`` when absent.
        path: resolved path of the SKILL.md.
        frontmatter: the parsed YAML mapping.
        frontmatter_text: the exact original frontmatter block, both ``---`` delimiter lines and
            their line endings included, byte for byte as in the file (after BOM removal).
        body: everything after the closing delimiter line, exactly.
        text: the whole decoded file text without a leading BOM
            (``frontmatter_text + body == text``).
        bom: whether the raw file started with a UTF-8 byte-order mark (only used by
            :attr:`sha256`).
    """

    name: str
    description: str
    path: Path
    frontmatter: dict[str, Any]
    frontmatter_text: str
    body: str
    text: str
    bom: bool = False

    @property
    def sha256(self) -> str:
        """Hex SHA-256 of the file's raw bytes (UTF-8 decoding is lossless, so re-encoding is exact)."""
        raw = ((_BOM if self.bom else "") + self.text).encode("utf-8")
        return hashlib.sha256(raw).hexdigest()

    def with_body(self, body: str) -> str:
        """Return the reassembled file text: the original frontmatter block followed by ``body``."""
        return self.frontmatter_text + body

    def as_file(self, text: str) -> str:
        """``text`` (this skill's or an evolved version's, without BOM) as the file holds it: with the UTF-8 BOM
        when the baseline file had one, so a logged copy's sha256 equals :attr:`sha256` (issue 20: keep bytes)."""
        return (_BOM + text) if self.bom and not text.startswith(_BOM) else text

    @property
    def crlf(self) -> bool:
        """Whether the file uses CRLF line endings (every LF is preceded by CR)."""
        return "\r\n" in self.text and self.text.count("\n") == self.text.count("\r\n")


def _iter_lines(text: str) -> Iterator[tuple[str, int]]:
    """Yield ``(content, end_offset)`` per line; content excludes the LF or CRLF ending.

    A lone CR is not a line break: a file using CR-only line endings could not round-trip
    (a body starting with LF would merge into the closing delimiter's line ending)."""
    for match in _LINE_RE.finditer(text):
        if match.start() == len(text):
            return
        yield match.group(1).removesuffix("\r"), match.end()


def is_delimiter(line: str) -> bool:
    """True if a line (without its line ending) is a frontmatter delimiter: ``---`` at column 0,
    optionally followed by whitespace only."""
    return line.startswith("---") and line.rstrip() == "---"


def split_frontmatter(text: str, path: Path) -> tuple[str, str, str]:
    """Split SKILL.md text into ``(frontmatter_text, yaml_text, body)``.

    ``frontmatter_text`` runs from the opening ``---`` line through the first closing delimiter
    line (line ending included); ``yaml_text`` is what lies between the delimiters; ``body`` is
    the rest, exactly.  A leading BOM is dropped.  Only a line that is exactly ``---`` (trailing
    whitespace allowed) at column 0 closes the block, so ``---`` inside quoted or indented YAML
    values does not.

    Raises:
        SkillError: the text does not start with a ``---`` line, uses CR-only line endings (only
            LF and CRLF are line breaks), or the block is never closed.
    """
    text = text.removeprefix(_BOM)
    lines = _iter_lines(text)
    first = next(lines, None)
    if first is not None and not is_delimiter(first[0]) and first[0].startswith("---\r"):
        raise SkillError(
            f"{path}: uses CR-only (classic Mac) line endings, which are not supported; "
            f"convert the file to LF or CRLF line endings"
        )
    if first is None or not is_delimiter(first[0]):
        raise SkillError(
            f"{path}: no frontmatter; a SKILL.md must start with a '---' line, then YAML "
            f"(name:, description:), then a closing '---' line, then the markdown body"
        )
    yaml_start = line_start = first[1]
    for content, end in lines:
        if is_delimiter(content):
            return text[:end], text[yaml_start:line_start], text[end:]
        line_start = end
    raise SkillError(
        f"{path}: frontmatter is not closed; add a line containing only '---' after the YAML "
        f"block (an indented '---' or one inside a value does not count)"
    )


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping with the same key twice (YAML 1.2 requires unique keys; PyYAML
    would keep the last, so a second ``name:`` could silently switch the skill and its verifier)."""


def _construct_unique_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> Any:
    seen: dict[Any, yaml.Node] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            hash(key)
        except TypeError:
            continue  # an unhashable key: construct_mapping reports it
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                f"duplicate key {key!r} (first at line {seen[key].start_mark.line + 2}); keep one", key_node.start_mark)
        seen[key] = key_node
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping)


def _load_yaml(yaml_text: str, path: Path) -> dict[str, Any]:
    """Parse the frontmatter YAML (safe loader, duplicate keys refused); it must be a mapping."""
    try:
        data = yaml.load(yaml_text, Loader=_UniqueKeyLoader)  # noqa: S506  (a SafeLoader subclass)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 2}, column {mark.column + 1}" if mark else ""
        problem = "; ".join(part for part in (exc.context, exc.problem) if part) or "syntax error"
        raise SkillError(f"{path}: invalid YAML in frontmatter{where}: {problem}") from exc
    except yaml.YAMLError as exc:
        raise SkillError(f"{path}: invalid YAML in frontmatter: {exc}") from exc
    if data is None:
        raise SkillError(f"{path}: frontmatter is empty; it must be a YAML mapping with name: and "
                         f"description:")
    if not isinstance(data, dict):
        raise SkillError(
            f"{path}: frontmatter must be a YAML mapping (key: value lines), got a "
            f"{type(data).__name__}"
        )
    return data


def _string_field(frontmatter: Mapping[str, Any], key: str, path: Path) -> str | None:
    """Top-level ``key`` as a string, ``None`` if absent; SkillError if present but not a string."""
    if key not in frontmatter:
        return None
    value = frontmatter[key]
    if isinstance(value, str):
        return value
    if value is None:
        raise SkillError(f"{path}: frontmatter '{key}' has no value; give it a string or remove the key")
    raise SkillError(
        f"{path}: frontmatter '{key}' must be a string, got {type(value).__name__} {value!r}; "
        f"quote it"
    )


def parse_skill(text: str, path: Path) -> Skill:
    """Parse decoded SKILL.md ``text`` read from ``path`` into a :class:`Skill`.

    ``path`` is used for messages, for the folder-name fallback of ``name`` (its unresolved parent
    folder) and, resolved, as :attr:`Skill.path`.  A leading BOM is removed.

    Raises:
        SkillError: no / unclosed frontmatter, invalid YAML, frontmatter not a mapping, ``name``
            or ``description`` not a string, empty ``name``, or an empty (whitespace-only) body.
    """
    path = Path(path)
    bom = text.startswith(_BOM)
    text = text.removeprefix(_BOM)
    frontmatter_text, yaml_text, body = split_frontmatter(text, path)
    frontmatter = _load_yaml(yaml_text, path)
    name = _string_field(frontmatter, "name", path)
    if name is None:
        name = path.absolute().parent.name
    if not name.strip():
        raise SkillError(f"{path}: frontmatter 'name' is empty; give the skill a name")
    description = _string_field(frontmatter, "description", path) or ""
    if not body.strip():
        raise SkillError(
            f"{path}: the body after the frontmatter is empty; the body is the skill's "
            f"instruction text and cannot be empty or whitespace-only"
        )
    return Skill(
        name=name,
        description=description,
        path=path.resolve(),
        frontmatter=frontmatter,
        frontmatter_text=frontmatter_text,
        body=body,
        text=text,
        bom=bom,
    )


_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _require_regular_file(path: Path) -> None:
    """SkillError naming what ``path`` is when it exists but is not a regular file (checked without opening:
    opening a FIFO would block)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return  # missing or unreadable: _read_limited says so
    for test, kind in _FILE_KINDS:
        if test(mode):
            raise SkillError(f"{path}: is {kind}, not a file; a skill's SKILL.md must be a regular UTF-8 text file")


def _read_limited(path: Path) -> bytes:
    """Read at most MAX_SKILL_BYTES bytes of ``path``; SkillError if missing, unreadable or larger."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_SKILL_BYTES + 1)
    except FileNotFoundError as exc:
        raise SkillError(f"{path}: file not found") from exc
    except OSError as exc:
        raise SkillError(f"{path}: cannot read file: {exc.strerror or exc}") from exc
    if len(raw) > MAX_SKILL_BYTES:
        size = path.stat().st_size
        raise SkillError(
            f"{path}: file is {size:,} bytes, over the {MAX_SKILL_BYTES:,}-byte limit for a SKILL.md; "
            f"is this the right file?"
        )
    return raw


def load_skill(path: Path) -> Skill:
    """Read, decode and parse one SKILL.md.

    ``path`` is the SKILL.md file, or a skill folder containing one.  The raw bytes must be at
    most :data:`MAX_SKILL_BYTES` and valid UTF-8 (a leading BOM is allowed and stripped).

    Raises:
        SkillError: missing or unreadable file, too large, not UTF-8 (with the byte offset), or
            any parse error of :func:`parse_skill`.
    """
    path = Path(path)
    if path.is_dir() and path.name != SKILL_FILENAME:
        path = path / SKILL_FILENAME
    _require_regular_file(path)
    raw = _read_limited(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SkillError(
            f"{path}: not valid UTF-8 at byte offset {exc.start} ({exc.reason}); re-save the file "
            f"as UTF-8"
        ) from exc
    return parse_skill(text, path)


def discover_skills(root: Path, strict: bool = False) -> list[Path]:
    """All ``SKILL.md`` entries below ``root``, sorted.

    Directory symlinks are followed (the Hermes layout links skill folders); a directory whose
    real path was already visited is not entered again, which breaks symlink loops and lists a
    folder reached by two links once.  Paths are returned as found under ``root`` (not resolved).
    A ``SKILL.md`` that is not a regular file (a directory, FIFO, device) is listed too, so
    :func:`load_skill` can say what it is.

    Args:
        strict: a folder that cannot be read raises (a location the user named) instead of being skipped.

    Raises:
        SkillError: ``root`` is not a directory; with ``strict``, a folder below it cannot be read.
    """
    root = Path(root)
    if not root.is_dir():
        raise SkillError(f"{root}: skills directory does not exist or is not a directory")

    def unreadable(exc: OSError) -> None:
        if strict:
            raise SkillError(f"skills directory {exc.filename or root} cannot be read ({exc.strerror or exc}); "
                             "fix its permissions, or pass another --skills-dir") from exc

    seen_dirs: set[str] = set()
    seen_files: set[str] = set()
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True, onerror=unreadable):
        real = os.path.realpath(dirpath)
        if real in seen_dirs:
            dirnames[:] = []
            continue
        seen_dirs.add(real)
        dirnames.sort()
        candidate = Path(dirpath) / SKILL_FILENAME
        if SKILL_FILENAME in dirnames:  # a folder named SKILL.md: reported by load_skill, never entered
            dirnames.remove(SKILL_FILENAME)
            filenames = [*filenames, SKILL_FILENAME]
        if SKILL_FILENAME in filenames:
            real_file = os.path.realpath(candidate)
            if real_file not in seen_files:
                seen_files.add(real_file)
                found.append(candidate)
    return sorted(found)


def bundled_skills_dir() -> Path:
    """The skills shipped with this project: ``<repo>/experiments/skills``."""
    return Path(__file__).resolve().parents[2] / "experiments" / "skills"


def validate_skill_name(name: object) -> str:
    """Return ``name`` if it is a safe skill name: a non-empty string that is not absolute and has
    no ``/``, ``\\``, ``..``, drive or NUL, so a search by it cannot leave a skills directory.

    Raises:
        SkillError: the name is unsafe (checked before any filesystem access).
    """
    if not isinstance(name, str) or not name.strip():
        raise SkillError(f"invalid skill name {name!r}: it must be a non-empty string")
    unsafe = (
        "/" in name
        or "\\" in name
        or ".." in name
        or "\x00" in name
        or name in {"."}
        or bool(PureWindowsPath(name).drive)
        or Path(name).is_absolute()
    )
    if unsafe:
        raise SkillError(
            f"invalid skill name {name!r}: give a bare skill name (folder name or frontmatter "
            f"name), without path separators, '..' or a drive"
        )
    return name


def _search_locations(
    skills_dir: Path | None, bundled_dir: Path | None, env: Mapping[str, str] | None
) -> list[tuple[Path, bool]]:
    """Ordered ``(directory, required)`` pairs to search; ``required`` ones (named by the user: ``skills_dir``
    or ``$HERMES_AGENT_REPO/skills``) must exist, be readable, and have no unloadable skill when they hold no
    match."""
    env = os.environ if env is None else env
    locations: list[tuple[Path, bool]] = []
    if skills_dir is not None:
        locations.append((Path(skills_dir), True))
    elif env.get(HERMES_REPO_ENV):  # named by the user too: unusable is an error, never a silent fallback
        locations.append((Path(env[HERMES_REPO_ENV]) / "skills", True))
    locations.append((Path(bundled_dir) if bundled_dir is not None else bundled_skills_dir(), False))
    return locations


def _matches_in(name: str, root: Path, strict: bool = False) -> tuple[list[tuple[Path, Skill | SkillError]], list[str]]:
    """Skills under ``root`` matching ``name`` by folder or frontmatter name, as ``(path, skill)``
    pairs, plus notes on unparseable skills that could not be checked.  A folder-name match that
    fails to load is kept with its error instead of a skill, so the caller can report it."""
    matches: list[tuple[Path, Skill | SkillError]] = []
    broken: list[str] = []
    for path in discover_skills(root, strict=strict):
        by_folder = path.parent.name == name
        try:
            skill = load_skill(path)
        except SkillError as exc:
            if by_folder:
                matches.append((path, exc))
            else:
                broken.append(str(exc))
            continue
        if by_folder or skill.name == name:
            matches.append((path, skill))
    return matches, broken


def find_skill(
    name: str,
    skills_dir: Path | None = None,
    *,
    bundled_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Skill:
    """Find and load the skill called ``name``.

    Search order: ``skills_dir`` if given, else ``$HERMES_AGENT_REPO/skills`` if that variable is
    set in ``env`` (default ``os.environ``; Hermes layout ``skills/<category>/<name>/SKILL.md``,
    any depth, directory symlinks followed); then the bundled ``experiments/skills`` (or
    ``bundled_dir``).  The first location with a match wins.  A skill matches by its folder name
    or its frontmatter ``name``.

    A location the user named (``skills_dir``, ``$HERMES_AGENT_REPO/skills``) that cannot be used is
    an error, never a silent fallback to the bundled skill: it must exist and be readable, and when it
    holds no match, none of its skills may fail to load (one of them may be the skill meant).

    Raises:
        SkillError: unsafe name; a named location missing, unreadable, or without a match but with
            skills that fail to load (listed); no match anywhere (listing the places searched); two or
            more matches in one location (listing their paths); or the matching file does not load.
    """
    validate_skill_name(name)
    looked: list[str] = []
    broken_notes: list[str] = []
    for root, required in _search_locations(skills_dir, bundled_dir, env):
        if not root.is_dir():
            problem = "is not a directory" if root.exists() else "does not exist"
            if required:
                via = f" (from {HERMES_REPO_ENV})" if skills_dir is None else ""
                raise SkillError(f"skills directory {root}{via} {problem} (looking for skill {name!r}); "
                                 f"fix the path or unset it")
            looked.append(f"{root} ({problem})")
            continue
        looked.append(str(root))
        matches, broken = _matches_in(name, root, strict=required)
        broken_notes.extend(broken)
        if required and broken and not matches:  # the skill meant may be the one that fails to load
            raise SkillError(
                f"skill {name!r} not found in {root}, where these skills fail to load (one may be the skill "
                f"meant; fix or remove them, or name another skills folder):\n  " + "\n  ".join(broken))
        if len(matches) > 1:
            paths = "\n  ".join(str(path) for path, _ in matches)
            raise SkillError(
                f"skill name {name!r} is ambiguous in {root}; rename one of these skills:\n  {paths}"
            )
        if matches:
            found = matches[0][1]
            if isinstance(found, SkillError):
                raise found
            return found
    message = f"skill {name!r} not found; looked in: {', '.join(looked)}"
    if broken_notes:
        message += "\nskills that could not be parsed (not checked):\n  " + "\n  ".join(broken_notes)
    raise SkillError(message)



def check_output_outside(output_dir: str | os.PathLike[str], folders: Iterable[str | os.PathLike[str]]) -> None:
    """Refuse an output folder inside any of ``folders`` (the skill's own folder, the skills folder the user
    named).

    Paths are compared resolved (``..`` and symlinks followed, a missing tail kept as written), so a subfolder,
    a path through ``..`` or a symlink into the folder are all caught.  The README promises a run never writes
    beside the user's SKILL.md.

    Raises:
        SkillError: naming the output folder, the skills folder it lies in, and the fix.
    """
    out = Path(output_dir).expanduser().resolve()
    for folder in (Path(f).expanduser().resolve() for f in folders):
        if out == folder or folder in out.parents:
            raise SkillError(
                f"output folder {output_dir} (resolved {out}) is inside the skills folder {folder}; a run never "
                f"writes beside a SKILL.md: pass an --output-dir outside {folder}, or none (a temporary folder)"
            )
