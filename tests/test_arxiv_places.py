"""Tests of the arXiv grader's rules closed in stop 11 (issue 17): a sentence about where the work was done offers
no title, an affiliation ("Org, City") names no one, "X or He" offers He as an alternative for every surname, a JSON
record's short surname is its value, and "Option B. Hinton" is a label then the name."""

from __future__ import annotations

import pytest
from helpers import grade_arxiv as grade
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import PAPERS, Paper

#: Organisations and places of research (none of them a title or a person).
ORGS = ("Google Brain", "Microsoft Research Asia", "the University of Toronto", "the Vector Institute", "DeepMind",
        "OpenAI", "Meta AI", "Stanford University", "Tsinghua University")
CITIES = ("Mountain View", "Beijing", "Toronto", "London", "San Francisco", "New York", "Montreal")

# ------------------------------------------------------------------- a place or an institution offers no title

PLACE_SENTENCES = ("I think the work was done at {O} in {C}, but I'm not sure.",
                   "The research was carried out at {O} in {C}.", "I believe it came out of a lab at {O}.",
                   "It was written at {O} in {C}, I think.", "The authors worked at {O} in {C} at the time.")


@given(paper=st.sampled_from(PAPERS), org=st.sampled_from(ORGS), city=st.sampled_from(CITIES),
       form=st.sampled_from(PLACE_SENTENCES))
@settings(max_examples=150, deadline=None)
def test_a_sentence_about_a_place_offers_no_title(paper: Paper, org: str, city: str, form: str) -> None:
    """Where the work was done is no title: the sentence is evasive on a title task (0.00), not a wrong title."""
    output = form.format(O=org, C=city)
    assert grade(f"{paper.arxiv_id}/title", output).composite == 0.0, output


@pytest.mark.parametrize(("output", "composite"), [
    # a title in the sentence still offers it, also beside a place
    ("It's Going Deeper with Convolutions.", 0.5),
    ("Going Deeper with Convolutions, written at Google in Mountain View.", 0.5),
    ("I think it is Going Deeper with Convolutions, from Google.", 0.5),
    ("Attention Is All You Need, written at Google Brain in Mountain View.", 1.0),
    ("I think the work was done at Google Brain in Mountain View, but I'm not sure.", 0.0),
])
def test_place_sentence_examples(output: str, composite: float) -> None:
    assert grade("1706.03762/title", output).composite == composite, output


# --------------------------------------------------------------------------- an affiliation names no one

@given(paper=st.sampled_from(PAPERS), org=st.sampled_from(ORGS), city=st.sampled_from(CITIES))
@settings(max_examples=120, deadline=None)
def test_an_affiliation_names_no_one(paper: Paper, org: str, city: str) -> None:
    """"Google Brain, Mountain View" is an affiliation (an organisation, a comma, its place): no name, 0.00 on an
    author task; with the author's name before it, the name counts."""
    affiliation = f"{org.removeprefix('the ')}, {city}"
    task_id = f"{paper.arxiv_id}/author"
    assert grade(task_id, affiliation).composite == 0.0, affiliation
    assert grade(task_id, f"{paper.first_author}, {affiliation}").correctness == 1.0, affiliation


@pytest.mark.parametrize(("output", "correctness", "well_formed"), [
    ("Vaswani, Ashish", 1.0, 1.0), ("Shazeer, Vaswani", 0.0, 1.0), ("Noam Shazeer, Google Brain", 0.0, 1.0),
    ("University of Toronto, Toronto", 0.0, 0.0), ("Hinton, Geoffrey (Google Brain, Toronto)", 0.0, 1.0),
])
def test_affiliation_examples(output: str, correctness: float, well_formed: float) -> None:
    verdict = grade("1706.03762/author", output)
    assert (verdict.correctness, verdict.well_formed) == (correctness, well_formed), output


# ------------------------------------------------------------- "X or He": an alternative, for every surname

@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(["Zhang", "Ren", "Sun", "Dean", "Xiangyu Zhang"]),
       form=st.sampled_from(["{A} or {B}", "{A} or {B}?", "Either {A} et al. or {B} et al.", "{A}, or {B}",
                             "I think it is {A} or {B}.", "{A} or {B} - I can't verify which."]),
       right_first=st.booleans())
@settings(max_examples=200, deadline=None)
def test_a_surname_offered_after_or_hedges_for_every_surname(paper: Paper, other: str, form: str,
                                                             right_first: bool) -> None:
    """A surname after the "or" of an alternative is offered as a name, also one that is an English word ("Zhang
    or He"): the README's hedging rule gives 0.75, whichever of the two names comes first."""
    a, b = (paper.last_name, other) if right_first else (other, paper.last_name)
    output = form.format(A=a, B=b)
    assert grade(f"{paper.arxiv_id}/author", output).composite == 0.75, output


def test_neither_nor_still_negates_both() -> None:
    assert grade("1512.03385/author", "Neither Zhang nor He.").composite == 0.0


# ---------------------------------------------------------------- a JSON record's value is an answer

@given(paper=st.sampled_from(PAPERS), key=st.sampled_from(["first_author", "author", "first author", "answer"]),
       extra=st.sampled_from(["", ', "year": 2016', ', "confidence": "high"']))
@settings(max_examples=150, deadline=None)
def test_a_json_value_is_the_answer_for_every_surname(paper: Paper, key: str, extra: str) -> None:
    """{"first_author": "He"} answers He (a record's value is no placeholder word, for "He" as for "Vaswani"), and
    {"first_author": "Zhang"} is a wrong answer (0.50), not evasive."""
    task_id = f"{paper.arxiv_id}/author"
    right = f'{{"{key}": "{paper.last_name}"{extra}}}'
    wrong = f'{{"{key}": "Zhang"{extra}}}'
    assert grade(task_id, right).composite == 1.0, right
    assert grade(task_id, wrong).composite == 0.5, wrong


@pytest.mark.parametrize("output", ['{"first_author": "[AUTHOR]"}', '{"first_author": "<author>"}', "{first_author}",
                                    '{"first_author": "Unknown"}', '{"first_author": "N/A"}'])
def test_a_json_placeholder_is_still_evasive(output: str) -> None:
    assert grade("1512.03385/author", output).composite == 0.0, output


# ------------------------------------------------------------------- "Option B. Hinton": a label, then the name

@given(paper=st.sampled_from(PAPERS), letter=st.sampled_from("ABCDEFGH"),
       label=st.sampled_from(["Option {L}. ", "Candidate {L}. ", "**Option {L}.** ", "Choice {L}. "]))
@settings(max_examples=150, deadline=None)
def test_an_option_letter_is_no_initial(paper: Paper, letter: str, label: str) -> None:
    """The letter after "Option" is the option's index, not an initial of the name after it (which would make
    "B. Hinton" another person): the name is the answer."""
    output = label.format(L=letter) + paper.last_name
    assert grade(f"{paper.arxiv_id}/author", output).composite == 1.0, output


def test_an_initial_after_an_option_label_is_still_an_initial() -> None:
    assert grade("1706.03762/author", "Option B: N. Vaswani").correctness == 0.0
    assert grade("1706.03762/author", "X. Vaswani").correctness == 0.0
