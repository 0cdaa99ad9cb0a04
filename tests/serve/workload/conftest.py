"""Both sides of every workload, for a test module: serve (two processes over the session's
emulator stage) and DynamoDB Local (the oracle), both from tests/serve/conftest.py, each
behind its balancer (fronts.py); a side is started the first time a test asks for it and
stopped by PID after the module."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ..conftest import STAGE
from .fronts import Fronts, local_fronts, serve_fronts


@pytest.fixture(scope="module")
def fronts(request, tmp_path_factory) -> Iterator[Callable[[str], Fronts]]:
    made: dict[str, Fronts] = {}

    def side(name: str) -> Fronts:
        if name not in made:
            folder = tmp_path_factory.mktemp(f"workload-{name}")
            if name == "serve":
                made[name] = serve_fronts(request.getfixturevalue("served").root, STAGE, folder)
            else:
                made[name] = local_fronts(request.getfixturevalue("dynamodb_oracle").endpoint, folder)
        return made[name]

    yield side
    for one in made.values():
        one.stop()
