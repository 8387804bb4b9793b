"""Schema-version tagging and migration hooks for LangGraph checkpoints.

Every checkpoint a langgraph-durable saver writes records the schema version of
the code that wrote it (0 for checkpoints written before tagging or by other
savers). Our savers keep it beside the metadata (a column, a record field; read
it with ``saver.schema_version(config)``), so metadata reads back exactly as
written; a saver that keeps it in ``metadata["schema_version"]`` works too
(:func:`stored_version_of`, ``finish_read(..., tag_metadata=True)``). A
:class:`StateMigrations` passed to a saver as ``migrations=`` upgrades older
checkpoints on read through a chain of pure steps, and :func:`upgrade_all`
rewrites them eagerly.

Imports neither psycopg nor redis, nor :mod:`checkpointers`.
"""

from langgraph_durable.migrations._bulk import MigrationStore, upgrade_all
from langgraph_durable.migrations._bulk_async import AsyncMigrationStore, aupgrade_all
from langgraph_durable.migrations._bulk_core import (
    BatchOutcome,
    CheckpointRef,
    DryRunVersion,
    Failure,
    ItemOutcome,
    Progress,
    UpgradeFn,
    UpgradeResult,
    VersionStatus,
)
from langgraph_durable.migrations._chain import StateMigrations, Step, is_state_channel
from langgraph_durable.migrations._errors import (
    MigrationChainError,
    MigrationError,
    MigrationsError,
    SchemaVersionError,
)
from langgraph_durable.migrations._upgrade import (
    SCHEMA_VERSION_KEY,
    Upgrade,
    check_version,
    code_version,
    finish_read,
    is_migrated_version,
    stored_version_of,
    untagged,
    upgrade_checkpoint,
    versions_to_store,
)

__all__ = [
    "SCHEMA_VERSION_KEY",
    "AsyncMigrationStore",
    "BatchOutcome",
    "CheckpointRef",
    "DryRunVersion",
    "Failure",
    "ItemOutcome",
    "MigrationChainError",
    "MigrationError",
    "MigrationStore",
    "MigrationsError",
    "Progress",
    "SchemaVersionError",
    "StateMigrations",
    "Step",
    "Upgrade",
    "UpgradeFn",
    "UpgradeResult",
    "VersionStatus",
    "aupgrade_all",
    "check_version",
    "code_version",
    "finish_read",
    "is_migrated_version",
    "is_state_channel",
    "stored_version_of",
    "untagged",
    "upgrade_all",
    "upgrade_checkpoint",
    "versions_to_store",
]
