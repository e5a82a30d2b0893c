"""Declarative checks: each type's rules, and grade properties (never raises, in [0, 1], the scale holds)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifiers.base import Grade
from verifiers.taskfile import TaskFileError, build_check, grade_output
from verifiers.taskfile.checks import CHECK_TYPES, values_match
from verifiers.taskfile.extract import Output, normalise

KM = ["km", "kilometres"]


def grade(specs: list[dict[str, Any]], output: object, question: str = "Q?") -> Grade:
    checks = [build_check(spec, f"test, checks[{i}]") for i, spec in enumerate(specs)]
    return grade_output(checks, question, output)


def composite(specs: list[dict[str, Any]], output: object, question: str = "Q?") -> float:
    return grade(specs, output, question).composite


def test_registry_holds_every_documented_type() -> None:
    assert set(CHECK_TYPES) == {"exact", "any_of", "contains", "forbidden", "regex", "number", "choice", "json",
                                "tool_call", "max_chars"}


def test_normalise() -> None:
    assert normalise("  Ｐａｒｉｓ,\tFRANCE!! ") == "paris france"
    assert normalise("web_search()") == "web_search"


# ------------------------------------------------------------------------------------------ text checks

EXACT = [{"type": "exact", "value": "Paris"}]


@pytest.mark.parametrize(("output", "score"), [("Paris", 1.0), (" paris. ", 1.0), ("ＰＡＲＩＳ!", 1.0),
                                                ("The answer is Paris.", 1.0), ("**Answer:** paris", 1.0),
                                                ("Answer: The answer is Paris", 0.5), ("Paris, France", 0.5),
                                                ("", 0.0), ("I don't know.", 0.0), (None, 0.0), ("...", 0.0)])
def test_exact(output: str | None, score: float) -> None:
    assert composite(EXACT, output) == score


def test_exact_feedback_names_expected_and_found() -> None:
    feedback = grade(EXACT, "Lyon").feedback
    assert "'Paris'" in feedback and '"Lyon"' in feedback


def test_any_of_and_whole_words() -> None:
    specs = [{"type": "any_of", "values": ["Saturday", "Sat"]}]
    assert composite(specs, "It was a Saturday.") == 1.0
    assert composite(specs, "sat.") == 1.0
    assert composite(specs, "Saturn") == 0.5  # not a whole-word match
    assert "expected one of 'Saturday', 'Sat'" in grade(specs, "Sunday").feedback


def test_contains_scores_the_share_present() -> None:
    specs = [{"type": "contains", "phrases": ["alpha", "beta gamma"]}]
    assert composite(specs, "Alpha and Beta-Gamma") == 1.0
    g = grade(specs, "only alpha here")
    assert (g.correctness, g.well_formed) == (0.5, 1.0)
    assert "missing 'beta gamma'" in g.feedback
    assert composite(specs, "nothing") == 0.5


def test_forbidden_is_a_penalty_scaled_by_weight() -> None:
    specs = [{"type": "any_of", "values": ["Paris"]}, {"type": "forbidden", "phrases": ["Lyon"]}]
    assert composite(specs, "Paris") == 1.0
    g = grade(specs, "Paris, or maybe Lyon")
    assert g.correctness == 0.0 and g.composite == 0.5
    assert "must not say 'Lyon'" in g.feedback
    half = [specs[0], {"type": "forbidden", "phrases": ["Lyon"], "weight": 0.5}]
    assert grade(half, "Paris, or maybe Lyon").correctness == 0.5


def test_forbidden_alone_needs_answer_like_text() -> None:
    specs = [{"type": "forbidden", "phrases": ["as an AI"]}]
    assert composite(specs, "Here is the plan.") == 1.0
    assert composite(specs, "As an AI, I...") == 0.5
    assert composite(specs, "   ") == 0.0


def test_regex() -> None:
    specs = [{"type": "regex", "pattern": r"\b2024-04-14\b"}]
    assert composite(specs, "2024-04-14") == 1.0
    assert composite(specs, "14 April 2024") == 0.5
    assert composite([{"type": "regex", "pattern": "^yes$", "ignore_case": True}], "YES") == 1.0


# ------------------------------------------------------------------------------------------ number

MILES = [{"type": "number", "value": 8.04672, "abs_tol": 0.005, "unit": KM}]
Q_MILES = "Convert 5 miles to kilometres."


@pytest.mark.parametrize(("output", "score"), [
    ("8.05 km", 1.0), ("8.04672 kilometres", 1.0), ("5 miles is 8.05 km.", 1.0), ("It is 8.05km", 1.0),
    ("8.05 km or maybe 8.1 km", 0.75), ("8.1 or 8.05 km", 0.75), ("8.05 or 8.1 km", 0.75), ("8.05", 0.75),
    ("8.05 km (8046.72 m)", 0.75), ("9 km", 0.5), ("5 miles", 0.5), ("I'm not sure.", 0.0),
    ("", 0.0)])
def test_number_with_unit(output: str, score: float) -> None:
    assert composite(MILES, output, Q_MILES) == score


def test_number_reading() -> None:
    assert composite([{"type": "number", "value": 1234.5}], "1,234.5") == 1.0
    assert composite([{"type": "number", "value": -40, "unit": ["°F"]}], "-40 °F") == 1.0
    assert composite([{"type": "number", "value": 3}], "2024-03-15") == 0.75  # 2024, 3 and 15: hedging
    assert composite([{"type": "number", "value": 1e6, "rel_tol": 0.01}], "1.005e6") == 1.0
    assert composite([{"type": "number", "value": 1e6, "rel_tol": 0.001}], "1.005e6") == 0.5
    assert composite([{"type": "number", "value": 2}], "1e999999 and 2") == 1.0  # overflow skipped, not fatal


def test_number_unit_search_is_linear_on_adversarial_outputs() -> None:
    import time

    specs = [{"type": "number", "value": 1, "unit": "m"}]
    started = time.perf_counter()
    for output in ("1" + ",1" * 5000 + " x", "1" + " or 1" * 5000 + "!", "1" + "-1," * 3000):
        assert 0.0 <= composite(specs, output) <= 1.0
    assert time.perf_counter() - started < 2.0


def test_number_feedback() -> None:
    assert "commit to one" in grade(MILES, "8.05 km or 8.1 km", Q_MILES).feedback
    assert "without the unit 'km'" in grade(MILES, "8.05", Q_MILES).feedback
    assert "expected 8.04672 km, found 9" in grade(MILES, "9 km", Q_MILES).feedback


# ------------------------------------------------------------------------------------------ choice

TOOLS = ["read_file", "web_search", "search", "fetch_url"]
CHOICE = [{"type": "choice", "options": TOOLS, "answer": "read_file"}]


@pytest.mark.parametrize(("output", "score", "label"), [
    ("read_file", 1.0, "read_file"), ("Use `read_file`.", 1.0, "read_file"), ("READ_FILE", 1.0, "read_file"),
    ("read_file, or web_search", 0.75, "(hedged)"), ("web_search", 0.5, "web_search"), ("search", 0.5, "search"),
    ("no idea", 0.0, "(none)"), ("I don't know", 0.0, "(none)")])
def test_choice(output: str, score: float, label: str) -> None:
    assert composite(CHOICE, output) == score
    check = build_check(CHOICE[0], "test")
    assert check.evaluate(Output(output)).label == label


def test_choice_label_inside_a_longer_label_is_not_named() -> None:
    specs = [{"type": "choice", "options": ["web search", "search"], "answer": "web search"}]
    assert composite(specs, "web search") == 1.0
    assert composite(specs, "search") == 0.5


# ------------------------------------------------------------------------------------------ json

PLAN = {"type": "json", "path": "plan", "value": ["web_search", "fetch_url"],
        "schema": {"type": "object", "required": ["plan"],
                   "properties": {"plan": {"type": "array", "items": {"enum": ["web_search", "fetch_url"]}}}}}


@pytest.mark.parametrize(("output", "score"), [
    ('{"plan": ["web_search", "fetch_url"]}', 1.0),
    ('Plan:\n```json\n{"plan": ["web_search", "fetch_url"]}\n```', 1.0),
    ('{"plan": ["Web_Search", "fetch_url"]}', 0.5),  # the path matches (normalised), the schema's enum does not
    ('{"plan": ["web_search", "fetch_url"]} or {"plan": ["fetch_url"]}', 0.75),
    ('{"plan": ["fetch_url", "web_search"]}', 0.5),
    ('{"plan": ["web_search", "fetch_url"], "x": 1}', 1.0),
    ("web_search then fetch_url", 0.0), ("{broken", 0.0)])
def test_json_path_and_schema(output: str, score: float) -> None:
    assert composite([PLAN], output) == score


def test_json_schema_feedback_and_paths() -> None:
    specs = [{"type": "json", "schema": PLAN["schema"]}]
    feedback = grade(specs, '{"plan": ["delete_all"]}').feedback
    assert "schema: at plan/0" in feedback and "delete_all" in feedback
    nested = [{"type": "json", "path": "a.list.1.b", "value": 2}]
    assert composite(nested, '{"a": {"list": [{"b": 1}, {"b": 2.0}]}}') == 1.0
    assert "has no 'a.list.1.b'" in grade(nested, '{"a": {}}').feedback


# ------------------------------------------------------------------------------------------ tool_call

CALL = [{"type": "tool_call", "tool": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}}]


@pytest.mark.parametrize(("output", "correctness", "label"), [
    ('{"tool": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}}', 1.0, "get_weather"),
    ('{"tool": "get_weather", "arguments": {"city": "lisbon", "units": "imperial", "days": 1}}', 1.0, "get_weather"),
    ('{"tool": "get_weather", "arguments": {"city": "Lisbon"}}', 0.85, "get_weather"),
    ('{"tool": "get_weather", "arguments": {}}', 0.7, "get_weather"),
    ('{"name": "get_weather", "arguments": "{\\"city\\": \\"Lisbon\\", \\"units\\": \\"imperial\\"}"}', 1.0,
     "get_weather"),
    ('{"function": {"name": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}}}', 1.0,
     "get_weather"),
    ('{"tool": "web_search", "arguments": {"query": "Lisbon weather"}}', 0.0, "web_search"),
    ('{"tool": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}}\n'
     '{"tool": "web_search", "arguments": {}}', 0.5, "(hedged)"),
    ("get_weather(city='Lisbon')", None, "(none)")])
def test_tool_call(output: str, correctness: float | None, label: str) -> None:
    g = grade(CALL, output)
    if correctness is None:
        assert g.composite == 0.0 and g.well_formed == 0.0
    else:
        assert g.correctness == pytest.approx(correctness) and g.well_formed == 1.0
    assert build_check(CALL[0], "test").evaluate(Output(output)).label == label


def test_tool_call_feedback_names_wrong_arguments() -> None:
    feedback = grade(CALL, '{"tool": "get_weather", "arguments": {"city": "Lisbon", "units": "metric"}}').feedback
    assert 'units expected "imperial", found "metric"' in feedback


def test_values_match() -> None:
    assert values_match("Hello, World", "hello world")
    assert values_match(300, "300") and values_match(1, 1.0)
    assert not values_match(True, 1) and not values_match(None, "") and not values_match([1], [1, 2])
    assert values_match({"a": [1, "X"]}, {"a": [1.0, "x"]}) and not values_match({"a": 1}, {"a": 1, "b": 2})


# ------------------------------------------------------------------------------------------ max_chars


def test_max_chars_sets_conciseness() -> None:
    specs = [{"type": "exact", "value": "yes"}, {"type": "max_chars", "limit": 10}]
    assert grade(specs, "yes").conciseness == 1.0
    long = [{"type": "contains", "phrases": ["yes"]}, {"type": "max_chars", "limit": 10}]
    g = grade(long, "yes " + "x" * 11)  # 15 chars: half-way from the limit to twice it
    assert g.conciseness == 0.5 and "keep it under 10" in g.feedback
    with pytest.raises(TaskFileError, match="takes no weight"):
        build_check({"type": "max_chars", "limit": 10, "weight": 2}, "test")


def test_default_conciseness_follows_the_arxiv_rule() -> None:
    g = grade([{"type": "contains", "phrases": ["yes"]}], "yes " + "x" * 2396)
    assert g.conciseness == pytest.approx(0.5)


def test_a_check_that_raises_counts_as_failed_and_the_grade_does_not_raise() -> None:
    from verifiers.taskfile.checks import Exact

    class Broken(Exact):
        def evaluate(self, out: Output) -> Any:
            raise RuntimeError("bug")

    checks = [Broken("x"), build_check({"type": "contains", "phrases": ["ok"]}, "test")]
    g = grade_output(checks, "Q?", "ok")
    assert g.correctness == 0.5 and "could not be evaluated (RuntimeError)" in g.feedback


def test_weights_average_answer_checks() -> None:
    specs = [{"type": "contains", "phrases": ["a"], "weight": 3}, {"type": "contains", "phrases": ["b"]}]
    assert grade(specs, "a").correctness == 0.75


@pytest.mark.parametrize(("spec", "needle"), [
    ({"type": "exact"}, "'value': missing"), ({"type": "any_of", "values": []}, "at least 1"),
    ({"type": "regex", "pattern": "["}, "does not compile"), ({"type": "number", "value": True}, "expected a number"),
    ({"type": "number", "value": 1, "abs_tol": -1}, "cannot be negative"),
    ({"type": "choice", "options": ["a"], "answer": "a"}, "at least 2"),
    ({"type": "choice", "options": ["A", "a"], "answer": "a"}, "the same after normalisation"),
    ({"type": "json"}, "needs 'path' and 'value', or 'schema'"), ({"type": "json", "path": "a"}, "'value': missing"),
    ({"type": "json", "schema": {"minItems": -1}}, "not a valid JSON Schema"),
    ({"type": "tool_call", "tool": "x", "arguments": []}, "expected an object"),
    ({"type": "tool_call", "tool": "x", "tools": ["y"]}, "not in 'tools'"),
    ({"type": "max_chars", "limit": 0}, "positive integer"), ("exact", "must be an object"),
    ({"kind": "exact"}, "'type': missing")])
def test_check_parameter_errors(spec: object, needle: str) -> None:
    with pytest.raises(TaskFileError) as info:
        build_check(spec, "tasks.jsonl, line 3, checks[0]")
    assert str(info.value).startswith("tasks.jsonl, line 3, checks[0]") and needle in str(info.value)


# ------------------------------------------------------------------------------------------ properties

#: (checks, question, right, hedged, wrong) per check type: the scale's reference answers.
SCALE_CASES: dict[str, tuple[list[dict[str, Any]], str, str, str, str]] = {
    "exact": (EXACT, "Capital of France?", "Paris", "", "Lyon"),
    "any_of": ([{"type": "any_of", "values": ["Saturday"]}], "Weekday?", "Saturday", "", "Sunday"),
    "contains": ([{"type": "contains", "phrases": ["tac"]}], "Reverse cat", "tac", "", "act"),
    "forbidden": ([{"type": "forbidden", "phrases": ["lyon"]}], "Say a city", "Paris", "", "Lyon"),
    "regex": ([{"type": "regex", "pattern": r"\b2024-04-14\b"}], "Date?", "2024-04-14", "", "2024-04-15"),
    "number": (MILES, Q_MILES, "8.05 km", "8.05 km or 8.50 km", "8.5 km"),
    "choice": (CHOICE, "Tool?", "read_file", "read_file or fetch_url", "fetch_url"),
    "json": ([PLAN], "Plan?", '{"plan": ["web_search", "fetch_url"]}',
             '{"plan": ["web_search", "fetch_url"]} {"plan": ["fetch_url"]}', '{"plan": ["fetch_url"]}'),
    "tool_call": (CALL, "Call?", '{"tool": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}}',
                  '{"tool": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}} '
                  '{"tool": "translate", "arguments": {}}', '{"tool": "translate", "arguments": {}}'),
    "max_chars": ([{"type": "contains", "phrases": ["ok"]}, {"type": "max_chars", "limit": 50}], "Say ok", "ok",
                  "", "no"),
}
EVASIONS = ["", " ", "I don't know.", "I'm sorry, I cannot determine that.", "Not sure.", "No idea!",
            "I cannot answer that", "?", "—"]


@pytest.mark.parametrize("name", sorted(SCALE_CASES))
def test_the_scale_per_check_type(name: str) -> None:
    specs, question, right, hedged, wrong = SCALE_CASES[name]
    assert composite(specs, right, question) == 1.0
    assert composite(specs, wrong, question) == 0.5
    if hedged:
        assert composite(specs, hedged, question) == 0.75
    for evasive in EVASIONS:
        assert composite(specs, evasive, question) == 0.0


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                      max_size=3), max_leaves=8)
outputs = st.one_of(st.text(max_size=300), json_values.map(json.dumps),
                    st.builds(lambda a, b: f"{a} ```json\n{b}\n``` {a}", st.text(max_size=40),
                              json_values.map(json.dumps)),
                    st.sampled_from([right for _, _, right, _, _ in SCALE_CASES.values()]).flatmap(
                        lambda right: st.builds(lambda pre, post: pre + right + post, st.text(max_size=30),
                                                st.text(max_size=30))))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(SCALE_CASES)), output=outputs)
def test_grades_never_raise_and_stay_in_range(name: str, output: str) -> None:
    specs, question, *_ = SCALE_CASES[name]
    g = grade(specs, output, question)
    for value in (g.correctness, g.well_formed, g.conciseness, g.composite):
        assert 0.0 <= value <= 1.0
    assert isinstance(g.feedback, str) and g.feedback
    if g.well_formed == 0.0:
        assert g.composite == 0.0


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(SCALE_CASES)), evasion=st.sampled_from(EVASIONS),
       pad=st.text(alphabet=" \t\n.,!?-", max_size=10))
def test_evasive_never_outscores_wrong(name: str, evasion: str, pad: str) -> None:
    specs, question, _, _, wrong = SCALE_CASES[name]
    assert composite(specs, evasion + pad, question) <= composite(specs, wrong, question)


@settings(max_examples=200, deadline=None)
@given(other=st.floats(min_value=-1e6, max_value=1e6, allow_nan=False).filter(lambda x: abs(x - 8.04672) > 0.01),
       joiner=st.sampled_from([" or ", ", maybe ", " / ", "; ", " (or possibly) "]))
def test_hedged_number_never_equals_committed_right(other: float, joiner: str) -> None:
    right = "8.05 km"
    hedged = f"8.05 km{joiner}{other:.3f} km"
    if abs(other - 5) < 1e-9:  # 5 is the question's own number: repeating it is not hedging
        return
    assert composite(MILES, hedged, Q_MILES) < composite(MILES, right, Q_MILES) == 1.0


@settings(max_examples=200, deadline=None)
@given(others=st.lists(st.sampled_from(["web_search", "search", "fetch_url"]), min_size=1, max_size=3, unique=True),
       first=st.booleans())
def test_hedged_choice_never_equals_committed_right(others: list[str], first: bool) -> None:
    names = ["read_file", *others] if first else [*others, "read_file"]
    hedged = " or ".join(names)
    assert composite(CHOICE, hedged) == 0.75 < composite(CHOICE, "read_file")


@settings(max_examples=100, deadline=None)
@given(tool=st.sampled_from(["web_search", "translate", "get_weather"]), args=st.dictionaries(
    st.sampled_from(["city", "units", "q"]), st.text(max_size=6), max_size=3))
def test_hedged_tool_call_never_equals_committed_right(tool: str, args: dict[str, str]) -> None:
    right = '{"tool": "get_weather", "arguments": {"city": "Lisbon", "units": "imperial"}}'
    other = json.dumps({"tool": tool, "arguments": args})
    if json.loads(other) == json.loads(right):
        return
    assert composite(CALL, right + "\n" + other) < composite(CALL, right) == 1.0


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(max_codepoint=127), max_size=60)
       | st.sampled_from(EVASIONS).flatmap(lambda e: st.builds(lambda a: a + e.upper() + a, st.text(max_size=5))))
def test_fast_paths_agree_with_the_stated_rules(text: str) -> None:
    import re
    import unicodedata

    from verifiers.taskfile.extract import EVASION_RE

    slow = " ".join(re.sub(r"[^\w\s]+", " ", unicodedata.normalize("NFKC", text).casefold()).split())
    assert normalise(text) == slow
    stated = re.search(r"[^\W_]", text) is not None and EVASION_RE.search(text) is None
    assert Output(text).answer_like == stated
