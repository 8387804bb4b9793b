"""The storage backends the cross-backend tests run on, each spelled one way.

A test that runs on both backends parametrizes over :data:`BACKENDS` (or, sync and
async as well, :data:`SAVER_KINDS`) and opens its isolated area with the fixture
:func:`area_fixture` names: a Postgres schema or a Redis key prefix of its own.
"""

from __future__ import annotations

POSTGRES = "postgres"
REDIS = "redis"
BACKENDS = (POSTGRES, REDIS)

# a backend and a side of the saver: "postgres-sync", "postgres-async", "redis-sync", ...
SAVER_KINDS = tuple(f"{backend}-{side}" for backend in BACKENDS for side in ("sync", "async"))


def area_fixture(backend: str) -> str:
    """The fixture of an isolated area for ``backend`` (or a saver kind of it).

    On Postgres a schema already set up (``setup()`` without options), which
    may have served an earlier test, emptied since (``tests/_set_up_schemas.py``).
    """
    return "pg_set_up_schema" if backend.startswith(POSTGRES) else "redis_prefix"
