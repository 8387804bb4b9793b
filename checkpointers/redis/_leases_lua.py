"""The Lua scripts of the Redis run leases (see ``_leases.py`` for the keys).

Each script changes one thread's lease key (``KEYS[1]``) and lease record
(``KEYS[2]``) atomically; times are epoch milliseconds from the caller's clock.
"""

from __future__ import annotations

from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._lua_common import Script

_LOAD = """
local h = KEYS[2]
local state = redis.call('HGET', h, 'state')
local owner = redis.call('HGET', h, 'owner')
local token = tonumber(redis.call('HGET', h, 'token') or '0')
local exp = tonumber(redis.call('HGET', h, 'expires_at') or '0')
"""

ACQUIRE = (
    _LOAD
    + """
local now = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
if state == 'running' and owner ~= ARGV[2] and exp > now then return nil end
if not (state == 'running' and owner == ARGV[2]) then
  redis.call('HSET', h, 'token', token + 1, 'acquired_at', now)
end
redis.call('HSET', h, 'thread_id', ARGV[1], 'state', 'running', 'owner', ARGV[2],
           'renewed_at', now, 'expires_at', now + ttl, 'progress_at', now)
redis.call('HDEL', h, 'reason', 'ended_at')
redis.call('PERSIST', h)
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
return redis.call('HGETALL', h)
"""
)

RENEW = (
    _LOAD
    + """
if state ~= 'running' or owner ~= ARGV[1] then return 0 end
local now = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
redis.call('HSET', h, 'renewed_at', now, 'expires_at', now + ttl)
if ARGV[4] ~= '' then redis.call('HSET', h, 'progress_at', ARGV[4]) end
if ARGV[5] ~= '' then redis.call('HSET', h, 'progress', ARGV[5]) end
redis.call('SET', KEYS[1], owner, 'PX', ttl)
return 1
"""
)

RELEASE = (
    _LOAD
    + """
if state ~= 'running' or owner ~= ARGV[1] then return 0 end
redis.call('HSET', h, 'state', 'released', 'reason', ARGV[3], 'ended_at', ARGV[2],
           'attempts', 0)
if ARGV[4] ~= '' then redis.call('HSET', h, 'last_error', ARGV[4]) end
redis.call('DEL', KEYS[1])
-- a released record lives as long as the saver keeps the thread's other keys
if tonumber(ARGV[5]) > 0 then redis.call('PEXPIRE', h, ARGV[5]) end
return 1
"""
)

RECORD_ERROR = (
    _LOAD
    + """
if owner ~= ARGV[1] then return 0 end
redis.call('HSET', h, 'last_error', ARGV[2])
return 1
"""
)

CLAIM = (
    _LOAD
    + """
local now = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
if state ~= 'running' or token ~= tonumber(ARGV[1]) or exp > now then return nil end
redis.call('HINCRBY', h, 'token', 1)
redis.call('HINCRBY', h, 'attempts', 1)
redis.call('HINCRBY', h, 'recoveries', 1)
redis.call('HSET', h, 'owner', ARGV[2], 'acquired_at', now, 'renewed_at', now,
           'expires_at', now + ttl, 'progress_at', now)
redis.call('HDEL', h, 'progress')
redis.call('PERSIST', h)
redis.call('SET', KEYS[1], ARGV[2], 'PX', ttl)
return redis.call('HGETALL', h)
"""
)

TAKE_OVER = (
    _LOAD
    + """
local now = tonumber(ARGV[4])
local ttl = tonumber(ARGV[5])
local renewed = tonumber(redis.call('HGET', h, 'renewed_at') or '')
if state ~= 'running' or token ~= tonumber(ARGV[1]) or renewed ~= tonumber(ARGV[2]) then
  return nil
end
redis.call('HINCRBY', h, 'token', 1)
redis.call('HSET', h, 'owner', ARGV[3], 'acquired_at', now, 'renewed_at', now,
           'expires_at', now + ttl, 'progress_at', now)
redis.call('HDEL', h, 'progress')
redis.call('PERSIST', h)
redis.call('SET', KEYS[1], ARGV[3], 'PX', ttl)
return redis.call('HGETALL', h)
"""
)

PARK = (
    _LOAD
    + """
local now = tonumber(ARGV[2])
if state ~= 'running' or token ~= tonumber(ARGV[1]) or exp > now then return nil end
redis.call('HSET', h, 'state', 'parked', 'reason', ARGV[3], 'ended_at', now)
redis.call('DEL', KEYS[1])
return redis.call('HGETALL', h)
"""
)

UNPARK = (
    _LOAD
    + """
if state ~= 'parked' then return 0 end
if ARGV[1] == '' then
  redis.call('HSET', h, 'state', 'released', 'attempts', 0, 'reason', 'unparked')
else
  redis.call('HSET', h, 'state', 'running', 'attempts', 0, 'reason', 'unparked',
             'expires_at', ARGV[1])
  redis.call('HDEL', h, 'ended_at')
end
return 1
"""
)

SCRIPTS = {
    text: Script(f"lease_{name}", text)
    for name, text in (
        ("acquire", ACQUIRE),
        ("renew", RENEW),
        ("release", RELEASE),
        ("record_error", RECORD_ERROR),
        ("claim", CLAIM),
        ("park", PARK),
        ("take_over", TAKE_OVER),
        ("unpark", UNPARK),
    )
}
S.BY_SHA.update({x.sha: x for x in SCRIPTS.values()})
