"""Tests of the arXiv grader's rules closed in stop 11 (issue 17, blind pass 10): a negation reaches an ID written
as a URL and a year written inside a date; a title with words added after a preposition is a longer title; text
that offers no title is evasive on a title task; an answer the text rejects or reports as given up is no
candidate, however it says so; a line of code, another field of a record or a letter's closing is no second
title."""

from __future__ import annotations

import pytest
from helpers import assert_gives_up
from helpers import grade_arxiv as grade
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.arxiv import PAPERS

# --------------------------------------------------------- a. negation reaches an ID in a URL, a year in a date

#: How an ID is written as a link.
URLS = ["https://arxiv.org/abs/{i}", "arxiv.org/abs/{i}v2", "http://arxiv.org/pdf/{i}", "https://www.arxiv.org/abs/{i}"]
#: How a year is written inside a date (``{y}`` the year).
DATES = ["3 March {y}", "March 3, {y}", "Mar {y}", "03/{y}", "21.03.{y}", "3/21/{y}", "{y}-03", "{y}-03-21"]
#: Forms that negate ``{x}`` and offer nothing else, or offer ``{o}`` instead.
NEGATED_ONLY = ["It isn't {x}.", "Not {x}.", "Neither {x} nor {o}.", "Definitely not {x}."]
NEGATED_FOR_OTHER = ["It's {o}, not {x}.", "Not {x}; it is {o}.", "{x} (no, {o})", "Forget {x}. It is {o}."]


def _written(paper: object, kind: str, form: str) -> str:
    return form.format(i=paper.arxiv_id) if kind == "id" else form.format(y=paper.year)


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), kind=st.sampled_from(["id", "year"]),
       data=st.data())
@settings(max_examples=150, deadline=None)
def test_negating_the_right_value_in_a_url_or_date_never_scores_it(paper: object, other: object, kind: str,
                                                                  data: st.DataObject) -> None:
    """However the right ID or year is written (a link, a date), negating it never scores correct, and when
    another value is offered instead, that one is graded (confidently wrong)."""
    right = _written(paper, kind, data.draw(st.sampled_from(URLS if kind == "id" else DATES)))
    wrong = other.arxiv_id if kind == "id" else str(other.year)
    if wrong in (paper.arxiv_id, str(paper.year)):
        return
    task_id = f"{paper.arxiv_id}/{kind}"
    only = data.draw(st.sampled_from(NEGATED_ONLY)).format(x=right, o=wrong)
    assert grade(task_id, only).correctness == 0.0, only
    instead = data.draw(st.sampled_from(NEGATED_FOR_OTHER)).format(x=right, o=wrong)
    assert grade(task_id, instead).composite == 0.5, instead


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1706.03762/id", "Earlier I typed 1810.04805, but it's https://arxiv.org/abs/1706.03762.", 1.0),
    ("1706.03762/id", "1810.04805. Actually, it's arxiv.org/abs/1706.03762v5.", 1.0),
    ("1706.03762/id", "See https://arxiv.org/abs/1706.03762 for details.", 1.0),  # no negation: the URL answers
    ("1706.03762/year", "It was submitted on 12 June 2017.", 1.0),
    ("1706.03762/year", "2017-06 (no, 2018)", 0.0),  # the correction replaces the month and year as a whole
    ("1706.03762/year", "Published 2017/13/40, not a date", 1.0),  # no month 13: "2017" stands alone
])
def test_url_and_date_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness


# ------------------------------------------------ b. a title with words after a preposition is a longer title

@given(paper=st.sampled_from(PAPERS), tail=st.sampled_from(["for Everyone", "for All", "for You", "with Us"]))
@settings(max_examples=60, deadline=None)
def test_a_title_with_a_tail_after_a_preposition_is_another_title(paper: object, tail: str) -> None:
    """"<title> for Everyone" is a different paper's title (issue 17 class 2): wrong, not correct."""
    g = grade(f"{paper.arxiv_id}/title", f"{paper.title} {tail}")
    assert (g.correctness, g.well_formed) == (0.0, 1.0)


@pytest.mark.parametrize(("output", "correctness"), [
    ("Generative Adversarial Networks for everyone", 1.0),  # lower case: a remark after the title
    ("Generative Adversarial Networks, for all I know", 1.0),
    ("Generative Adversarial Networks for I think that is it", 1.0),
])
def test_a_tail_that_is_no_title_examples(output: str, correctness: float) -> None:
    assert grade("1406.2661/title", output).correctness == correctness


# ------------------------------------------------------------- c. text that offers no title is evasive

#: Text without a title: a tool's failure, laughter, a name with "et al." only, a scale of scores.
NO_TITLE = ["No result.", "No result!", "[accessed 2020-01-01] No result.", "Hee hee hee", "Ha ha ha!",
            "John Roe et al.", "Smith et al.", "Scores: right 1.00, partial 0.60, wrong 0.00.",
            "Scale - exact 1.0, close 0.5, none 0.0"]


@given(paper=st.sampled_from(PAPERS), text=st.sampled_from(NO_TITLE))
@settings(max_examples=80, deadline=None)
def test_text_offering_no_title_is_evasive_on_a_title_task(paper: object, text: str) -> None:
    """No text without a title scores above 0.00 on a title task (issue 17 class 1)."""
    g = grade(f"{paper.arxiv_id}/title", text)
    assert (g.correctness, g.well_formed, g.composite) == (0.0, 0.0, 0.0), text


@pytest.mark.parametrize(("output", "well_formed"), [
    ("Deep Residual Learning", 1.0),  # another title: wrong, not evasive
    ("Attention Is All You Need et al.", 1.0),
    ("No Free Lunch Theorems for Optimization", 1.0),
])
def test_another_title_stays_wrong_examples(output: str, well_formed: float) -> None:
    assert grade("1406.2661/title", output).well_formed == well_formed


# --------------------------------------------- d. an answer the text rejects or reports as given up is none

#: Forms that give up ``{w}`` and answer ``{r}``: an imperative of rejection, a negated choice, an account of
#: an earlier answer followed by a contrast, a verdict that the candidate is another paper.
REJECTED = [
    "Drop {w}. It is {r}.",
    "Rule out {w}: the answer is {r}.",
    "Do not pick {w}; pick {r}.",
    "I wouldn't go with {w}. Go with {r}.",
    "I had first answered {w}, however on checking, the answer is {r}.",
    "I previously said {w}, but it is {r}.",
    "One match is {w}, but that is another paper. The answer is {r}.",
    "<thinking>\nMaybe {w}? No: that is a different paper.\n</thinking>\n<answer>{r}</answer>",
]


@given(paper=st.sampled_from(PAPERS), other=st.sampled_from(PAPERS), form=st.sampled_from(REJECTED),
       kind=st.sampled_from(["id", "year", "title"]))
@settings(max_examples=160, deadline=None)
def test_a_rejected_or_given_up_answer_is_no_candidate(paper: object, other: object, form: str, kind: str) -> None:
    assert_gives_up(form, paper, other, kind)


@pytest.mark.parametrize(("task_id", "output", "correctness"), [
    ("1301.3781/id", "Scratch that: 1301.3781.", 1.0),  # "scratch that" retracts what came before, not what follows
    ("1301.3781/id", "1310.4546 or 1301.3781; scratch that, 1301.3781.", 1.0),
    ("1301.3781/id", "1301.3781 is a paper on word vectors.", 1.0),  # "a paper" is no verdict of another paper
    ("1301.3781/id", "1301.3781, or 1310.4546 (a different paper?)", 0.5),
    ("1301.3781/author", "Jason Wei is another author. The answer is Tomas Mikolov.", 1.0),
])
def test_rejection_examples(task_id: str, output: str, correctness: float) -> None:
    assert grade(task_id, output).correctness == correctness


# ------------------------------------- e. code, another field of a record, a closing line: no second title

#: Wrappers of the right title (``{t}``) with lines that are no title.
WRAPPED = [
    "```js\nconst title = \"{t}\";\nconsole.log(title);\n```",
    "<reply>\n<answer>{t}</answer>\n<certainty>medium</certainty>\n</reply>",
    "{{\"call\": \"lookup\",\n\"args\": {{\"q\": \"paper title\"}}}}\nIt is {t}.",
    "Hello,\n\nIt is \"{t}\".\n\nCheers,\nBot",
    "The title is \"{t}\".\n\nSincerely,\nA. Helper",
    "{t}\nJean-Luc Martin, Ming-Hsuan Yang",  # an author line, hyphenated given names included
]


@given(paper=st.sampled_from(PAPERS), form=st.sampled_from(WRAPPED))
@settings(max_examples=80, deadline=None)
def test_lines_that_are_no_title_are_no_second_title(paper: object, form: str) -> None:
    g = grade(f"{paper.arxiv_id}/title", form.format(t=paper.title))
    assert g.correctness == 1.0, form


@pytest.mark.parametrize(("output", "correctness"), [
    ("<reply>\n<answer>Generative Adversarial Networks</answer>\n<alternative>Deep Residual Learning for Image "
     "Recognition</alternative>\n</reply>", 0.5),  # a candidate's field still offers a title
    ("Generative Adversarial Networks\nDeep Residual Learning for Image Recognition", 0.5),
])
def test_a_candidate_field_still_hedges_examples(output: str, correctness: float) -> None:
    assert grade("1406.2661/title", output).correctness == correctness
