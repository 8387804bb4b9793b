"""Redis checkpoint savers: plain Redis >= 6.2, Valkey, Redis Cluster; no modules.

Importing this package imports redis-py, never psycopg.
"""

from langgraph_durable.checkpointers.redis._connect import connect
from langgraph_durable.checkpointers.redis._saver import RedisSaver
from langgraph_durable.checkpointers.redis._saver_async import AsyncRedisSaver

__all__ = ["AsyncRedisSaver", "RedisSaver", "connect"]
