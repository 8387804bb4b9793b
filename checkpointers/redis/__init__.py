"""Redis checkpoint savers: plain Redis >= 6.2, Valkey, Redis Cluster; no modules.

Importing this package imports redis-py, never psycopg.
"""

from langgraph_durable.checkpointers.redis._async import AsyncRedisSaver
from langgraph_durable.checkpointers.redis._sync import RedisSaver, connect

__all__ = ["AsyncRedisSaver", "RedisSaver", "connect"]
