"""Tests of the arXiv grader's candidate-listing rules closed in stop 11 (issue 17): names or titles offered as
candidates hedge however the answer lists them: a key or a cue naming candidates ({"first_author": A,
"alternative": B}, "Names that come to mind: A and B", a numbered list under "options:", "B seems possible too,
but my pick is A"), a list joined by "or" ("B, A, or C"), titles set against each other ("A vs. B", "between A
and B"), and a surname that is also an English word in an alternative ("He and/or B", "He — or perhaps B")."""

from __future__ import annotations

import pytest
from helpers import grade_arxiv as grade
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import PAPERS, Paper

#: Ways to offer two names ({A}, {B}) or three ({C} too) as candidates for the first author.
NAME_CANDIDATES = ('{{"first_author": "{A}", "alternative": "{B}"}}', '{{"author": "{B}", "alternatives": ["{A}"]}}',
                   "Names that come to mind: {B} and {A}.", "Candidates that spring to mind: {A} and {B}.",
                   "The plausible options are:\n\n1. **{A}** (cited often)\n2. **{B}** (also cited)",
                   "Likely options:\n- {B}: I recall the talk\n- {A}: I recall the abstract",
                   "{B} seems possible too, but my pick is {A}.", "{B} looks plausible as well; I'd go with {A}.",
                   "{B}, {A}, or {C}", "{A}, {B} or {C}", "{B}, {C}, or {A}.")
#: Names that are no first author of a known paper.
OTHERS = ("Greg Corrado", "Noam Shazeer", "Xiangyu Zhang", "Corrado, G.", "Ilya Sutskever")
#: Two titles set against each other: candidates.
TITLE_CANDIDATES = ("{A} vs. {B}", "{B} vs {A}", "{A} versus {B}", "Torn between {A} and {B}.",
                    "Undecided between {B} and {A}")
#: Titles of no known paper (and of other papers), set against the right one.
#: (none with "and" of its own: "between B and A" then reads two ways).
OTHER_TITLES = ("Going Deeper with Convolutions", "Playing Atari with Deep Reinforcement Learning",
                "Deep Residual Learning for Image Recognition", "LoRA: Low-Rank Adaptation of Large Language Models")


def cite(paper: Paper, form: str) -> str:
    return form.format(G=paper.given_name, I=paper.given_name[0], S=paper.last_name)


@given(paper=st.sampled_from([p for p in PAPERS if p.last_name != "He"]), template=st.sampled_from(NAME_CANDIDATES),
       form=st.sampled_from(("{G} {S}", "{S}, {I}.", "{S} et al.", "{I}. {S}")), other=st.sampled_from(OTHERS))
@settings(max_examples=200, deadline=None)
def test_names_offered_as_candidates_hedge(paper: Paper, template: str, form: str, other: str) -> None:
    """The first author offered with other names as candidates, in any of these listings: hedged (0.75); the
    same listing of other names only: wrong (0.50); the name alone scores no less (appending a candidate never
    raises the grade)."""
    task_id, right = f"{paper.arxiv_id}/author", cite(paper, form)
    output = template.format(A=right, B=other, C="Oriol Vinyals")
    assert grade(task_id, output).composite == 0.75, output
    wrong = template.format(A="Jeffrey Dean", B=other, C="Oriol Vinyals")
    assert grade(task_id, wrong).composite == 0.5, wrong
    assert grade(task_id, right).composite >= 0.75


@given(paper=st.sampled_from(PAPERS), template=st.sampled_from(TITLE_CANDIDATES),
       case=st.sampled_from((str, str.lower, str.upper)), other=st.sampled_from(OTHER_TITLES))
@settings(max_examples=150, deadline=None)
def test_titles_set_against_each_other_hedge(paper: Paper, template: str, case, other: str) -> None:
    """The title set against another ("A vs. B", "torn between A and B"), in any case: hedged (0.75), never
    more than the title alone; two other titles: wrong (0.50)."""
    task_id = f"{paper.arxiv_id}/title"
    if other == paper.title:
        other = OTHER_TITLES[0]
    output = template.format(A=case(paper.title), B=other)
    assert grade(task_id, output).composite == 0.75, output
    assert grade(task_id, output).composite <= grade(task_id, paper.title).composite
    wrong = template.format(A="Sequence to Sequence Learning with Neural Networks", B=other)
    assert grade(task_id, wrong).composite == 0.5, wrong


@pytest.mark.parametrize("output", ["He and/or Xiangyu Zhang", "He — or perhaps Ren.", "He -- or maybe Sun",
                                    "Names that come to mind: Xiangyu Zhang and He.", "Zhang, He, or Ren",
                                    "He, Zhang or Ren", "Zhang is also plausible, but I'd say He.",
                                    "Possible options:\n\n1. **He** — the ResNet talk\n2. **Sun** — the paper"])
def test_an_english_word_surname_among_candidates_hedges(output: str) -> None:
    """"He" (Kaiming He, a surname that is also an English word) as one of several candidates is read as the
    name, so the answer hedges (0.75), as "Kaiming He" in its place does."""
    assert grade("1512.03385/author", output).composite == 0.75
    assert grade("1512.03385/author", output.replace("He", "Kaiming He", 1)).composite == 0.75


@pytest.mark.parametrize(("task_id", "output", "composite"), [
    # an ordering without a cue names its first author first: no candidates
    ("1706.03762/author", "Here are the authors:\n\n1. Ashish Vaswani\n2. Noam Shazeer", 1.0),
    ("1301.3781/author", '{"first_author": "Tomas Mikolov", "second_author": "Kai Chen"}', 1.0),
    # a list joined by "and" is a list of authors; an "or" in a later sentence offers no rival to the list
    ("1706.03762/author", "Ashish Vaswani, Noam Shazeer, Niki Parmar, and others", 1.0),
    ("1706.03762/author", "Noam Shazeer, Ashish Vaswani, and Niki Parmar", 0.5),
    # "comes to mind" without a colon introduces no candidates
    ("1706.03762/author", "Vaswani et al. come to mind; Shazeer was the second author.", 1.0),
    # a pronoun "He" stays a pronoun
    ("1512.03385/author", "He, however, was at Microsoft.", 0.0),
    # "between" without two titles: the title is offered alone
    ("1706.03762/title", "The difference between Attention Is All You Need and earlier work is large.", 1.0),
])
def test_listings_that_offer_no_candidates(task_id: str, output: str, composite: float) -> None:
    """Listings without a candidate cue or an "or" keep their reading: an ordering, a list of authors, prose."""
    assert grade(task_id, output).composite == composite


def test_an_initial_i_after_a_cue_is_no_pronoun() -> None:
    """"I." right after a cue is the first author's initial, not the pronoun the cue's link words skip ("I'd
    say"): the names after it are still candidates."""
    assert grade("1406.2661/author", "Candidates: I. Goodfellow and Greg Corrado.").composite == 0.75
    assert grade("1406.2661/author", "Candidates: I think Ian Goodfellow or Greg Corrado.").composite == 0.75
