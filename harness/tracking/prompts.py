"""Skill versions in MLflow's prompt registry: the baseline is version 1, each accepted evolution a new version.

One prompt per skill, named :func:`prompt_name` (``arxiv`` -> ``skill-arxiv``).  A version's template is the
whole SKILL.md text (frontmatter + body), stored and loaded back byte for byte: MLflow keeps a text
template verbatim (it only *detects* ``{{ variables }}`` for ``format``; nothing is rewritten on save or
load), so braces of code blocks and CRLF line endings survive.  Use ``PromptVersion.template``, never
``format()``, to get the file back.

Version tags (all strings):

* every version: ``variant`` (``baseline`` / ``evolved``), ``skill`` (the skill name), ``sha256`` (hex
  SHA-256 of the UTF-8 template, i.e. of the SKILL.md without a BOM);
* the baseline also ``source_path`` (where the file was loaded from);
* an evolved version also ``run_id``, ``fitness`` (the fitness signal that drove the optimizer, e.g.
  ``verifier``), ``verdict`` (improved / regressed / inconclusive / rejected) and ``holdout_delta`` (evolved
  minus baseline mean holdout composite, ``repr`` of a float; ``""`` when unknown), ``task_model`` (the model
  the verdict was measured with) and ``dataset_digest`` (the splits it was measured on); a later run that
  evolved the identical text adds ``run.<run_id>`` (its verdict, task model, fitness and delta) instead of a
  new version;
* the baseline's ``verdict`` is ``baseline`` (it is what evolutions are measured against).

Aliases: ``baseline`` -> version 1, ``evolved`` -> the newest evolved version (whatever its verdict), so
``mlflow.genai.load_prompt("prompts:/skill-arxiv@evolved")`` loads the latest evolution; ``verified`` -> the
newest version with an ``improved`` verdict from a real task model (never an offline ``test/...`` LM), the one
to deploy.  An evolved version is also linked to its run (the run page lists it under its prompts).

The prompt-level tags hold only ``skill``; per-version facts stay on versions (MLflow's ``register_prompt``
would copy each version's tags onto the prompt, so this module uses ``create_prompt`` /
``create_prompt_version`` instead).

The registry is the tracking store's (``MLFLOW_TRACKING_URI``, e.g. ``sqlite:///mlflow.db``); a file store
has no prompt registry.
"""

from __future__ import annotations

import hashlib
import logging
import math
import re
from typing import TYPE_CHECKING, Any

import pandas as pd

from harness.messages import first_line

if TYPE_CHECKING:
    from mlflow import MlflowClient
    from mlflow.entities.model_registry import PromptVersion

    from harness.analysis.stats import Verdict
    from harness.skills.files import Skill

_logger = logging.getLogger(__name__)

#: prefix of every skill's prompt name
PROMPT_PREFIX = "skill-"
#: characters MLflow allows in a prompt name (``mlflow.prompt.constants.PROMPT_NAME_RULE``)
_PROMPT_NAME_RE = re.compile(r"^[a-zA-Z0-9_.-]+$")
_INVALID_CHARS_RE = re.compile(r"[^a-zA-Z0-9_.-]+")
#: longest template MLflow stores (the prompt text is a model-version tag, capped at 100,000 characters)
MAX_PROMPT_CHARS = 100_000

#: the baseline's version number
BASELINE_VERSION = 1
#: aliases this module maintains
BASELINE_ALIAS = "baseline"
EVOLVED_ALIAS = "evolved"
#: the alias users can trust: moved only by an ``improved`` verdict of a real (non-test) task model
VERIFIED_ALIAS = "verified"

#: columns of :func:`skill_versions`, in order
VERSION_COLUMNS: tuple[str, ...] = ("version", "variant", "run_id", "fitness", "verdict", "holdout_delta",
                                    "task_model", "dataset_digest", "created", "sha256", "aliases")


class PromptRegistryError(RuntimeError):
    """The prompt registry cannot hold a skill version (message names the prompt and the fix)."""


class BaselineMismatchError(PromptRegistryError):
    """Version 1 of a skill's prompt is a different text than the skill being registered.

    Nothing is registered.  The skill file changed since its first registration: register the changed
    skill under another name, or delete the prompt (``MlflowClient().delete_prompt(name)``, after deleting
    its versions) to start its history again.

    Attributes:
        prompt: the prompt name.
        registered_sha256: SHA-256 of the registered version 1.
        skill_sha256: SHA-256 of the skill text being registered.
    """

    def __init__(self, prompt: str, registered_sha256: str, skill_sha256: str) -> None:
        self.prompt = prompt
        self.registered_sha256 = registered_sha256
        self.skill_sha256 = skill_sha256
        super().__init__(
            f"prompt {prompt!r} version {BASELINE_VERSION} (sha256 {registered_sha256[:12]}) is not this skill's "
            f"text (sha256 {skill_sha256[:12]}): the SKILL.md changed since it was first registered, so no "
            f"version was registered. Rename the skill, or delete prompt {prompt!r} to restart its history")


def prompt_name(skill_name: str) -> str:
    """The registry name of a skill: ``"skill-" + skill_name``.

    MLflow allows only ``[A-Za-z0-9_.-]`` in prompt names.  A name with other characters has each run of
    them replaced by ``-`` and the first 8 hex digits of its SHA-256 appended, so distinct skill names never
    share a prompt (``"my skill"`` -> ``"skill-my-skill-<8 hex>"``).

    Raises:
        ValueError: an empty (or whitespace-only) skill name.
    """
    if not skill_name.strip():
        raise ValueError("a skill name cannot be empty")
    name = PROMPT_PREFIX + skill_name
    if _PROMPT_NAME_RE.match(name):
        return name
    digest = hashlib.sha256(skill_name.encode("utf-8")).hexdigest()[:8]
    return f"{PROMPT_PREFIX}{_INVALID_CHARS_RE.sub('-', skill_name).strip('-') or 'x'}-{digest}"


def text_sha256(text: str) -> str:
    """Hex SHA-256 of ``text`` encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _client(client: MlflowClient | None = None) -> MlflowClient:
    """``client``, or a client of MLflow's current tracking URI."""
    if client is not None:
        return client
    from mlflow import MlflowClient

    return MlflowClient()


def _check_text(name: str, text: str) -> None:
    if len(text) > MAX_PROMPT_CHARS:
        raise PromptRegistryError(f"cannot register a version of {name!r}: the SKILL.md has {len(text):,} characters, "
                                  f"over the prompt registry's limit of {MAX_PROMPT_CHARS:,}")
    if not text.strip():
        raise PromptRegistryError(f"cannot register an empty SKILL.md as a version of {name!r}")


def _get_version(client: MlflowClient, name: str, version: int) -> PromptVersion | None:
    """The prompt version, or None when the prompt or the version does not exist."""
    from mlflow.exceptions import MlflowException

    try:
        return client.get_prompt_version(name, version)
    except MlflowException as exc:
        if "not found" in str(exc).lower() or "does not exist" in str(exc).lower():
            return None
        raise


def _ensure_prompt(client: MlflowClient, name: str, skill_name: str) -> bool:
    """Create the prompt if it is missing; returns whether it was created."""
    from mlflow.exceptions import MlflowException

    if client.get_prompt(name) is not None:
        return False
    try:
        client.create_prompt(name, description=f"SKILL.md versions of skill {skill_name!r} "
                                               "(version 1 = baseline; later versions = accepted evolutions)",
                             tags={"skill": skill_name})
    except MlflowException as exc:  # created concurrently by another process
        if "already exists" not in str(exc).lower():
            raise
        return False
    return True


def _link(client: MlflowClient, run_id: str, version: PromptVersion) -> None:
    """Link ``version`` to run ``run_id`` (best effort: a failure is logged, the version stays registered)."""
    try:
        client.link_prompt_version_to_run(run_id, version)
    except Exception as exc:  # the link is a UI convenience; the tags carry the run id anyway
        _logger.warning("could not link prompt %s version %s to run %s: %s", version.name, version.version,
                        run_id, exc)


def register_baseline(skill: Skill, *, run_id: str | None = None, client: MlflowClient | None = None) -> int:
    """Register ``skill.text`` as version 1 of ``prompt_name(skill.name)``; returns 1.

    Idempotent: when version 1 already holds exactly ``skill.text`` it is reused and nothing is written.

    Args:
        skill: the baseline skill (``skill.text``, frontmatter + body, is the template).
        run_id: when given, the new version is linked to that run (not tagged: the baseline belongs to no run).
        client: the tracker's client (default: one on MLflow's current tracking URI).

    Raises:
        BaselineMismatchError: version 1 exists with a different text (nothing is registered).
        PromptRegistryError: the text is empty or over :data:`MAX_PROMPT_CHARS`, or the prompt exists but
            its first version was deleted.
        mlflow.exceptions.MlflowException: the registry refused the write (e.g. the name is a registered model).
    """
    name = prompt_name(skill.name)
    _check_text(name, skill.text)
    client = _client(client)
    _ensure_prompt(client, name, skill.name)
    existing = _get_version(client, name, BASELINE_VERSION)
    if existing is None and client.search_prompt_versions(name, max_results=1):
        # versions exist: either another process registered the baseline after our first look, or it was deleted
        existing = _get_version(client, name, BASELINE_VERSION)
        if existing is None:
            raise PromptRegistryError(f"prompt {name!r} has versions but no version {BASELINE_VERSION} (the baseline "
                                      f"was deleted); delete prompt {name!r} to restart its history")
    if existing is None:  # no version at all: register ours; a concurrent process may get there first
        tags = {"verdict": "baseline", "variant": "baseline", "skill": skill.name, "sha256": text_sha256(skill.text),
                "source_path": str(skill.path)}
        created = client.create_prompt_version(name, skill.text, description=f"baseline SKILL.md of {skill.name}",
                                               tags=tags)
        if int(created.version) != BASELINE_VERSION:  # another process registered first: drop our duplicate
            client.delete_prompt_version(name, str(created.version))
            existing = _get_version(client, name, BASELINE_VERSION)
        else:
            client.set_prompt_alias(name, BASELINE_ALIAS, BASELINE_VERSION)
            if run_id:
                _link(client, run_id, created)
            return BASELINE_VERSION
    assert existing is not None
    if existing.template != skill.text:
        raise BaselineMismatchError(name, text_sha256(str(existing.template)), text_sha256(skill.text))
    return BASELINE_VERSION


def _verdict_text(verdict: str | Verdict) -> str:
    value = getattr(verdict, "verdict", verdict)
    return str(value)


def format_delta(delta: float | None) -> str:
    """A holdout delta as a tag value: ``repr(float(delta))``; ``""`` for None (``"nan"`` for NaN)."""
    return "" if delta is None else repr(float(delta))


def _all_versions(client: MlflowClient, name: str) -> list[PromptVersion]:
    versions: list[PromptVersion] = []
    token: str | None = None
    while True:
        page = client.search_prompt_versions(name, max_results=100, page_token=token)
        versions.extend(page)
        token = getattr(page, "token", None)
        if not token:
            return versions


def trusted(verdict: str | Verdict, task_model: str) -> bool:
    """Whether a version may carry the :data:`VERIFIED_ALIAS`: an ``improved`` verdict from a task model that
    is neither an offline test LM (``test/...``, :func:`harness.models.lm.is_test_model`) nor unnamed."""
    from harness.models.lm import is_test_model

    return _verdict_text(verdict) == "improved" and bool(task_model.strip()) and not is_test_model(task_model)


def register_evolved(skill: Skill, evolved_text: str, run_id: str, fitness: str, verdict: str | Verdict,
                     delta: float | None, *, client: MlflowClient | None = None, task_model: str = "",
                     dataset_digest: str = "") -> int:
    """Register an evolved SKILL.md as the next version of the skill's prompt; returns its version number.

    Registers the baseline first when needed (:func:`register_baseline`).  Call it only for an evolved
    skill that passed the gates.  An identical text is not a new version: when any version already holds
    exactly ``evolved_text``, its number is returned; a run other than the one that registered it is recorded
    on it as the tag ``run.<run_id>`` = ``"<verdict> · <task model> · <fitness> · Δ <delta>"``.  A new version
    gets the ``evolved`` alias (the latest evolution, whatever its verdict); the ``verified`` alias moves to
    the version only when :func:`trusted` (an ``improved`` verdict of a real task model).  The version is
    linked to ``run_id``.

    Args:
        skill: the baseline skill the text evolved from.
        evolved_text: the whole evolved SKILL.md (frontmatter + body).
        run_id: the MLflow run that produced it.
        fitness: the fitness signal that drove the optimizer (``keyword`` / ``judge`` / ``verifier``).
        verdict: the run's verdict (a string, or a :class:`harness.analysis.stats.Verdict`).
        delta: holdout delta, evolved minus baseline mean composite (None when unknown).
        client: the tracker's client (default: one on MLflow's current tracking URI).
        task_model: the task model the verdict was measured with (tag ``task_model``).
        dataset_digest: the digest of the splits it was measured on (tag ``dataset_digest``).

    Raises:
        BaselineMismatchError: the registered baseline is another text (nothing is registered).
        PromptRegistryError: ``evolved_text`` is empty or too long, or ``run_id`` is empty.
    """
    if not run_id:
        raise PromptRegistryError("an evolved skill version needs the run id that produced it")
    name = prompt_name(skill.name)
    _check_text(name, evolved_text)
    client = _client(client)
    register_baseline(skill, client=client)
    sha = text_sha256(evolved_text)
    for version in _all_versions(client, name):
        tags = version.tags or {}
        if tags.get("sha256") == sha and version.template == evolved_text:
            number = int(version.version)
            if tags.get("run_id") != run_id and number != BASELINE_VERSION:
                client.set_prompt_version_tag(name, str(number), f"run.{run_id}",
                                              f"{_verdict_text(verdict)} · {task_model or '?'} · {fitness} · "
                                              f"Δ {format_delta(delta) or 'n/a'}")
                if trusted(verdict, task_model):
                    client.set_prompt_alias(name, VERIFIED_ALIAS, number)
                _link(client, run_id, version)
            return number
    # the verdict first: the version page lists the first three tags and hides the rest behind "N more"
    tags = {"verdict": _verdict_text(verdict), "task_model": task_model, "holdout_delta": format_delta(delta),
            "fitness": str(fitness), "run_id": run_id, "dataset_digest": dataset_digest, "variant": "evolved",
            "skill": skill.name, "sha256": sha}
    created = client.create_prompt_version(name, evolved_text, tags=tags,
                                           description=f"verdict {tags['verdict']} (Δ {tags['holdout_delta'] or 'n/a'}"
                                                       f") · task model {task_model or '?'} · {fitness} fitness · "
                                                       f"run {run_id}")
    number = int(created.version)
    client.set_prompt_alias(name, EVOLVED_ALIAS, number)
    if trusted(verdict, task_model):
        client.set_prompt_alias(name, VERIFIED_ALIAS, number)
    _link(client, run_id, created)
    return number


def _delta_value(text: str | None) -> float:
    try:
        return float(text) if text else math.nan
    except ValueError:
        return math.nan


def skill_versions(skill_name: str) -> pd.DataFrame:
    """The registered versions of a skill, oldest first, one row per version.

    Columns (:data:`VERSION_COLUMNS`): ``version`` (int), ``variant``, ``run_id``, ``fitness``, ``verdict``
    (``""`` when absent, as for the baseline), ``holdout_delta`` (float, NaN when absent), ``created``
    (``pandas.Timestamp``, UTC), ``sha256`` (hex), ``aliases`` (comma-separated).  An unknown skill gives an
    empty frame with these columns.
    """
    name = prompt_name(skill_name)
    client = _client()
    if client.get_prompt(name) is None:
        return pd.DataFrame(columns=list(VERSION_COLUMNS))
    rows: list[dict[str, Any]] = []
    for listed in _all_versions(client, name):
        # a search leaves aliases out; a version's own record has them
        version = _get_version(client, name, int(listed.version)) or listed
        tags = version.tags or {}
        rows.append({
            "version": int(version.version),
            "variant": tags.get("variant", ""),
            "run_id": tags.get("run_id", ""),
            "fitness": tags.get("fitness", ""),
            "verdict": tags.get("verdict", ""),
            "holdout_delta": _delta_value(tags.get("holdout_delta")),
            "task_model": tags.get("task_model", ""),
            "dataset_digest": tags.get("dataset_digest", ""),
            "created": pd.Timestamp(version.creation_timestamp, unit="ms", tz="UTC"),
            "sha256": tags.get("sha256", ""),
            "aliases": ",".join(sorted(version.aliases or [])),
        })
    frame = pd.DataFrame(rows, columns=list(VERSION_COLUMNS))
    return frame.sort_values("version", ignore_index=True)




def list_versions(skill_name: str) -> tuple[str, pd.DataFrame]:
    """``(prompt name, skill_versions(skill_name))`` after one quick probe of the tracking store, so a down
    server is reported at once instead of after minutes of HTTP retries.

    Raises:
        PromptRegistryError: an invalid skill name, an unusable store or a failed query (one line, naming the
            skill).
    """
    from mlflow.exceptions import MlflowException

    from harness.tracking.store import TrackingError, check_tracking_store

    try:
        name = prompt_name(skill_name)
        check_tracking_store()
        return name, skill_versions(skill_name)
    except (ValueError, MlflowException, TrackingError) as exc:
        raise PromptRegistryError(f"cannot list versions of skill {skill_name!r}: {first_line(exc)}") from None
