"""The index intervals of a Job's success policy (``validateIndexesFormat``)."""

from __future__ import annotations

import pytest

from kubesched.objects.validation.job_policies import indexes_format


@pytest.mark.parametrize(
    ("text", "total"),
    [
        pytest.param("", 0, id="empty-names-none"),
        pytest.param("0", 1, id="one-index"),
        pytest.param("0,2-3", 3, id="an-index-and-an-interval"),
        pytest.param("1-4,7,9-9", None, id="an-interval-must-grow"),
    ],
)
def test_indexes_are_counted(text, total):
    if total is None:
        with pytest.raises(ValueError, match="non-increasing order, previous: 9, current: 9"):
            indexes_format(text, 10)
    else:
        assert indexes_format(text, 10) == total


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("3,1", "non-increasing order, previous: 3, current: 1", id="decreasing"),
        pytest.param("10", 'too large index: "10"', id="not-below-completions"),
        pytest.param("a", 'cannot convert string to integer for index: "a"', id="not-a-number"),
        pytest.param(
            "1-2-3",
            'the fragment "1-2-3" violates the requirement that an index interval can have at '
            "most two parts separated by '-'",
            id="three-parts",
        ),
    ],
)
def test_bad_indexes_say_why(text, message):
    with pytest.raises(ValueError) as caught:
        indexes_format(text, 10)
    assert str(caught.value) == message
