"""Screenshots of the MLflow UI pages where a run's verdict and its evidence should show (issue 16).

Usage (a server on a store that holds ``harness evolve`` runs, a ``harness compare`` experiment and, optionally,
a ``harness ab --candidates`` run)::

    mlflow server --host 127.0.0.1 --port 5055 --backend-store-uri sqlite:////tmp/ui16/mlflow.db
    python experiments/ui/screenshots.py --url http://127.0.0.1:5055 --out /tmp/ui16/shots \
        [--skill arxiv] [--extra-skill tool-choice]

Takes one PNG per page with headless Debian Chromium (``apt-get install -y chromium``), always with the same
command line (:data:`CHROMIUM` plus a fresh profile, 1600×1000, 25 s of virtual time), so the next change to the
UI can be checked the same way.  Pages of the skill ``--skill`` (experiment ``skills/<skill>``):

* ``01-runs-table``: the experiment's runs table as MLflow shows it by default, fresh profile, plain experiment
  URL (the run names, which lead with the verdict);
* ``01b-runs-verdict-view``: the same table in the harness's saved view "Verdict (harness)"
  (``?viewStateShareKey=harness-verdict``: description, headline metrics, verdict);
* ``02-evaluation-runs``: the ``skills/<skill>/holdout`` evaluation runs (one per variant);
* ``03-run-page``: the newest evolution run whose skill changed (not a parent, not an A/B run): description,
  headline metrics, tags;
* ``04-artifact-claim`` / ``05-artifact-diff`` / ``06-artifact-skill`` / ``07-artifact-per-task`` /
  ``08-artifact-stats``: its claim report, diff preview, evolved SKILL.md preview, per-task pivot, statistics;
  ``05b-artifact-diff-patch`` / ``06b-artifact-skill-md``: the raw ``skill/diff.patch`` and
  ``skill/evolved/SKILL.md`` (which MLflow's artifact viewer may not preview: hence the ``.md`` previews);
* ``09-traces``: the holdout experiment's Traces tab by default (the response preview names the variant);
  ``09b-traces-view``: the same tab in the harness's saved traces view "Variant and grades (harness)"
  (``?traceViewShareKey=harness-verdict``: trace name, every grader's score, the variant tag);
  ``10-compare-to``: the evolved evaluation run compared to the baseline one, per task, on the Evaluation runs
  page (``?selectedRunUuid=&compareToRunUuid=``); ``10b-compare-run-traces``: the same comparison on the evolved
  evaluation run's own Traces tab (``runs/<evolved>/traces?compareToRunUuid=<baseline>``, the link the summary
  prints as "baseline vs evolved per task": no run list beside it, so about 450 px wider);
  ``10c-evolved-eval-run``: that evaluation run's overview (its description links the comparison);
  with ``--remote``, ``10d-compare-run-traces-remote``: 10b as a user on another machine sees it (the server
  reached by a private address, Chromium's ``--host-resolver-rules`` mapping it to ``--url``): MLflow opens
  its Assistant panel by itself only when the UI's host name is ``localhost``, ``127.0.0.1`` or ``::1``
  (start the server with ``--cors-allowed-origins http://10.0.0.16:5055``, else it refuses the page's
  trace searches as cross-origin);
  ``10e-compare-to-as-user``: 10 after what a user does once (below): the grader score columns per task;
* ``10f-child-compare``: a side-by-side child's comparison (its evolved evaluation run's Traces tab compared to
  its baseline, as 10b: graders judge, keyword, verifier) by default; ``10g-child-compare-as-user``: the same
  after what a user does once; with ``--remote``, ``10h-child-compare-remote``: 10f from another machine;
* ``11-parent`` / ``12-parent-claim`` / ``13-parent-heatmap`` / ``14-parent-seeds``: the newest side-by-side
  parent (one with several seeds first): run page, claim report, heatmap, seeds claim report;
* ``15-unchanged``: the newest run whose evolved skill is the baseline (verdict ``unchanged``);
* ``16-ab-parent`` / ``17-ab-child`` / ``18-ab-ranking``: the newest A/B parent, its first child, its ranking;
* ``19-prompts`` / ``20-prompt-versions``: the prompt registry and the skill's versions (tags, aliases);
* per ``--extra-skill`` (a task-file skill, say): ``21-<skill>-runs-table`` (default), ``22-<skill>-runs-verdict-view``
  and ``23-<skill>-run-page`` (then 24/25/26, ...).

A page whose run is not in the store is left out.  The screenshots go to ``--out``, which must lie
outside this repository (screenshots are never committed).

The ``-as-user`` pages (10e, 10g) are taken through Chromium's DevTools protocol (``experiments/ui/devtools.py``,
same Chromium command line, fresh profile, a 1600×1000 viewport) instead of ``--screenshot``: MLflow's columns have
fixed widths and a fixed order (Request 300 px, Trace ID 100 px, Response 300 px, then the graders at about 117 px
each: MLflow 3.17's bundle; the only lever a run has is to log no request or response at all, which MLflow answers
by hiding those columns, and the question and answer are the per-task evidence), and on localhost MLflow opens its
Assistant panel (about 410 px) by itself once per browser, so at 1,600 px the grader columns start beyond the
visible width.  After the page has loaded and its grader columns exist, the script does, with real mouse events,
exactly:

1. if the Assistant panel is open, one left click on its X button (``aria-label="Close"``, top right of the
   panel), then waits until the panel is gone (MLflow remembers this in the browser, as for any user);
2. if the right edge of the comparison's "Assessments" column group (the grader score columns) still lies beyond
   the visible width of the traces table, mouse-wheel scrolls with the pointer over the table, horizontally
   only, until that edge is in view (never past the group's left edge), at most three wheel turns;

then waits 1.5 s and captures the viewport.  The script itself sets no CSS, no localStorage and no column choice;
its JavaScript only reads where the button and the columns are.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

#: the repository root: ``--out`` may not lie inside it
REPO = Path(__file__).resolve().parents[2]
#: the share key of the saved runs and traces views (harness.tracking.views.VIEW_KEY; this script imports no harness)
VIEW_KEY = "harness-verdict"

CHROMIUM = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"]


#: the pages taken after what a user does once (:func:`shoot_as_user`), not by ``chromium --screenshot``
AS_USER = ("10e-compare-to-as-user", "10g-child-compare-as-user")
#: the pages also taken from another machine with ``--remote`` (their file stem there)
REMOTE = {"10b-compare-run-traces": "10d-compare-run-traces-remote", "10f-child-compare": "10h-child-compare-remote"}

#: the private address a ``--remote`` screenshot reaches the server by (MLflow's server accepts private
#: addresses as Host headers by default; Chromium maps it to the server's real address)
REMOTE_HOST = "10.0.0.16"


def shoot(url: str, out: Path, resolve: str = "") -> None:
    """One screenshot of ``url`` into ``out`` (a fresh profile each time, 1600×1000, 25 s of virtual time);
    ``resolve``: a Chromium ``--host-resolver-rules`` value (e.g. ``"MAP 10.0.0.16 127.0.0.1"``).

    Raises:
        subprocess.CalledProcessError: Chromium failed; subprocess.TimeoutExpired: it took over 180 s.
    """
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        cmd = [*CHROMIUM, f"--user-data-dir={profile}", "--window-size=1600,1000", "--virtual-time-budget=25000",
               *([f"--host-resolver-rules={resolve}"] if resolve else []), f"--screenshot={out}", url]
        subprocess.run(cmd, check=True, capture_output=True, timeout=180)
    print(f"{out}  <-  {url}")


#: reads the page only: the centre of the open Assistant panel's X button, or null when the panel is closed
ASSISTANT_X = """(() => {
  const b = document.querySelector('button[data-component-id="mlflow.assistant.chat_panel.close"]');
  if (!b) return null;
  const r = b.getBoundingClientRect();
  return r.width ? [r.left + r.width / 2, r.top + r.height / 2] : null;
})()"""

#: reads the page only: where the comparison's "Assessments" header group (the grader columns) lies against the
#: visible part of its horizontally scrollable table, and a point over the table's rows to scroll at; null until the
#: graders' scores (their "AVG" header line) have loaded
GRADER_COLUMNS = """(() => {
  const heads = [...document.querySelectorAll('[role=columnheader]')];
  const group = heads.find(h => h.innerText.trim().startsWith('Assessments'));
  if (!group || !heads.some(h => h.innerText.includes('AVG'))) return null;
  let pane = group.parentElement;
  while (pane && !(pane.scrollWidth > pane.clientWidth + 1
                   && ['auto', 'scroll'].includes(getComputedStyle(pane).overflowX))) pane = pane.parentElement;
  const g = group.getBoundingClientRect();
  if (!pane) return {left: g.left, right: g.right, paneLeft: 0, paneRight: innerWidth, x: 0, y: 0};
  const p = pane.getBoundingClientRect();
  const paneRight = Math.min(p.left + pane.clientWidth, innerWidth);
  return {left: g.left, right: g.right, paneLeft: p.left, paneRight: paneRight,
          x: (p.left + paneRight) / 2, y: Math.min(p.top + p.height / 2, innerHeight - 40)};
})()"""


def shoot_as_user(url: str, out: Path) -> None:
    """One screenshot of a comparison page ``url`` into ``out`` after what a user does once (the module docstring's
    steps 1 and 2: close the Assistant panel with its X, scroll the traces table right to the grader columns).

    Raises:
        devtools.DevToolsError: Chromium failed or the page's grader columns did not load within 90 s.
    """
    from devtools import Browser

    with Browser(CHROMIUM) as browser:
        browser.send("Emulation.setDeviceMetricsOverride", width=1600, height=1000, deviceScaleFactor=1,
                     mobile=False)
        browser.goto(url)
        browser.wait_for(GRADER_COLUMNS, timeout=90)
        time.sleep(2)  # the panel opens a moment after the page
        button = browser.evaluate(ASSISTANT_X)
        if button:
            browser.click(*button)
            browser.wait_for(f"!{ASSISTANT_X}", timeout=20)
            time.sleep(1.5)  # the table takes the freed width
        for _ in range(3):
            cols = browser.wait_for(GRADER_COLUMNS, timeout=20)
            beyond = cols["right"] - cols["paneRight"] + 8
            if beyond <= 0:
                break
            browser.wheel(cols["x"], cols["y"], dx=min(beyond, max(cols["left"] - cols["paneLeft"] - 8, 0)))
            time.sleep(1)
        time.sleep(1.5)
        browser.screenshot(out)
    print(f"{out}  <-  {url}  (Assistant closed, graders scrolled into view)")


def _newest(runs: Sequence[Any], keep: Callable[[dict[str, str]], bool]) -> Any | None:
    """The first run of ``runs`` (newest first) whose tags pass ``keep``."""
    return next((r for r in runs if keep(r.data.tags)), None)


def _is_single(tags: dict[str, str]) -> bool:
    """An evolution run (not a parent, not an A/B run) with holdout evaluation runs."""
    return ("mlflow.parentRunId" not in tags and "holdout.evolved.run_id" in tags
            and tags.get("experiment.kind") != "side-by-side" and tags.get("run.kind") != "ab")


def compare_url(ui: str, holdout_experiment: str, evolved: str, baseline: str) -> str:
    """The evolved evaluation run's Traces tab compared to the baseline run (as
    ``harness.tracking.views.compare_view_path``; this script imports no harness)."""
    return f"{ui}/experiments/{holdout_experiment}/runs/{evolved}/traces?compareToRunUuid={baseline}"


def _artifact(ui: str, exp: str, run: str, path: str) -> str:
    return f"{ui}/experiments/{exp}/runs/{run}/artifacts/{path}"


def skill_pages(client: Any, ui: str, skill: str, *, extra: int | None = None) -> list[tuple[str, str]]:
    """``(file stem, URL)`` of the pages of one skill's experiments, looked up through ``client``.

    For an ``extra`` skill (its index among the extra skills) only its runs table (default and verdict view) and
    newest run page are taken.

    Raises:
        SystemExit: the store has no experiment ``skills/<skill>``.
    """
    main = client.get_experiment_by_name(f"skills/{skill}")
    if main is None:
        sys.exit(f"no experiment skills/{skill} on this server: run harness evolve --skill {skill} first")
    exp = main.experiment_id
    runs = client.search_runs([exp], order_by=["attributes.start_time DESC"], max_results=500)
    changed = _newest(runs, lambda t: _is_single(t) and t.get("verdict") != "unchanged")
    single = changed or _newest(runs, _is_single)
    view = f"{ui}/experiments/{exp}/runs?viewStateShareKey={VIEW_KEY}"
    if extra is not None:
        first = 21 + 3 * extra
        out = [(f"{first:02d}-{skill}-runs-table", f"{ui}/experiments/{exp}/runs"),
               (f"{first + 1:02d}-{skill}-runs-verdict-view", view)]
        if single is not None:
            out.append((f"{first + 2:02d}-{skill}-run-page", f"{ui}/experiments/{exp}/runs/{single.info.run_id}"))
        return out
    out = [("01-runs-table", f"{ui}/experiments/{exp}/runs"), ("01b-runs-verdict-view", view)]
    holdout = client.get_experiment_by_name(f"skills/{skill}/holdout")
    if holdout is not None:
        out.append(("02-evaluation-runs", f"{ui}/experiments/{holdout.experiment_id}/evaluation-runs"))
    if single is not None:
        run, tags = single.info.run_id, single.data.tags
        out += [("03-run-page", f"{ui}/experiments/{exp}/runs/{run}"),
                ("04-artifact-claim", _artifact(ui, exp, run, "claim_report.md")),
                ("05-artifact-diff", _artifact(ui, exp, run, "skill/diff.md")),
                ("05b-artifact-diff-patch", _artifact(ui, exp, run, "skill/diff.patch")),
                ("06-artifact-skill", _artifact(ui, exp, run, "skill/evolved/preview.md")),
                ("06b-artifact-skill-md", _artifact(ui, exp, run, "skill/evolved/SKILL.md")),
                ("07-artifact-per-task", _artifact(ui, exp, run, "holdout/per_task.json")),
                ("08-artifact-stats", _artifact(ui, exp, run, "stats/statistics.json"))]
        if holdout is not None:
            hid = holdout.experiment_id
            evolved, baseline = tags["holdout.evolved.run_id"], tags.get("holdout.baseline.run_id", "")
            compare_to = f"{ui}/experiments/{hid}/evaluation-runs?selectedRunUuid={evolved}&compareToRunUuid={baseline}"
            out += [("09-traces", f"{ui}/experiments/{hid}/traces"),
                    ("09b-traces-view", f"{ui}/experiments/{hid}/traces?traceViewShareKey={VIEW_KEY}"),
                    ("10-compare-to", compare_to), (AS_USER[0], compare_to),
                    ("10b-compare-run-traces", compare_url(ui, hid, evolved, baseline)),
                    ("10c-evolved-eval-run", f"{ui}/experiments/{hid}/runs/{evolved}")]
    parents = [r for r in runs if r.data.tags.get("experiment.kind") == "side-by-side"]
    parent = next((r for r in parents if int(r.data.params.get("seeds", "1") or 1) > 1), None) or (
        parents[0] if parents else None)
    if parent is not None and holdout is not None:
        child = _newest(runs, lambda t: t.get("mlflow.parentRunId") == parent.info.run_id
                        and "holdout.evolved.run_id" in t)
        if child is not None:
            tags = child.data.tags  # a child's baseline is its parent's (harness.tracking.tracker)
            baseline = tags.get("holdout.baseline.run_id") or parent.data.tags.get("holdout.baseline.run_id", "")
            url = compare_url(ui, holdout.experiment_id, tags["holdout.evolved.run_id"], baseline)
            out += [("10f-child-compare", url), (AS_USER[1], url)]
    if parent is not None:
        pid = parent.info.run_id
        out += [("11-parent", f"{ui}/experiments/{exp}/runs/{pid}"),
                ("12-parent-claim", _artifact(ui, exp, pid, "claim_report.md")),
                ("13-parent-heatmap", _artifact(ui, exp, pid, "xgrade/xgrade_heatmap.png"))]
        if int(parent.data.params.get("seeds", "1") or 1) > 1:
            out.append(("14-parent-seeds", _artifact(ui, exp, pid, "claim_report_seeds.md")))
    unchanged = _newest(runs, lambda t: t.get("verdict") == "unchanged")
    if unchanged is not None:
        out.append(("15-unchanged", f"{ui}/experiments/{exp}/runs/{unchanged.info.run_id}"))
    ab_parent = _newest(runs, lambda t: t.get("run.kind") == "ab" and "mlflow.parentRunId" not in t)
    if ab_parent is not None:
        aid = ab_parent.info.run_id
        child = _newest(runs, lambda t: t.get("mlflow.parentRunId") == aid)
        out.append(("16-ab-parent", f"{ui}/experiments/{exp}/runs/{aid}"))
        if child is not None:
            out.append(("17-ab-child", f"{ui}/experiments/{exp}/runs/{child.info.run_id}"))
        out.append(("18-ab-ranking", _artifact(ui, exp, aid, "ab/ranking.json")))
    out += [("19-prompts", f"{ui}/prompts"), ("20-prompt-versions", f"{ui}/prompts/skill-{skill}")]
    return out


def pages(base: str, skill: str, extra_skills: Sequence[str] = ()) -> list[tuple[str, str]]:
    """``(file stem, URL)`` of every page (:func:`skill_pages` of ``skill``, then of each extra skill)."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri=base)
    ui = base.rstrip("/") + "/#"
    out = skill_pages(client, ui, skill)
    for i, extra in enumerate(extra_skills):
        out += skill_pages(client, ui, extra, extra=i)
    return out


def outside_repo(out: Path) -> Path:
    """``out`` resolved; raises ``SystemExit`` when it lies inside this repository (screenshots stay out of it)."""
    resolved = out.resolve()
    if resolved == REPO or REPO in resolved.parents:
        sys.exit(f"--out {out} is inside the repository {REPO}: pass a folder outside it (e.g. /tmp/ui16/shots)")
    return resolved


def main() -> None:
    """Parse the command line and take every page's screenshot (or those ``--only`` names)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--url", default="http://127.0.0.1:5055", help="the mlflow server (UI and REST API)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/ui16/shots"), help="folder outside the repository")
    parser.add_argument("--skill", default="arxiv", help="the skill whose pages are taken")
    parser.add_argument("--extra-skill", action="append", default=[],
                        help="another skill (e.g. tool-choice): its runs table and run page; repeatable")
    parser.add_argument("--only", default="", help="comma list of file stems to take (default: all)")
    parser.add_argument("--remote", action="store_true",
                        help=f"also take 10b and 10f through the private address {REMOTE_HOST} (no Assistant panel)")
    args = parser.parse_args()
    out = outside_repo(args.out)
    out.mkdir(parents=True, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    taken = pages(args.url, args.skill, args.extra_skill)
    for stem, url in taken:
        if not only or stem in only:
            (shoot_as_user if stem in AS_USER else shoot)(url, out / f"{stem}.png")
    if args.remote:
        server = urlsplit(args.url)
        for stem, url in taken:
            if stem in REMOTE:
                remote = url.replace(f"//{server.hostname}", f"//{REMOTE_HOST}", 1)
                shoot(remote, out / f"{REMOTE[stem]}.png", f"MAP {REMOTE_HOST} {server.hostname}")


if __name__ == "__main__":
    main()
