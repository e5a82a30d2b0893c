"""Screenshots of the MLflow UI pages where a run's verdict and its evidence should show (issue 16).

Usage (a server on a store that holds a ``harness evolve`` run and a ``harness compare`` experiment)::

    mlflow server --host 127.0.0.1 --port 5055 --backend-store-uri sqlite:////tmp/ui16/ui.db
    python experiments/ui/screenshots.py --url http://127.0.0.1:5055 --out /tmp/ui16/shots [--skill arxiv]

Takes one PNG per page with headless Debian Chromium (``apt-get install -y chromium``), always with the same
command line, so the next change to the UI can be checked the same way:

* ``01-runs-table``: the experiment's runs table (names, descriptions, verdict);
* ``02-evaluation-runs``: the ``<experiment>/holdout`` evaluation runs (one per variant);
* ``03-run-page``: the newest single (non side-by-side) run: description, headline metrics;
* ``04-artifact-claim`` / ``05-artifact-diff`` / ``06-artifact-skill`` / ``07-artifact-per-task``: its artifacts;
* ``08-traces``: the holdout experiment's traces;
* ``09-compare-to``: the evolved evaluation run compared to the baseline one, per task;
* ``10-parent``: the side-by-side parent's run page; ``11-parent-heatmap``: its heatmap artifact;
* ``12-prompts`` / ``13-prompt-versions``: the prompt registry and the skill's versions.

The screenshots are written to ``--out`` (keep them out of the repository).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def shoot(url: str, out: Path) -> None:
    """One screenshot of ``url`` into ``out`` (a fresh profile each time, 1600×1000, 25 s of virtual time)."""
    profile = tempfile.mkdtemp(prefix="chromium-")
    cmd = [*CHROMIUM, f"--user-data-dir={profile}", "--window-size=1600,1000", "--virtual-time-budget=25000",
           f"--screenshot={out}", url]
    subprocess.run(cmd, check=True, capture_output=True, timeout=180)
    print(f"{out}  <-  {url}")


def pages(base: str, skill: str) -> list[tuple[str, str]]:
    """``(file stem, URL)`` of every page, looked up in the server's store."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=base)
    main = client.get_experiment_by_name(f"skills/{skill}")
    holdout = client.get_experiment_by_name(f"skills/{skill}/holdout")
    if main is None or holdout is None:
        sys.exit(f"no experiments skills/{skill} and skills/{skill}/holdout on {base}: run harness evolve first")
    runs = client.search_runs([main.experiment_id], order_by=["attributes.start_time DESC"])
    single = next(r for r in runs if "mlflow.parentRunId" not in r.data.tags and "holdout.evolved.run_id" in r.data.tags
                  and r.data.tags.get("experiment.kind") != "side-by-side")
    parent = next((r for r in runs if r.data.tags.get("experiment.kind") == "side-by-side"), None)
    exp, run = main.experiment_id, single.info.run_id
    base_eval, evo_eval = (single.data.tags[f"holdout.{v}.run_id"] for v in ("baseline", "evolved"))
    ui = base.rstrip("/") + "/#"
    out = [("01-runs-table", f"{ui}/experiments/{exp}/runs"),
           ("02-evaluation-runs", f"{ui}/experiments/{holdout.experiment_id}/evaluation-runs"),
           ("03-run-page", f"{ui}/experiments/{exp}/runs/{run}"),
           ("04-artifact-claim", f"{ui}/experiments/{exp}/runs/{run}/artifacts/claim_report.md"),
           ("05-artifact-diff", f"{ui}/experiments/{exp}/runs/{run}/artifacts/skill/diff.md"),
           ("06-artifact-skill", f"{ui}/experiments/{exp}/runs/{run}/artifacts/skill/evolved/preview.md"),
           ("07-artifact-per-task", f"{ui}/experiments/{exp}/runs/{run}/artifacts/holdout/per_task.json"),
           ("08-traces", f"{ui}/experiments/{holdout.experiment_id}/traces"),
           ("09-compare-to", f"{ui}/experiments/{holdout.experiment_id}/evaluation-runs?selectedRunUuid={evo_eval}"
                             f"&compareToRunUuid={base_eval}")]
    if parent is not None:
        pid = parent.info.run_id
        out += [("10-parent", f"{ui}/experiments/{exp}/runs/{pid}"),
                ("11-parent-heatmap", f"{ui}/experiments/{exp}/runs/{pid}/artifacts/xgrade/xgrade_heatmap.png")]
    out += [("12-prompts", f"{ui}/prompts"), ("13-prompt-versions", f"{ui}/prompts/skill-{skill}")]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", default="http://127.0.0.1:5055")
    parser.add_argument("--out", type=Path, default=Path("/tmp/ui16/shots"))
    parser.add_argument("--skill", default="arxiv")
    parser.add_argument("--only", default="", help="comma list of file stems to take (default: all)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    for stem, url in pages(args.url, args.skill):
        if not only or stem in only:
            shoot(url, args.out / f"{stem}.png")


if __name__ == "__main__":
    main()
