"""Tests of the arXiv grader's rules on what an answer commits to (issue 17): values attributed to another work
are context, rejected alternatives are withdrawn, conditional answers hedge, a title-shaped answer that is not
the title is a wrong answer, BibTeX braces read away, a title with a subtitle added is another title."""

from __future__ import annotations

import pytest
from helpers import ARXIV_TASKS as TASKS
from helpers import grade_arxiv as grade
from hypothesis import given, settings
from hypothesis import strategies as st

# ------------------------------------------------------------------------ values attributed to another work

#: The right value with another one that the answer attributes to another work, a later version or a part of the
#: right value: committed, 1.00.
@pytest.mark.parametrize(("task_id", "output"), [
    ("1810.04805/id", "1810.04805. For background you could also read the related paper on ELMo-style features "
                      "(arXiv:1802.05365)."),
    ("1810.04805/id", "BERT is 1810.04805; its successor RoBERTa, a separate paper, is 1907.11692."),
    ("1512.03385/id", "The ResNet paper is arXiv:1512.03385. In comparison, the identity-mappings follow-up "
                      "got 1603.05027."),
    ("1512.03385/id", "1512.03385\n\n## Further reading\n- Identity Mappings in Deep Residual Networks, "
                      "arXiv:1603.05027"),
    ("2106.09685/id", "2106.09685 - not the QLoRA paper, which is a different paper altogether (2305.14314)."),
    ("2106.09685/id", "2106.09685 (new-style; identifiers such as math/0501001 belong to the old scheme)"),
    ("1512.03385/year", "2015. A 2021 review of vision backbones still calls it the default."),
    ("1512.03385/year", "The preprint was uploaded in December 2015, and the CVPR 2016 version won best paper."),
    ("1512.03385/year", "First version: 2015; the journal version: 2016"),
    ("2106.09685/year", "2021 (the v2 revision was posted in 2022)"),
    ("2106.09685/year", "2021. Its identifier 2106.09685 begins with 2106, i.e. June 2021."),
    ("1512.03385/title", "Deep Residual Learning for Image Recognition. It was later followed by "
                         "\"Identity Mappings in Deep Residual Networks\"."),
    ("1810.04805/title", "\"BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding\"; "
                         "for comparison, \"Attention Is All You Need\" introduced the architecture it uses."),
])
def test_values_attributed_to_another_work_are_context(task_id: str, output: str) -> None:
    assert grade(task_id, output).composite == 1.0, output


@pytest.mark.parametrize(("task_id", "output", "composite"), [
    # a cue in another clause does not reach the value
    ("1810.04805/id", "The follow-up is unclear to me; 1810.04805 or 1907.11692.", 0.75),
    ("1512.03385/year", "2015 or 2016", 0.75),
    # a value attributed to another work alone is still the answer given (wrong)
    ("1810.04805/id", "See also the related paper 1907.11692.", 0.5),
    # the right value in the attributed clause with the wrong one outside it: the wrong one is committed
    ("1810.04805/id", "1907.11692. Its predecessor was 1810.04805.", 0.5),
])
def test_attribution_is_read_in_its_clause_only(task_id: str, output: str, composite: float) -> None:
    assert grade(task_id, output).composite == composite, output


@given(cue=st.sampled_from(["See also the related paper", "For comparison, the follow-up is",
                            "Not to be confused with the sequel,", "Its successor has the identifier",
                            "A different paper, cited by it, is"]),
       other=st.sampled_from(["1603.05027", "1907.11692", "2305.14314", "1802.05365"]),
       paper=st.sampled_from(["1810.04805", "1512.03385", "2106.09685", "1706.03762"]))
@settings(max_examples=60, deadline=None)
def test_property_an_attributed_id_never_turns_a_committed_answer_into_a_hedge(cue: str, other: str,
                                                                               paper: str) -> None:
    output = f"The answer is {paper}. {cue} {other}."
    assert grade(f"{paper}/id", output).composite == 1.0, output


# ------------------------------------------------------------------------------------- rejected alternatives

@pytest.mark.parametrize(("task_id", "output"), [
    ("1406.2661/id", "Update: 1406.2661 (I had mistakenly given 1406.2616 before)"),
    ("1406.2661/id", "1406.2661; originally I wrote 1406.2616, a transposition."),
    ("1406.2661/year", "It is 2014. Previously, I said 2015."),
    ("1406.2661/id", "**Answer:** 1406.2661\n\nRuled out: 1406.2616 and 1406.6221"),
    ("1406.2661/id", "Discarded candidates:\n- 1406.2616\n- 1405.2661\nFinal pick: 1406.2661"),
    ("1406.2661/title", "Generative Adversarial Networks\n\nRejected titles: \"Conditional Generative Adversarial "
                        "Nets\", \"Deep Residual Learning for Image Recognition\""),
    ("1406.2661/author", "Ian Goodfellow. Considered but dismissed: Yoshua Bengio."),
])
def test_rejected_alternatives_are_withdrawn(task_id: str, output: str) -> None:
    assert grade(task_id, output).composite == 1.0, output


@pytest.mark.parametrize(("task_id", "output", "composite"), [
    # the rejected value is the right one: the answer committed to is wrong
    ("1406.2661/id", "1406.2616 (earlier I wrote 1406.2661 by mistake)", 0.5),
    ("1406.2661/id", "Answer: 1406.2616\nRejected: 1406.2661", 0.5),
    # a mention of an earlier statement that repeats it is no rejection
    ("1406.2661/id", "1406.2661, as I said before.", 1.0),
])
def test_a_rejection_withdraws_only_what_it_names(task_id: str, output: str, composite: float) -> None:
    assert grade(task_id, output).composite == composite, output


@given(label=st.sampled_from(["Rejected alternatives:", "Ruled out:", "Considered and rejected:",
                              "Excluded candidates:", "Dismissed:"]),
       wrong=st.lists(st.sampled_from(["1406.2616", "1406.6221", "1405.2661", "1604.2661"]), min_size=1,
                      max_size=3, unique=True))
@settings(max_examples=50, deadline=None)
def test_property_rejected_ids_never_hedge(label: str, wrong: list[str]) -> None:
    output = f"Answer: 1406.2661\n{label} {', '.join(wrong)}"
    assert grade("1406.2661/id", output).composite == 1.0, output


# ------------------------------------------------------------------------------------------- conditionals

@pytest.mark.parametrize(("task_id", "output"), [
    ("2005.14165/id", "If you're asking about GPT-3, 2005.14165; if you meant InstructGPT, then 2203.02155."),
    ("2005.14165/year", "If the question means the first arXiv version: 2020. Otherwise, 2021."),
    ("2005.14165/author", "If the order on arXiv is kept, Tom B. Brown; otherwise Benjamin Mann."),
    ("2005.14165/author", "If alphabetical, it would be Dario Amodei, else Tom Brown."),
    ("2005.14165/title", "If 2005.14165 is the GPT-3 paper, it's \"Language Models are Few-Shot Learners\"; "
                         "otherwise perhaps \"Training language models to follow instructions with human feedback\"."),
])
def test_answers_under_different_conditions_hedge(task_id: str, output: str) -> None:
    g = grade(task_id, output)
    assert (g.correctness, g.composite) == (0.5, 0.75), output


@pytest.mark.parametrize(("task_id", "output", "composite"), [
    # one condition, one answer: committed
    ("2005.14165/id", "If I remember right, 2005.14165.", 1.0),
    # branches that give other kinds of value are no rival answers
    ("2005.14165/id", "If you need the ID, 2005.14165; if you need the year, 2020.", 1.0),
    # a conditional after the answer, not around it, offers no second answer
    ("2005.14165/id", "2005.14165. If you want the follow-up, see also 2203.02155; otherwise that is all.", 1.0),
    # every branch wrong: wrong
    ("2005.14165/id", "If you mean one paper, 2203.02155; otherwise 2001.08361.", 0.5),
    # every branch right: committed
    ("2005.14165/id", "If you mean v1, 2005.14165; otherwise 2005.14165v4.", 1.0),
])
def test_conditionals_hedge_only_with_two_answers(task_id: str, output: str, composite: float) -> None:
    assert grade(task_id, output).composite == composite, output


@given(cond_a=st.sampled_from(["If you mean the preprint", "If the question is about v1", "If I recall correctly"]),
       cond_b=st.sampled_from(["otherwise", "if not", "if you mean the other one", "else"]),
       wrong=st.sampled_from(["2203.02155", "2001.08361", "1706.03762"]), right_first=st.booleans())
@settings(max_examples=60, deadline=None)
def test_property_a_conditional_second_answer_never_scores_above_hedged(cond_a: str, cond_b: str, wrong: str,
                                                                         right_first: bool) -> None:
    a, b = ("2005.14165", wrong) if right_first else (wrong, "2005.14165")
    output = f"{cond_a}, {a}; {cond_b}, {b}."
    assert grade("2005.14165/id", output).composite <= 0.75, output


# ------------------------------------------------------------------------- another title, written in any case

@pytest.mark.parametrize("output", [
    "Neural machine translation by jointly learning to align and translate",
    "Dropout: a simple way to prevent neural networks from overfitting",
    "Improving language understanding by generative pre-training.",
    "\"Proximal policy optimization algorithms\"",
    "U-net: convolutional networks for biomedical image segmentation",
    "Learning representations by back-propagating errors",
])
def test_a_title_shaped_line_that_is_not_the_title_is_wrong(output: str) -> None:
    g = grade("1706.03762/title", output)
    assert (g.correctness, g.well_formed, g.composite) == (0.0, 1.0, 0.5), output


@pytest.mark.parametrize("output", [
    "Good question, let me look into it.", "Sorry, no idea.", "Not sure.", "Service temporarily unavailable.",
    "Could you rephrase the question?", "It was a famous paper.",
    "Thanks for asking!", "I think you should check Google Scholar.", "See the abstract page.",
])
def test_filler_lines_stay_evasive(output: str) -> None:
    g = grade("1706.03762/title", output)
    assert (g.composite, g.well_formed) == (0.0, 0.0), output


#: One line of prose that offers no title (a remark on the paper, a contraction, a clause after a comma, another
#: language): evasive, 0.00, not another title.
@pytest.mark.parametrize(("task_id", "output"), [
    ("1412.6980/title", "That's a classic paper on stochastic optimisation."),
    ("1412.6980/title", "This one's a widely cited optimizer paper."),
    ("1503.02531/title", "Everyone knows this paper, it introduced knowledge distillation."),
    ("1503.02531/title", "Hinton's paper was quite influential."),
    ("1503.02531/title", "Nobody remembers that one anymore."),
    ("2010.11929/title", "Transformers are now used for images too."),
    ("2010.11929/title", "Vision transformers changed computer vision forever."),
    ("2006.11239/title", "Diffusion models, they're everywhere these days."),
    ("2006.11239/title", "Somebody at Berkeley wrote it, I believe."),
    ("2006.11239/title", "Désolé, je ne connais pas ce document."),
    ("2006.11239/title", "Questo articolo non lo conosco, mi dispiace."),
    ("2006.11239/title", "죄송합니다, 답변할 수 없습니다."),
    ("2006.11239/title", "Das ist ein bekanntes Paper über Diffusion."),
    ("1810.04805/title", "Many researchers fine-tune it every day."),
])
def test_a_line_of_prose_offers_no_title(task_id: str, output: str) -> None:
    g = grade(task_id, output)
    assert (g.composite, g.well_formed) == (0.0, 0.0), output


#: Sentence-case titles of other papers keep reading as titles, also with a verb, an imperative contraction, a
#: comma or a capitalised name after a sentence opener: wrong, 0.50.
@pytest.mark.parametrize("output", [
    "Language models are few-shot learners",
    "Attention is not explanation",
    "Don't stop pretraining: adapt language models to domains and tasks",
    "Let's verify step by step",
    "Very deep convolutional networks for large-scale image recognition",
    "An image is worth 16x16 words: transformers for image recognition at scale",
    "Emergent abilities of large language models.",
    "It's Going Deeper with Convolutions.",
    "That's \"Playing Atari with deep reinforcement learning\", a famous paper.",
])
def test_a_sentence_case_title_stays_another_title(output: str) -> None:
    g = grade("1706.03762/title", output)
    assert (g.correctness, g.well_formed, g.composite) == (0.0, 1.0, 0.5), output


@pytest.mark.parametrize(("task_id", "output", "composite"), [
    ("1706.03762/title", "It's Attention Is All You Need, a famous paper.", 1.0),  # the title in a remark
    ("1512.03385/title", "He Kaiming", 0.5),  # a name, not a sentence opened by "He"
])
def test_a_remark_holding_the_title_or_a_name_is_graded_as_before(task_id: str, output: str,
                                                                   composite: float) -> None:
    assert grade(task_id, output).composite == composite, output


@given(subject=st.sampled_from(["It's", "That's", "This one is", "Everyone thinks it is", "Nobody says it is"]),
       judgement=st.sampled_from(["a famous", "an influential", "a classic", "quite a good", "a seminal"]),
       topic=st.sampled_from(["paper on image recognition", "optimizer paper", "work about word vectors",
                              "diffusion paper"]), task=st.sampled_from(["1512.03385", "1412.6980", "2006.11239"]))
@settings(max_examples=60, deadline=None)
def test_property_a_remark_on_the_paper_never_scores_above_evasive(subject: str, judgement: str, topic: str,
                                                                    task: str) -> None:
    output = f"{subject} {judgement} {topic}."
    assert grade(f"{task}/title", output).composite == 0.0, output


@given(words=st.lists(st.sampled_from(sorted(
    "great question thanks please sure sorry check look help know idea maybe answer title".split())),
    min_size=1, max_size=8))
@settings(max_examples=80, deadline=None)
def test_property_filler_words_never_make_a_title(words: list[str]) -> None:
    output = " ".join(words).capitalize()
    assert grade("1706.03762/title", output).composite == 0.0, output


# ------------------------------------------------------------------------------- BibTeX braces, dash subtitles

@pytest.mark.parametrize(("task_id", "output"), [
    ("1512.03385/title", "@inproceedings{he2016deep,\n  title={{Deep} {Residual} {Learning} for {Image} "
                         "{Recognition}},\n  year={2016}\n}"),
    ("2106.09685/title", "title = {{LoRA:} {Low-Rank} {Adaptation} of {Large} {Language} {Models}}"),
    ("1406.2661/title", "@article{gan, title={{Generative} {Adversarial} {Networks}}, author={Goodfellow, Ian}}"),
])
def test_bibtex_protective_braces_read_away(task_id: str, output: str) -> None:
    assert grade(task_id, output).composite == 1.0, output


def test_a_bibtex_placeholder_stays_evasive() -> None:
    assert grade("1512.03385/title", "@misc{x, title={TITLE}}").composite == 0.0


@pytest.mark.parametrize(("output", "composite"), [
    ("Deep Residual Learning for Image Recognition - Revisited", 0.5),
    ("Deep Residual Learning for Image Recognition — Reconsidered.", 0.5),
    ("Deep Residual Learning for Image Recognition – A Decade Later in Vision", 0.5),
    # an attribution after the dash is no subtitle
    ("Deep Residual Learning for Image Recognition - Kaiming He", 1.0),
    ("Deep Residual Learning for Image Recognition — He et al., 2015", 1.0),
    ("Deep Residual Learning for Image Recognition - the ResNet paper", 1.0),
])
def test_a_subtitle_after_a_dash_makes_another_title(output: str, composite: float) -> None:
    assert grade("1512.03385/title", output).composite == composite, output


# --------------------------------------------------------------------- "A vs. B", ids that look like words

@pytest.mark.parametrize(("task_id", "output"), [
    ("1512.03385/author", "Kaiming He vs. Xiangyu Zhang"),
    ("1512.03385/author", "Kaiming He vs Jian Sun"),
    ("2106.09685/author", "Edward J. Hu vs. Yelong Shen (not sure which)"),
])
def test_names_set_against_each_other_hedge(task_id: str, output: str) -> None:
    assert grade(task_id, output).composite == 0.75, output


@pytest.mark.parametrize("output", [
    "Error 503: upstream timeout (trace 9b2e-77c1). Retry later.",
    "Request 4d7a-0091 failed.",
])
def test_a_token_starting_with_a_digit_is_no_name(output: str) -> None:
    g = grade("1512.03385/author", output)
    assert (g.composite, g.well_formed) == (0.0, 0.0), output


# ---------------------------------------------------------------------------- sources cited by a refusal

@pytest.mark.parametrize(("task_id", "output"), [
    ("1512.03385/year", "I'm unable to verify that; see the arXiv terms of use (2020)."),
    ("1512.03385/year", "Sorry, I can't look it up. Please refer to the 2022 submission guidelines."),
    ("1512.03385/id", "I can't browse arXiv. Consult the help page (see 0704.0001 for the format history)."),
])
def test_a_number_in_a_source_cited_by_a_refusal_is_no_answer(task_id: str, output: str) -> None:
    g = grade(task_id, output)
    assert (g.composite, g.well_formed) == (0.0, 0.0), output


@pytest.mark.parametrize(("task_id", "output", "composite"), [
    ("1512.03385/year", "2015. See the arXiv listing for the exact date.", 1.0),
    ("1512.03385/year", "I can't be certain, but 2015.", 1.0),
])
def test_a_pointer_to_a_source_leaves_an_answer_alone(task_id: str, output: str, composite: float) -> None:
    assert grade(task_id, output).composite == composite, output


def test_a_long_withdrawn_part_grades_fast() -> None:
    """The withdrawn part is blanked; a long blank run once met patterns with several \\s* in a row (about 0.1 s
    for a 100-character run, cubic in its length): the committed part reads it as one space."""
    import time

    rejected = "Rejected alternative: \"" + "Distributed Representations of Words and Phrases " * 40 + "\"."
    output = f"Answer: \"Deep Residual Learning for Image Recognition\"\n\n{rejected}"
    start = time.perf_counter()
    g = grade("1512.03385/title", output)
    assert time.perf_counter() - start < 0.05
    assert g.correctness == 1.0


# ------------------------------------------------------------------------ code fences are markup

#: A fenced code block's opening line, with any language tag or none, backticks or tildes, is markup: its tag
#: is no second name, title or value.
@pytest.mark.parametrize("fence", ["```json", "```yaml", "```text", "```python", "```", "~~~json", "``` json"])
@pytest.mark.parametrize(("task_id", "body"), [
    ("1301.3781/author", '{"author": "Tomas Mikolov"}'),
    ("2005.14165/author", "first_author: Tom B. Brown"),
    ("1512.03385/author", '{"first_author": "Kaiming He", "year": 2015}'),
    ("1706.03762/title", '{"title": "Attention Is All You Need"}'),
    ("2106.09685/id", "arxiv_id: 2106.09685"),
])
def test_a_code_fence_is_markup(fence: str, task_id: str, body: str) -> None:
    closing = fence[:3]
    output = f"{fence}\n{body}\n{closing}"
    assert grade(task_id, output).composite == 1.0, output


@pytest.mark.parametrize(("task_id", "output", "composite"), [
    # a fence does not hide a second candidate inside the block
    ("1301.3781/author", '```json\n{"candidates": ["Tomas Mikolov", "Quoc Le"]}\n```', 0.75),
    ("1301.3781/author", "```text\nIlya Sutskever\n```", 0.5),
    # the fence alone offers nothing
    ("1301.3781/author", "```json\n{}\n```", 0.0),
])
def test_a_code_fence_hides_nothing(task_id: str, output: str, composite: float) -> None:
    assert grade(task_id, output).composite == composite, output


# ------------------------------------------------------------------------ possessive attribution to another work

#: A value that its clause attributes to someone else's work by a possessive or "by" ("X's paper", "the
#: preprint by X") is context, not a rival: the right value alone is committed, 1.00.
@pytest.mark.parametrize(("task_id", "output"), [
    ("1301.3781/year", "2013. Note: Jason Wei's paper 2201.11903 is from 2022."),
    ("1512.03385/year", "2015 - the paper by Vaswani et al. came out in 2017."),
    ("2006.11239/year", "2020; Kingma’s Adam article dates from 2014."),
    ("1512.03385/id", "1512.03385; Hinton’s distillation work is 1503.02531."),
    ("2106.09685/id", "arXiv:2106.09685 (Dettmers's QLoRA preprint, a different one, is 2305.14314)"),
    ("1301.3781/title", "Efficient Estimation of Word Representations in Vector Space. Vaswani's paper is "
                        "\"Attention Is All You Need\"."),
])
def test_possessive_attribution_is_context(task_id: str, output: str) -> None:
    assert grade(task_id, output).composite == 1.0, output


@pytest.mark.parametrize(("task_id", "output", "composite"), [
    # the first author's own paper is no other work: its value stays a candidate beside the rival
    ("1301.3781/id", "Mikolov's paper is 1301.3781; 1310.4546 is also possible.", 0.75),
    ("1301.3781/id", "Mikolov et al.'s paper is 1301.3781; 1310.4546 is also possible.", 0.75),
    ("1301.3781/id", "The paper by Tomas Mikolov is 1301.3781, or maybe 1310.4546.", 0.75),
    # a contraction is no possessive
    ("1301.3781/id", "It's paper 1301.3781 or 1310.4546.", 0.75),
    # the cue reaches its clause only
    ("1301.3781/year", "Jason Wei's paper is 2022; this one 2013 or 2014.", 0.75),
    ("1301.3781/year", "2013 or 2014; Wei's paper is unrelated.", 0.75),
    # an attributed value alone is still the answer given
    ("1301.3781/year", "Jason Wei's paper is from 2022.", 0.5),
])
def test_possessive_attribution_is_read_in_its_clause_only(task_id: str, output: str, composite: float) -> None:
    assert grade(task_id, output).composite == composite, output


# ------------------------------------------------------------------------ fields and topics are no names

#: A title-case run naming a field, method or thing (its last word ends as such a noun, it is followed by its
#: acronym, or it is three words or more ending in a plural) is no person's name: alone it offers no name
#: (evasive, 0.00) ...
@pytest.mark.parametrize("task_id", ["1301.3781/author", "1706.03762/author", "2402.03300/author"])
@pytest.mark.parametrize("output", [
    "Researchers in Natural Language Processing (NLP) and Computer Vision have cited it widely.",
    "It is a cornerstone of Machine Learning and Deep Learning courses.",
    "The paper matters for Speech Recognition, Reinforcement Learning and Neural Networks alike.",
    "Practitioners of Information Retrieval and Sentiment Classification still use it.",
    "Its ideas spread to Large Language Models and Convolutional Neural Networks.",
    "Work on Graph Neural Networks (GNNs) builds on it.",
    "Computer Vision",
    "natural language processing",
    "Machine Translation (MT)",
    "Its influence on Computer Science, Data Mining and Graph Theory is large.",
    "Cognitive Science and Computational Linguistics picked it up first.",
])
def test_a_field_is_no_name(task_id: str, output: str) -> None:
    assert grade(task_id, output).composite == 0.0, output


#: ... and beside the right name it is no rival: still correct.
@pytest.mark.parametrize(("task_id", "output"), [
    ("1301.3781/author", "Tomas Mikolov is the first author. Researchers in Natural Language Processing (NLP) and "
                         "Computer Vision have cited it widely, and it shaped Machine Learning practice."),
    ("1706.03762/author", "- Ashish Vaswani\n- Field: Machine Translation"),
    ("1706.03762/author", "- Ashish Vaswani\n- Computer Vision"),
    ("1512.03385/author", "Kaiming He et al.; the paper won over the Computer Vision community."),
    ("2005.14165/author", "Tom B. Brown. It reshaped Natural Language Processing and Few-Shot Learning."),
    ("1301.3781/author", "Tomas Mikolov et al. (Speech Recognition and Machine Learning people cite it too)"),
])
def test_a_field_beside_the_name_is_no_rival(task_id: str, output: str) -> None:
    assert grade(task_id, output).composite == 1.0, output


#: People's names stay names, the first authors' and others' (surnames rarely end as a field's noun).
@pytest.mark.parametrize(("task_id", "output", "composite"), [
    ("1301.3781/author", "I believe it was Christopher Manning who wrote it.", 0.5),
    ("1301.3781/author", "I think Neil Lawrence wrote it.", 0.5),
    ("1301.3781/author", "Yoshua Bengio", 0.5),
    ("1301.3781/author", "Tomas Mikolov or Quoc Le", 0.75),
    # a surname ending in "s" after a sentence's first word: the opener does not make a three-word term
    ("1301.3781/author", "Maybe Oriol Vinyals.", 0.5),
    ("1301.3781/author", "Perhaps Chris Williams", 0.5),
    ("1412.6980/author", "Probably Diederik Kingma.", 1.0),
    ("1706.03762/author", "Researchers in Computer Vision credit Noam Shazeer.", 0.5),
    ("2201.11903/author", "Jason Wei, who works on Large Language Models (LLMs).", 1.0),
    # a possessive opening a sentence before a work is a person's ("Goodfellow's paper"), not "Today's"
    ("1301.3781/author", "Goodfellow's paper introduced GANs.", 0.5),
    ("1406.2661/author", "Goodfellow's paper introduced GANs.", 1.0),
    ("1301.3781/author", "Today's paper is famous.", 0.0),
    # a word after an initial is a surname, even before a field's words
    ("1301.3781/author", "O. Khattab Language Model Programming", 0.5),
])
def test_names_stay_names_beside_fields(task_id: str, output: str, composite: float) -> None:
    assert grade(task_id, output).composite == composite, output


@pytest.mark.parametrize("task_id", [t for t in TASKS if t.endswith("/author")])
def test_every_first_author_is_a_name_in_prose(task_id: str) -> None:
    paper = TASKS[task_id].answer
    assert grade(task_id, f"I believe it was {paper} who wrote it, in Machine Learning.").composite == 1.0
