"""Issue 31 item 4: a queued submission's reader is told how many jobs wait before it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests.web.factories import bearer, make_client, make_settings, read_204, register, submit


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    # No workers: every job stays queued.
    with make_client(make_settings(tmp_path_factory.mktemp("place"), workers=0)) as c:
        yield c


def test_a_queued_submission_says_how_many_wait_before_it(client: TestClient) -> None:
    code = read_204("reference.py")
    _, first_token = register(client)
    _, second_token = register(client)
    first = submit(client, first_token, code)
    second = submit(client, second_token, code)
    mine = client.get(f"/api/submissions/{second}", headers=bearer(second_token)).json()
    assert mine["status"] == "queued" and mine["ahead"] == 1 and mine["progress"] is None
    theirs = client.get(f"/api/submissions/{first}", headers=bearer(first_token)).json()
    assert theirs["ahead"] == 0
