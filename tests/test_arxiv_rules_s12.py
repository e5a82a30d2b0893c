"""Tests of the arXiv grader's rules closed in stop 12 (issue 17, the misgrades still known after blind passes 9
and 10): a record grades alike however its strings are quoted; a field's value offering two names hedges; a known
surname that is also an English word ("He") is a name where a candidate stands; a middle initial without its
full stop is part of the name; "(with X and others)" names co-authors; a quoted title inside a line of title-case
words is a longer title; a known author's surname after an organisation's comma is a name; a hedge word opening
a sentence starts no organisation's name."""

from __future__ import annotations

import pytest
from helpers import grade_arxiv as grade
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import PAPERS

# ----------------------------------------------------------- a. a record grades alike however its strings are quoted

#: Records of one answer, ``{v}`` the value (a surname, a title or a year), with double quotes.
RECORDS = ['{{"first_author": "{v}"}}', '{{"answer": "{v}", "confidence": "low"}}', 'first_author: "{v}"',
           '[{{"name": "{v}"}}]']


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), form=st.sampled_from(RECORDS))
@settings(max_examples=120, deadline=None)
def test_a_record_grades_alike_in_single_quotes(paper: object, other: object, form: str) -> None:
    """A Python dict literal or a YAML line quotes its strings with "'": the grade is the double-quoted form's."""
    task_id = f"{paper.arxiv_id}/author"
    double = form.format(v=other.last_name)
    single = double.replace('"', "'")
    a, b = grade(task_id, single), grade(task_id, double)
    assert (a.correctness, a.well_formed, a.composite) == (b.correctness, b.well_formed, b.composite), single


@pytest.mark.parametrize(("task_id", "output", "correctness", "composite"), [
    ("1512.03385/author", "{'first_author': 'Zhang'}", 0.0, 0.5),  # a wrong name, not evasive
    ("1512.03385/author", "{'first_author': 'He'}", 1.0, 1.0),
    ("1301.3781/author", "first_author: 'Dean'", 0.0, 0.5),
    ("1706.03762/title", "{'title': 'Attention Is All You Need', 'year': 2017}", 1.0, 1.0),
    ("1301.3781/author", "{'candidates': ['Mikolov', 'Dean']}", 0.5, 0.75),
    ("1301.3781/author", "I think it's Mikolov's paper.", 1.0, 1.0),  # an apostrophe inside words opens no string
])
def test_single_quoted_record_examples(task_id: str, output: str, correctness: float, composite: float) -> None:
    g = grade(task_id, output)
    assert (g.correctness, g.composite) == (correctness, composite), g.feedback


# ----------------------------------------------------------------- b. a field's value offering two names hedges

#: A field holding ``{a}`` and ``{b}`` joined by an alternation.
FIELD_ALTERNATIVES = ['{{"first_author": "{a} or {b}"}}', "First author: {a} or {b}",
                      "{{'first_author': '{a} or {b}'}}", "| First author | {a} or {b} |"]


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), form=st.sampled_from(FIELD_ALTERNATIVES),
       first=st.booleans())
@settings(max_examples=150, deadline=None)
def test_a_field_offering_two_names_hedges(paper: object, other: object, form: str, first: bool) -> None:
    """One field holds one answer: two names in it, joined as alternatives, hedge whichever comes first, as in
    prose ("He or Zhang"), and never score more than the right name alone."""
    if other.last_name == paper.last_name:
        return
    right, wrong = paper.last_name, other.last_name
    a, b = (right, wrong) if first else (wrong, right)
    task_id = f"{paper.arxiv_id}/author"
    g = grade(task_id, form.format(a=a, b=b))
    assert g.correctness == 0.5, (form, g.feedback)
    assert g.composite <= grade(task_id, right).composite


# ------------------------------------------------- c. a known surname that is also an English word is a name

#: Where a candidate stands: ``{a}`` the right name, ``He`` the rival.
HE_RIVAL = ["{a} or He", "He or {a}", "Maybe {a}, maybe He.", "{a} or maybe He", "{a} et al. or He et al.",
            "Either {a} et al. or He et al.", "{a}, He, or Dean", "{a} — or perhaps He"]


@given(paper=st.sampled_from([p for p in PAPERS if p.last_name != "He"]), form=st.sampled_from(HE_RIVAL))
@settings(max_examples=80, deadline=None)
def test_he_offered_as_a_rival_hedges(paper: object, form: str) -> None:
    """"He" (Kaiming He's surname) where a candidate stands is a name, not the pronoun: the right name offered
    with it hedges, whatever the order."""
    g = grade(f"{paper.arxiv_id}/author", form.format(a=paper.last_name))
    assert g.correctness == 0.5, (form, g.feedback)


@pytest.mark.parametrize(("task_id", "output", "correctness", "composite"), [
    ("1301.3781/author", "The first author is He.", 0.0, 0.5),  # a wrong name, not evasive
    ("1301.3781/author", "Answer: He", 0.0, 0.5),
    ("1512.03385/author", "He (first author)", 1.0, 1.0),
    ("1301.3781/author", "Mikolov. He proposed word2vec.", 1.0, 1.0),  # the pronoun opening a clause
    ("1301.3781/author", "Mikolov or he", 1.0, 1.0),  # lower case: the pronoun
    ("1301.3781/author", "He proposed it.", 0.0, 0.0),
])
def test_he_examples(task_id: str, output: str, correctness: float, composite: float) -> None:
    g = grade(task_id, output)
    assert (g.correctness, g.composite) == (correctness, composite), g.feedback


# ---------------------------------------------------------------------- d. names: initials, co-authors, places

@pytest.mark.parametrize(("task_id", "output", "correctness", "composite"), [
    ("2201.11903/author", "Lakshya A Agrawal was my first guess. It's Wei et al.", 1.0, 1.0),
    ("2010.11929/author", "One candidate is Noam M Shazeer, but that is a different paper. It is Alexey Dosovitskiy.",
     1.0, 1.0),
    ("2201.11903/author", "Not Lakshya A Agrawal. It's Jason Wei.", 1.0, 1.0),
    ("2201.11903/author", "Jason W Wei", 1.0, 1.0),
    ("1301.3781/author", "Tomas Mikolov\n\n(with Kai Chen and others)", 1.0, 1.0),
    ("1301.3781/author", "Mikolov\ntogether with Kai Chen and Greg Corrado", 1.0, 1.0),
    ("1301.3781/author", "Kai Chen\n(with Tomas Mikolov and others)", 0.0, 0.5),  # Mikolov named a co-author
    ("1301.3781/author", "With Mikolov as first author, the paper came out in 2013.", 1.0, 1.0),
    ("1301.3781/author", "Mikolov\nDean", 0.5, 0.75),  # two names on lines of their own still hedge
    ("1301.3781/author", "Google Brain, Vaswani", 0.0, 0.5),  # a known author after an affiliation: a wrong name
    ("1706.03762/author", "Google Brain, Vaswani", 1.0, 1.0),
    ("1706.03762/author", "Google Brain, Mountain View", 0.0, 0.0),  # the affiliation's place
    ("1412.6980/author", "Maybe Mikolov.", 0.0, 0.5),  # "Maybe" starts no organisation's name
    ("1412.6980/author", "Maybe Kingma.", 1.0, 1.0),
    ("1412.6980/author", "Probably Mikolov or Kingma.", 0.5, 0.75),
    ("1412.6980/author", "Microsoft Research Asia", 0.0, 0.0),
])
def test_name_examples(task_id: str, output: str, correctness: float, composite: float) -> None:
    g = grade(task_id, output)
    assert (g.correctness, g.composite) == (correctness, composite), g.feedback


# ------------------------------------------------------- e. a quoted title inside a line of title-case words

#: A line of title-case words around the title in quotes: a longer title that cites it.
QUOTED_LONGER = ['"{t}" for Everyone', "“{t}” for All", 'Towards "{t}"', '"{t}" Revisited', 'Improved "{t}"',
                 '"{t}": Theory and Practice', "'{t}' - Theory, Practice and Applications"]
#: The title in quotes with what leaves it the title itself: prose, an attribution, a bracket, a label.
QUOTED_ITSELF = ['"{t}" by Vaswani et al.', '"{t}" (NeurIPS 2017)', 'Title: "{t}"', 'Maybe "{t}"',
                 'The paper is "{t}" in the proceedings.', '"{t}" for sure', '- "{t}"', '"{t}" - Ashish Vaswani']


@given(paper=st.sampled_from(PAPERS), form=st.sampled_from(QUOTED_LONGER))
@settings(max_examples=80, deadline=None)
def test_a_quoted_title_in_a_longer_title_is_wrong(paper: object, form: str) -> None:
    """Quotes around the title do not make the title-case words beside it a remark: the line is one longer
    title, another paper's, as the unquoted "X for Everyone" is."""
    g = grade(f"{paper.arxiv_id}/title", form.format(t=paper.title))
    assert (g.correctness, g.composite) == (0.0, 0.5), (form, g.feedback)


@given(paper=st.sampled_from(PAPERS), form=st.sampled_from(QUOTED_ITSELF))
@settings(max_examples=80, deadline=None)
def test_a_quoted_title_with_prose_or_attribution_is_the_title(paper: object, form: str) -> None:
    g = grade(f"{paper.arxiv_id}/title", form.format(t=paper.title))
    assert g.correctness == 1.0, (form, g.feedback)


# ------------------------------------------------------------- f. labels, initials and lists on the other kinds

@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    # a label or lead-in naming the title is not a word of a reordered title: partial credit as without it
    ("1406.2661/title", "Title: Networks Generative Adversarial", 0.2),
    ("2203.02155/title", "The title is language models to follow instructions with human feedback.", 0.257143),
    ("1406.2661/title", "Title: Generative Adversarial Nets", 0.0),  # a near miss stays another title
    # a name with a middle initial offers no title
    ("1406.2661/title", "It was written by Ian J. Goodfellow et al.", 0.0),
    ("1412.6980/title", "Diederik P. Kingma", 0.0),
    # a Vancouver list names its first author first, "He" included
    ("1503.02531/author", "He Q, Hinton G, Patel R", 0.0),
    ("1512.03385/author", "He K, Zhang X, Ren S", 1.0),
    ("1503.02531/author", "Hinton G, He Q, Patel R", 1.0),
])
def test_label_initial_and_list_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness


@pytest.mark.parametrize("output", ["Ian J. Goodfellow et al.", "It was written by Diederik P. Kingma et al."])
def test_a_name_with_a_middle_initial_is_evasive_on_a_title_task(output: str) -> None:
    assert grade("1406.2661/title", output).well_formed == 0.0


@pytest.mark.parametrize("title", [p.title for p in PAPERS if len(p.title.split()) >= 3])
def test_a_title_label_never_costs_partial_credit(title: str) -> None:
    """The same reordered words score the same with or without a "Title:" label before them."""
    words = title.split()
    rotated = " ".join(words[1:] + words[:1])
    task_id = next(f"{p.arxiv_id}/title" for p in PAPERS if p.title == title)
    assert grade(task_id, f"Title: {rotated}").correctness == grade(task_id, rotated).correctness


# ------------------------------------------------------------- g. a timestamp or a format's example is no year

#: Refusals and service messages holding a date with a time of day or a number labelled as metadata (``{y}``).
NO_YEAR = ["I can't access that right now; the service has been down since 10:45 on 12.03.{y}.",
           "I can't access arXiv right now; it has been down since 12.03.{y} 10:45.",
           "Sorry! The server returned status 500 at {y}-06-12 10:00. Please try again.",
           "I don't know. I can only answer questions about documents uploaded before 01/01/{y}.",
           "I'm not permitted to look up papers under policy 4.2 (rev. {y}).",
           "I can't look it up. Years look like {y}."]


@given(paper=st.sampled_from(PAPERS), form=st.sampled_from(NO_YEAR), year=st.integers(1990, 2030))
@settings(max_examples=120, deadline=None)
def test_a_timestamp_or_a_labelled_number_in_a_refusal_is_no_year(paper: object, form: str, year: int) -> None:
    """Whatever the year, right or wrong: the text answers nothing (evasive, 0.00)."""
    g = grade(f"{paper.arxiv_id}/year", form.format(y=year))
    assert (g.correctness, g.composite) == (0.0, 0.0), (form, g.feedback)


@pytest.mark.parametrize(("output", "correctness"), [
    ("Submitted 16.01.2013 10:45 UTC.", 1.0),  # no refusal: a timestamp of the submission answers
    ("I can't verify it: my notes say 2013.", 1.0),
    ("2013-01-16 10:00 (v1)", 1.0),
])
def test_a_dated_answer_still_answers(output: str, correctness: float) -> None:
    assert grade("1301.3781/year", output).correctness == correctness


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS),
       case=st.sampled_from([str.lower, str.upper, str]))
@settings(max_examples=80, deadline=None)
def test_two_known_titles_joined_by_and_hedge(paper: object, other: object, case: object) -> None:
    """"A and B" where B is another known paper's title offers two titles (hedged), not one longer title."""
    if other.title == paper.title or paper.title in other.title or other.title in paper.title:
        return
    output = f"Candidates that come to mind: {case(paper.title)} and {other.title}."
    assert grade(f"{paper.arxiv_id}/title", output).correctness == 0.5, output


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), first=st.booleans(),
       form=st.sampled_from(["{a} oder {b}.", "{a} ou {b}.", "{a} oder {b}"]))
@settings(max_examples=60, deadline=None)
def test_german_and_french_or_hedge(paper: object, other: object, first: bool, form: str) -> None:
    """"oder" and "ou" join two names as "or" does, whichever comes first."""
    if other.last_name == paper.last_name:
        return
    a, b = (paper.first_author, other.first_author) if first else (other.first_author, paper.first_author)
    output = form.format(a=a, b=b)
    assert grade(f"{paper.arxiv_id}/author", output).correctness == 0.5, output
