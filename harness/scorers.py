"""The graders as MLflow GenAI scorers, where the README has always shown them; they live in
:mod:`harness.tracking.scorers`."""

from harness.tracking.scorers import arxiv_verifier_scorer, grader_scorer, verifier_scorer

__all__ = ["arxiv_verifier_scorer", "grader_scorer", "verifier_scorer"]
