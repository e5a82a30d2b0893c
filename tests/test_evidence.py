"""Control, agreement and cost statistics against hand-computed cases; the report builder on synthetic runs."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from harness.analysis.agreement import agreement, agreements, correct_rule, pooled_rows
from harness.analysis.control import compare_to_control
from harness.analysis.cost import NO_IMPROVEMENT, arm_cost_row, cost_summary, usage_since, verified_flips
from harness.analysis.evidence import rests_on_judge, run_evidence, val_scores
from harness.analysis.report import ReportInput, build_report
from harness.analysis.stats import paired_stats, pairs_from_rows


def row(task: str, variant: str, grader: str, correctness: float, composite: float) -> dict[str, object]:
    return {"task_id": task, "kind": "id", "paper_id": "p", "variant": variant, "grader": grader, "output": "o",
            "correctness": correctness, "well_formed": 1.0, "conciseness": 1.0, "composite": composite,
            "feedback": "", "error": ""}


NAN = float("nan")
# verifier correct (>= 1): t1 yes, t2 no, t3 yes, t4 no (hedged 0.5); judge correct (>= 0.5): t1 only
JUDGE_CASE = [
    row("t1", "baseline", "verifier", 1.0, 1.0), row("t1", "baseline", "judge", 0.9, 0.9),
    row("t2", "baseline", "verifier", 0.0, 0.5), row("t2", "baseline", "judge", 0.2, 0.3),
    row("t3", "baseline", "verifier", 1.0, 1.0), row("t3", "baseline", "judge", 0.4, 0.6),
    row("t4", "baseline", "verifier", 0.5, 0.75), row("t4", "baseline", "judge", 0.0, 0.2),
    row("t5", "baseline", "verifier", 1.0, 1.0), row("t5", "baseline", "judge", NAN, NAN),  # the judge left it
]


def test_kappa_confusion_and_correlation_by_hand() -> None:
    a = agreement(JUDGE_CASE, "judge")
    assert a is not None
    assert (a.n_graded, a.n_scored, a.unscored, a.reference_unscored) == (5, 4, 1, 0)
    # reference [T, F, T, F] vs judge [T, F, F, F]: p_o = 3/4, p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2, kappa = 1/2
    assert a.agree == 3 and a.kappa == pytest.approx(0.5)
    assert a.confusion() == [[1, 1], [0, 2]]
    # composites x = [1, .5, 1, .75], y = [.9, .3, .6, .2]: r = .175 / sqrt(.171875 * .3)
    assert a.pearson_r == pytest.approx(0.175 / math.sqrt(0.171875 * 0.3))
    # ranks [3.5, 1, 3.5, 2] and [4, 2, 3, 1]: rho = 3.5 / sqrt(4.5 * 5)
    assert a.spearman_rho == pytest.approx(3.5 / math.sqrt(22.5))
    assert a.sentence().startswith("the judge agreed with the verifier on 3 of 4 scored answers, kappa 0.50")
    assert "left 1 of 5 answers unscored" in a.sentence()
    metrics = a.to_metrics()
    assert metrics["agreement.judge.kappa"] == pytest.approx(0.5) and metrics["agreement.judge.unscored"] == 1.0


def test_kappa_is_undefined_when_every_answer_is_in_one_class() -> None:
    rows = [row(f"t{i}", "baseline", g, 1.0, 1.0) for i in range(3) for g in ("verifier", "judge")]
    a = agreement(rows, "judge")
    assert a is not None and a.agree == 3 and math.isnan(a.kappa)
    assert "kappa undefined" in a.sentence()
    assert math.isnan(a.pearson_r)  # constant composites: no correlation is made up


def test_keyword_rule_is_half_the_rubric_words_and_rules_are_stated() -> None:
    rows = [row("t1", "baseline", "verifier", 1.0, 1.0), row("t1", "baseline", "keyword", 0.5, 0.65),
            row("t2", "baseline", "verifier", 0.0, 0.5), row("t2", "baseline", "keyword", 0.49, 0.64)]
    a = agreements(rows)["keyword"]
    assert a.both_correct == 1 and a.both_wrong == 1 and a.kappa == pytest.approx(1.0)
    assert correct_rule("verifier") == "verifier: correctness >= 1"
    assert correct_rule("judge") == "judge: correctness >= 0.5"
    with pytest.raises(ValueError, match="no correct/incorrect rule"):
        correct_rule("vibes")


def test_no_common_answer_gives_none_and_a_stated_gap() -> None:
    assert agreement([row("t1", "baseline", "verifier", 1.0, 1.0)], "judge") is None
    assert agreements([row("t1", "baseline", "verifier", 1.0, 1.0)]) == {}


def test_pooled_rows_count_the_shared_answers_once() -> None:
    shared = [row("t1", "baseline", "verifier", 1.0, 1.0), row("t1", "baseline", "judge", 1.0, 1.0),
              row("t1", "none", "verifier", 0.0, 0.5), row("t1", "none", "judge", 0.0, 0.5)]
    child_a = shared + [row("t1", "evolved", "verifier", 1.0, 1.0), row("t1", "evolved", "judge", 0.0, 0.5)]
    child_b = shared + [row("t1", "evolved", "verifier", 1.0, 1.0), row("t1", "evolved", "judge", 1.0, 1.0)]
    pooled = pooled_rows([("a", "parent", child_a), ("b", "parent", child_b)])
    a = agreement(pooled, "judge")
    assert a is not None and a.n_graded == 4  # baseline + none once, one evolved answer per child
    assert a.agree == 3 and a.grader_only == 0 and a.reference_only == 1


def flips_rows() -> list[dict[str, object]]:
    """Verifier: t1..t3 wrong -> right, t4 right -> wrong, t5 right both."""
    out = []
    for task, before, after in [("t1", 0, 1), ("t2", 0, 1), ("t3", 0.5, 1), ("t4", 1, 0), ("t5", 1, 1)]:
        out.append(row(task, "baseline", "verifier", before, 0.5 + 0.5 * before))
        out.append(row(task, "evolved", "verifier", after, 0.5 + 0.5 * after))
    return out


USAGE = {"lm_calls.task": 40.0, "lm_calls.task.uncached": 30.0, "tokens.task.prompt": 900.0,
         "tokens.task.completion": 100.0, "lm_errors.task": 0.0, "lm_calls.judge": 10.0,
         "lm_calls.judge.uncached": 10.0, "tokens.judge.prompt": 500.0, "tokens.judge.completion": 50.0,
         "cost.judge": 0.03, "lm_calls.total": 50.0, "lm_calls.uncached": 40.0, "lm_errors.total": 0.0}


def test_cost_per_verified_flip_by_hand() -> None:
    flips = verified_flips(flips_rows())
    assert flips is not None
    assert flips.wrong_to_right == ("t1", "t2", "t3") and flips.right_to_wrong == ("t4",) and flips.net == 2
    summary = cost_summary(USAGE, flips_rows())
    assert (summary.lm_calls, summary.tokens, summary.cost_usd) == (50.0, 1550.0, 0.03)
    m = summary.metrics()
    assert m["per_flip.tokens"] == pytest.approx(1550 / 3) and m["per_net_flip.tokens"] == pytest.approx(775)
    assert m["per_flip.lm_calls"] == pytest.approx(50 / 3) and m["per_flip.cost_usd"] == pytest.approx(0.01)
    assert m["flips.verifier.net"] == 2.0
    assert "3 verified improvement(s) (net +2)" in summary.sentence()
    assert "10 answered from the DSPy cache" in summary.sentence()


def test_no_verified_improvement_makes_no_ratio() -> None:
    rows = [row("t1", "baseline", "verifier", 1, 1.0), row("t1", "evolved", "verifier", 0, 0.5)]
    summary = cost_summary(USAGE, rows)
    assert summary.per_flip(summary.tokens) is None
    assert not any(k.startswith("per_flip") for k in summary.metrics())
    assert NO_IMPROVEMENT in summary.sentence()
    assert arm_cost_row(summary.metrics())["verified"] == NO_IMPROVEMENT
    assert arm_cost_row({})["verified"] == "no verifier"
    assert cost_summary(USAGE, [row("t1", "baseline", "keyword", 1, 1)]).flips is None


def test_usage_since_is_the_arms_own_spend() -> None:
    before = {"lm_calls.task": 10.0, "tokens.task.prompt": 100.0, "wall_time_s": 3.0}
    after = {"lm_calls.task": 25.0, "tokens.task.prompt": 160.0, "lm_calls.judge": 4.0, "wall_time_s": 9.0}
    assert usage_since(after, before) == {"lm_calls.task": 15.0, "tokens.task.prompt": 60.0, "lm_calls.judge": 4.0}


def control_rows(n: int = 6) -> list[dict[str, object]]:
    """No skill wrong everywhere; baseline right on every task; evolved equal to no skill."""
    out = []
    for i in range(n):
        out += [row(f"t{i}", "none", "verifier", 0.0, 0.5), row(f"t{i}", "baseline", "verifier", 1.0, 1.0),
                row(f"t{i}", "evolved", "verifier", 0.0, 0.5)]
    return out


def test_control_is_tested_paired_with_the_same_statistics() -> None:
    comparisons = {c.variant: c for c in compare_to_control(control_rows(), alpha=0.05)}
    base, evo = comparisons["baseline"], comparisons["evolved"]
    s = base.stats["verifier"]
    # six tasks all right with the skill, all wrong without: exact McNemar p = 2 * 0.5**6
    assert s.discordant_improved == 6 and s.mcnemar_p == pytest.approx(2 * 0.5 ** 6)
    assert (s.baseline_mean, s.evolved_mean) == (0.5, 1.0)  # control side, skill side
    assert base.verdict == "improved" and base.sentence().startswith("the baseline skill beats no skill")
    assert evo.verdict == "inconclusive" and evo.sentence().startswith("no evidence that the evolved skill")
    same = paired_stats(pairs_from_rows(control_rows(), "verifier", before="none", after="baseline"), alpha=0.05)
    assert same == s
    assert compare_to_control(flips_rows(), alpha=0.05) == []  # no control rows: nothing to compare


def test_run_evidence_and_the_judge_resting_verdict() -> None:
    rows = [r for r in JUDGE_CASE] + [{**r, "variant": "evolved"} for r in JUDGE_CASE]
    verifier_less = [r for r in rows if r["grader"] == "judge"]
    stats = {"judge": paired_stats(pairs_from_rows(verifier_less, "judge"), alpha=0.05)}
    assert rests_on_judge(stats)
    evidence = run_evidence(verifier_less, USAGE, stats, alpha=0.05)
    assert "could not be measured" in evidence.judge_verdict_note
    full = {g: paired_stats(pairs_from_rows(rows, g), alpha=0.05) for g in ("judge", "verifier")}
    assert not rests_on_judge(full)
    evidence = run_evidence(rows, USAGE, full, alpha=0.05)
    assert evidence.agreement["judge"].n_graded == 10
    assert "agreement.judge.kappa" in evidence.metrics()
    assert "## Can the judge be trusted here?" in evidence.markdown()


def test_val_scores_read_the_optimizers_candidates() -> None:
    candidates = [{"index": 0, "val_score": 0.4, "instructions": "body\n"},
                  {"index": 1, "val_score": 0.9, "instructions": "better"}]
    assert val_scores(candidates, "body", "better", "verifier") == {"val.verifier.baseline": 0.4,
                                                                     "val.verifier.evolved": 0.9}
    assert val_scores(candidates, "body", "body", "keyword") == {"val.keyword.baseline": 0.4,
                                                                  "val.keyword.evolved": 0.4}
    assert val_scores([], "body", "x", "keyword") == {}


def test_gates_report_not_run_for_a_disabled_gate(tmp_path: Path) -> None:
    from harness.skills.files import parse_skill
    from harness.skills.gates import check_evolved

    skill = parse_skill("---\nname: n\ndescription: d\n---\n# N\n\nDo it.\n", tmp_path / "SKILL.md")
    statuses = {g: s for g, s, _ in check_evolved(skill, skill.text).checks}
    assert statuses["not the stock instructions"] == "not run" and statuses["size"] == "passed"
    failed = {g: s for g, s, _ in check_evolved(skill, skill.with_body("")).checks}
    assert failed["non-empty body"] == "failed" and failed["not the stock instructions"] == "not run"


def report_input(**kw: object) -> ReportInput:
    rows = pd.DataFrame(control_rows() + [{**r, "grader": "keyword"} for r in control_rows()])
    base = dict(run_id="r1", experiment="skills/arxiv",
                params={"skill_name": "arxiv", "optimizer": "gepa", "fitness_resolved": "verifier",
                        "task_model": "test/lessons", "judge_model": "test/judge", "budget": "30", "seed": "0",
                        "alpha": "0.05", "dataset_digest": "abc", "split.trainset": "20", "split.valset": "10",
                        "split.holdout": "6", "control": "True"},
                metrics={**USAGE, "val.verifier.baseline": 0.5, "val.verifier.evolved": 0.75},
                tags={"verdict": "regressed", "verdict.reason": "the stated reason", "gates": "passed"},
                rows=rows, diff="--- a/SKILL.md\n+++ b/SKILL.md\n@@ -1 +1 @@\n-a\n+b\n",
                gates=[{"gate": "size", "status": "passed", "reason": ""},
                       {"gate": "not the stock instructions", "status": "not run", "reason": ""}],
                links={"run": "runs:/r1"})
    base.update(kw)
    return ReportInput(**base)  # type: ignore[arg-type]


def test_report_markdown_has_every_section() -> None:
    text = build_report(report_input())
    for needle in ("# Evolved skill `arxiv`: regressed", "Figures from offline test LMs", "## What was evolved and how",
                   "digest `abc`; train 20, val 10, holdout 6", "### train", "not graded by the run",
                   "| verifier (the fitness) | 0.500 | 0.750 | not graded |",
                   "| verifier | 1.000 (100%) | 0.500 (0%) | 0.500 (0%) | 0 |", "**Verdict: regressed**",
                   "exact McNemar", "- power:", "the baseline skill beats no skill", "| t0 | id | right | wrong |",
                   "keyword heuristic agreed with the verifier", "## Cost", "| not the stock instructions | not run |",
                   "```diff", "- run: `runs:/r1`"):
        assert needle in text, needle


def test_report_never_says_passed_for_gates_that_did_not_run() -> None:
    text = build_report(report_input(gates=None, tags={}))
    assert "- gates: not run." in text
    assert "passed" not in text.split("## Gates", 1)[1].split("##", 1)[0]


def test_report_html_is_one_file_with_inline_figures() -> None:
    page = build_report(report_input(), "html")
    assert page.startswith("<!doctype html>") and page.count("data:image/png;base64,") == 2
    assert "<table>" in page and "<script" not in page
    with pytest.raises(ValueError, match="unknown report format"):
        build_report(report_input(), "pdf")


def test_report_escapes_model_text_in_html() -> None:
    page = build_report(report_input(diff="+<script>alert(1)</script>\n"), "html")
    assert "<script>alert" not in page and "&lt;script&gt;" in page


def test_agreement_plot_is_written(tmp_path: Path) -> None:
    from harness.analysis.plots import agreement_png

    out = agreement_png({"judge": [[1, 1], [0, 2]], "keyword": [[0, 2], [0, 2]]}, tmp_path / "a.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="2x2"):
        agreement_png({"judge": [[1, 2, 3]]}, tmp_path / "b.png")


def test_report_of_a_judge_resting_verdict_names_the_experiments_agreement() -> None:
    judge_only = pd.DataFrame([{**r, "grader": "judge"} for r in control_rows()])
    alone = build_report(report_input(rows=judge_only))
    assert "rests on the judge, and the judge's agreement with a verifier could not be measured in this run" in alone
    measured = agreements(JUDGE_CASE)
    text = build_report(report_input(rows=judge_only, experiment_agreement=measured,
                                     agreement_scope="every run of experiment skills/arxiv"))
    assert ("This verdict rests on the judge; as a check on it, the judge agreed with the verifier on 3 of 4 scored "
            "answers, kappa 0.50") in text
    assert "(every run of experiment skills/arxiv)" in text
