"""Schema-version tagging and migration hooks for LangGraph checkpoints.

Imports neither psycopg nor redis, nor :mod:`checkpointers`.
"""

SCHEMA_VERSION_KEY = "schema_version"
"""Metadata key that carries the schema version of the code that wrote a checkpoint."""

__all__ = ["SCHEMA_VERSION_KEY"]
