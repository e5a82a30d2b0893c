"""Find the answer's function: the first fenced Python block defining it, else a bare top-level ``def``.

Rules (checked in this order; the first that applies is the result's ``status``):

1. **source**: the first fenced block (```` ``` ```` or ``~~~``, untagged or tagged ``python``/``py``/
   ``python3``) with a line ``def <name>(`` at column 0 (after removing the indentation common to the
   block's lines) is the answer's code, whole (imports and helpers included).  Without one, the first
   column-0 ``def <name>(`` line of the text is taken with the indented (or blank) lines after it.
   Neither: ``not_found``.
2. ``syntax_error``: the code does not parse (``ast.parse``).
3. ``not_found`` / ``defined_twice``: the code binds ``<name>`` at top level zero times / more than once
   (a ``def``, ``class``, assignment or import of that name each count).
4. ``signature_changed``: the parameters differ from the buggy function's in names, kinds (positional,
   ``*args``, keyword-only, ``**kwargs``) or which ones have a default (default *values* may change: the
   mutable-default fix replaces ``[]`` by ``None``), or the function became ``async``.
5. ``tampering``: a top-level statement other than imports, ``def``/``class``, assignments of literals to names,
   docstrings and ``if __name__ == "__main__":`` blocks (which never run: the answer's module is not
   ``__main__``).  Code that runs on import can only act on the test process, so it counts as editing
   the tests.
6. ``ok``.
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass

#: Only this many leading characters of an answer are searched.
MAX_ANSWER_CHARS = 100_000
#: Fence languages read as Python (an empty tag too).
PYTHON_TAGS: frozenset[str] = frozenset({"", "python", "py", "python3"})
FENCE_RE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[\w+.-]*)[^\n]*\n"
                      r"(?P<body>.*?)^[ \t]*(?P=fence)[ \t]*$", re.MULTILINE | re.DOTALL)

STATUSES: tuple[str, ...] = ("ok", "not_found", "syntax_error", "defined_twice", "signature_changed", "tampering")


@dataclass(frozen=True)
class Extraction:
    """What was found in an answer.

    Attributes:
        status: one of :data:`STATUSES`.
        source: the code to run ("" when ``not_found``).
        function: ``ast.unparse`` of the function without its docstring ("" unless it parsed and was found once).
        detail: one line for the feedback.
    """

    status: str
    source: str = ""
    function: str = ""
    detail: str = ""

    @property
    def found(self) -> bool:
        """A single function of the right name was found and compiles (statuses ok, signature_changed, tampering)."""
        return self.status in ("ok", "signature_changed", "tampering")


def _def_line_re(name: str) -> re.Pattern[str]:
    return re.compile(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(name)}[ \t]*\(", re.MULTILINE)


def candidate_source(answer: str, name: str) -> str | None:
    """The code of rule 1 (see the module docstring), or ``None``."""
    text = answer[:MAX_ANSWER_CHARS]
    def_re = _def_line_re(name)
    for match in FENCE_RE.finditer(text):
        body = textwrap.dedent(match.group("body"))  # a block indented as a whole (inside a list item)
        if match.group("tag").lower() in PYTHON_TAGS and def_re.search(body):
            return body
    found = def_re.search(text)
    if found is None:
        return None
    lines = text[found.start():].splitlines()
    kept = [lines[0]]
    for line in lines[1:]:
        if line.strip() and not line[:1].isspace():
            break
        kept.append(line)
    return "\n".join(kept).rstrip() + "\n"


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[object, ...]:
    """Parameter names and kinds, and which parameters have defaults (not their values)."""
    a = node.args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    with_default = positional[len(positional) - len(a.defaults):] if a.defaults else []
    return (isinstance(node, ast.AsyncFunctionDef), len(a.posonlyargs), tuple(positional), tuple(with_default),
            a.vararg.arg if a.vararg else None, tuple(p.arg for p in a.kwonlyargs),
            tuple(d is not None for d in a.kw_defaults), a.kwarg.arg if a.kwarg else None)


def describe_signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """``"def f(xs, n=...)"``: the header with default values elided."""
    copy = ast.parse(ast.unparse(node)).body[0]
    assert isinstance(copy, (ast.FunctionDef, ast.AsyncFunctionDef))
    copy.args.defaults = [ast.Constant(...) for _ in copy.args.defaults]
    copy.args.kw_defaults = [None if d is None else ast.Constant(...) for d in copy.args.kw_defaults]
    copy.body, copy.decorator_list, copy.returns = [ast.Pass()], [], None
    for arg in (*copy.args.posonlyargs, *copy.args.args, *copy.args.kwonlyargs, copy.args.vararg, copy.args.kwarg):
        if arg is not None:
            arg.annotation = None
    return ast.unparse(copy).split("\n")[0].rstrip(":").replace("Ellipsis", "...")


def function_text(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """``ast.unparse`` of the function without its docstring (comments and formatting normalised away)."""
    copy = ast.parse(ast.unparse(node)).body[0]
    assert isinstance(copy, (ast.FunctionDef, ast.AsyncFunctionDef))
    body = copy.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        copy.body = body[1:] or [ast.Pass()]
    return ast.unparse(copy)


def _binds(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == name
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return any((alias.asname or alias.name.split(".")[0]) == name for alias in stmt.names)
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
        if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
    return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))


def _is_main_guard(stmt: ast.stmt) -> bool:
    test = stmt.test if isinstance(stmt, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__" and not stmt.orelse)


def _allowed_top_level(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return True
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant)
    if isinstance(stmt, ast.Assign):
        return all(isinstance(t, ast.Name) for t in stmt.targets) and _is_literal(stmt.value)
    if isinstance(stmt, ast.AnnAssign):
        return isinstance(stmt.target, ast.Name) and (stmt.value is None or _is_literal(stmt.value))
    return _is_main_guard(stmt)


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def extract(answer: str, name: str, buggy_source: str) -> Extraction:
    """Apply the rules of the module docstring to ``answer`` for the function ``name``.

    Args:
        answer: the model's whole output.
        name: the function's name.
        buggy_source: the buggy function (its signature is the one to keep).

    Raises:
        ValueError: when ``buggy_source`` does not define ``name`` (a task defect, not an answer's).
    """
    reference = next((n for n in ast.parse(buggy_source).body
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)
    if reference is None:
        raise ValueError(f"the buggy source does not define {name}()")
    source = candidate_source(answer if isinstance(answer, str) else "", name)
    if source is None:
        return Extraction("not_found", detail=f"no function named {name} was found (answer with one fenced "
                                              f"python block holding the whole fixed function)")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return Extraction("syntax_error", source, detail=f"SyntaxError at line {exc.lineno}: {exc.msg}")
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        return Extraction("syntax_error", source, detail=f"the code does not compile: {type(exc).__name__}")
    bindings = [stmt for stmt in tree.body if _binds(stmt, name)]
    defs = [s for s in bindings if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(bindings) > 1:
        return Extraction("defined_twice", source,
                          detail=f"{name} is defined {len(bindings)} times at top level; define it once")
    if not defs:
        return Extraction("not_found", source, detail=f"the code does not define a function named {name} at top level")
    node = defs[0]
    text = function_text(node)
    if signature(node) != signature(reference):
        return Extraction("signature_changed", source, text,
                          f"signature changed: expected {describe_signature(reference)}, "
                          f"found {describe_signature(node)}")
    stray = next((stmt for stmt in tree.body if not _allowed_top_level(stmt)), None)
    if stray is not None:
        line = ast.unparse(stray).split("\n")[0][:60]
        return Extraction("tampering", source, text,
                          f"top-level code at line {stray.lineno} ({line}) is not allowed: answer with "
                          f"definitions only, nothing that runs on import")
    return Extraction("ok", source, text, "")
