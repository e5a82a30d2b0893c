"""The store's non-atomic dataset insert: a duplicate-key refusal is retried, any other error is not."""

from __future__ import annotations

import pytest

from harness.tracking.tracker import retry_duplicate_insert


def test_duplicate_insert_is_retried_until_it_succeeds() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 2:
            raise RuntimeError('psycopg2.errors.UniqueViolation: duplicate key value violates "dataset_pk"')
        return "logged"

    assert retry_duplicate_insert(flaky) == "logged"
    assert len(calls) == 2


def test_other_errors_are_not_retried() -> None:
    calls: list[int] = []

    def broken() -> None:
        calls.append(1)
        raise RuntimeError("connection refused")

    with pytest.raises(RuntimeError, match="connection refused"):
        retry_duplicate_insert(broken)
    assert len(calls) == 1


def test_a_duplicate_that_persists_is_raised_after_the_last_attempt() -> None:
    def always() -> None:
        raise RuntimeError("UNIQUE constraint failed: datasets.dataset_uuid")

    with pytest.raises(RuntimeError, match="UNIQUE constraint failed"):
        retry_duplicate_insert(always, attempts=2)
