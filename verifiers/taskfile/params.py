"""Reading a check's parameters from a task file, with one clear error per bad parameter."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verifiers.taskfile.errors import TaskFileError

#: JSON types by the name used in messages.
_TYPE_NAMES: dict[type, str] = {str: "a string", int: "an integer", float: "a number", bool: "true or false",
                                list: "a list", dict: "an object"}
_MISSING = object()


def type_name(value: object) -> str:
    """How a parsed JSON/YAML value's type is named in messages (``"a string"``, ``"null"``, ...)."""
    if value is None:
        return "null"
    for kind, name in _TYPE_NAMES.items():
        if type(value) is kind:
            return name
    return type(value).__name__


class Params:
    """The parameters of one check spec; every read names ``where`` (file, line or eval id, check) on error.

    Call :meth:`finish` last: a parameter nobody read is an error (it is usually a typo).
    """

    def __init__(self, spec: Mapping[str, Any], where: str, check_type: str) -> None:
        self.spec = spec
        self.where = where
        self.check_type = check_type
        self._read: set[str] = {"type"}

    def error(self, field: str, problem: str, fix: str) -> TaskFileError:
        """A :class:`TaskFileError` for ``field`` of this check."""
        return TaskFileError(f"{self.where}, {self.check_type} check, field {field!r}: {problem}; {fix}")

    def has(self, key: str) -> bool:
        """Whether ``key`` is given."""
        return key in self.spec

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        """The value of ``key`` as parsed (any JSON type); required when ``default`` is not given."""
        self._read.add(key)
        if key in self.spec:
            return self.spec[key]
        if default is _MISSING:
            raise self.error(key, "missing", f"add {key!r} to the check")
        return default

    def text(self, key: str, default: Any = _MISSING, *, allow_empty: bool = False) -> str:
        """A string parameter (non-empty unless ``allow_empty``)."""
        value = self.raw(key, default)
        if not isinstance(value, str) or (not allow_empty and not value.strip()):
            raise self.error(key, f"expected a non-empty string, got {type_name(value)} {value!r}"[:200],
                             "quote the value as a string")
        return value

    def number(self, key: str, default: Any = _MISSING, *, positive: bool = False) -> float:
        """A number parameter (not a boolean); ``positive`` requires ``> 0``, else ``>= 0`` is not enforced."""
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise self.error(key, f"expected a number, got {type_name(value)} {value!r}"[:200],
                             "write a plain number such as 0.5")
        if positive and value <= 0:
            raise self.error(key, f"expected a number above 0, got {value!r}", "use a positive number")
        return float(value)

    def integer(self, key: str, default: Any = _MISSING) -> int:
        """A positive integer parameter."""
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.error(key, f"expected a positive integer, got {type_name(value)} {value!r}"[:200],
                             "write a whole number such as 200")
        return value

    def flag(self, key: str, default: bool = False) -> bool:
        """A boolean parameter."""
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"expected true or false, got {type_name(value)} {value!r}"[:200],
                             "write true or false")
        return value

    def texts(self, key: str, *, min_items: int = 1) -> tuple[str, ...]:
        """A list of non-empty strings with at least ``min_items`` items; one string counts as a list of one."""
        value = self.raw(key)
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
            raise self.error(key, f"expected a list of non-empty strings, got {type_name(value)}",
                             'write it as ["first", "second"]')
        if len(items) < min_items:
            raise self.error(key, f"expected at least {min_items} item(s), got {len(items)}",
                             f"list at least {min_items}")
        return tuple(items)

    def mapping(self, key: str, default: Any = _MISSING) -> dict[str, Any]:
        """An object parameter."""
        value = self.raw(key, default)
        if not isinstance(value, dict):
            raise self.error(key, f"expected an object, got {type_name(value)}", 'write it as {"key": value}')
        return value

    def finish(self) -> None:
        """Raise for any parameter that was not read (unknown to this check type)."""
        unknown = sorted(set(self.spec) - self._read)
        if unknown:
            known = ", ".join(sorted(self._read - {"type"}))
            raise self.error(unknown[0], f"unknown parameter of a {self.check_type} check",
                             f"remove it or use one of: {known}")
