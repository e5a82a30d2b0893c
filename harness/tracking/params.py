"""The params a run logs: every option, what was resolved from them, and the versions of the libraries."""

from __future__ import annotations

import importlib.metadata
import os
from dataclasses import asdict
from typing import Any

from harness.config import EvolveConfig
from harness.messages import redact_url
from harness.skills.files import Skill
from verifiers import Splits

#: packages whose versions every run records (``version.<package>``)
RECORDED_PACKAGES: tuple[str, ...] = ("dspy", "gepa", "mlflow", "litellm")


def package_version(package: str) -> str:
    """The installed version of ``package``, or ``"not installed"``."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def run_params(config: EvolveConfig, skill: Skill, splits: Splits, fitness: str) -> dict[str, Any]:
    """Every CLI option plus what was resolved from them (skill path and hash, dataset digest, split sizes,
    the DSPy cache folder and the library versions).  ``api_base`` is logged with its credentials redacted
    (:func:`harness.messages.redact_url`)."""
    params: dict[str, Any] = {k: v for k, v in asdict(config).items() if k != "dry_run"}
    params["num_cases"] = config.num_cases or 0  # as the CLI option says it: 0 = all
    params["api_base"] = redact_url(config.api_base)  # never a password or key from the URL in the store
    params.update({
        "fitness_resolved": fitness, "proposer_resolved": config.resolved_proposer(),
        "skill_path": str(skill.path), "skill_name": skill.name,
        "baseline_sha256": skill.sha256, "dataset_digest": splits.digest(),
        "dspy_cache_dir": os.environ.get("DSPY_CACHEDIR", ""),
        **{f"version.{pkg}": package_version(pkg) for pkg in RECORDED_PACKAGES},
        **{f"split.{name}": size for name, size in splits.sizes.items()},
    })
    return params
