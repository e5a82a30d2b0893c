"""Registry mapping skill names to verifier classes.

Verifiers register with the :func:`register_verifier` decorator, or, from another package,
through the entry point group ``skill_evolution_harness.verifiers`` (name = skill name, value =
``module:Class``), in the manner of simonw/llm plugins.  Entry points are loaded lazily on the
first look-up.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from importlib.metadata import entry_points

from verifiers.base import Verifier

ENTRY_POINT_GROUP = "skill_evolution_harness.verifiers"
#: modules of this package that register verifiers when imported
BUILTIN_MODULES: tuple[str, ...] = ("verifiers.arxiv", "verifiers.pybugfix")

_REGISTRY: dict[str, type[Verifier]] = {}
_loaded = False


class UnknownVerifierError(LookupError):
    """No verifier is registered for a skill name."""


def register_verifier(name: str) -> Callable[[type[Verifier]], type[Verifier]]:
    """Class decorator: register ``cls`` as the verifier for skill ``name``.

    Raises:
        ValueError: if ``name`` is not a string or is empty or blank (a skill name is needed to look the verifier
            up), or, when decorating, if another class is already registered under ``name``.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"verifier name {name!r} is empty or blank; register the verifier under its skill's "
                         "name, e.g. @register_verifier(\"my-skill\")")

    def decorate(cls: type[Verifier]) -> type[Verifier]:
        existing = _REGISTRY.get(name)
        if existing is not None and existing is not cls:
            raise ValueError(
                f"verifier name {name!r} is already registered by {existing.__module__}.{existing.__qualname__}"
            )
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return decorate


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN_MODULES:
        import_module(module)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        cls = ep.load()
        if ep.name not in _REGISTRY:
            register_verifier(ep.name)(cls)


def available_verifiers() -> list[str]:
    """Sorted names of all registered verifiers (built-in and entry points)."""
    _load()
    return sorted(_REGISTRY)


def has_verifier(skill_name: str) -> bool:
    """Whether a verifier is registered for ``skill_name``."""
    _load()
    return skill_name in _REGISTRY


def get_verifier(skill_name: str, **options: object) -> Verifier:
    """A new instance of the verifier registered for ``skill_name``, ``options`` passed to its constructor
    (e.g. ``sandbox="required"`` for python-bugfix).

    Raises:
        UnknownVerifierError: naming the skill and the registered verifiers.
    """
    _load()
    try:
        cls = _REGISTRY[skill_name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise UnknownVerifierError(
            f"no verifier is registered for skill {skill_name!r} (registered: {known}); give the skill a task "
            f"file (<skill folder>/evals/tasks.jsonl with checks: README, 'Evolve your own skill') or register "
            f"a verifier with @register_verifier"
        ) from None
    return cls(**options)
