"""What every Lua script of the Redis saver starts with (no I/O).

:class:`Script` names a script and its SHA1; ``COMMON`` is the prelude of key
names and helper functions (chunked calls, refs, chains, deletion of a
checkpoint with its values and writes) the thread scripts share.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from langgraph_durable.checkpointers.redis._delta_lua import DELTA_LUA
from langgraph_durable.checkpointers.redis._keys import THREAD_SUFFIXES


@dataclass(frozen=True)
class Script:
    """A Lua script, called by SHA1 (EVALSHA) with EVAL as the NOSCRIPT fallback."""

    name: str
    source: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.source.encode()).hexdigest())


COMMON = (
    r"""
local Z, ZA, C, R, B, X = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local W, WI, WT, WL, WD = KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]
local NTHREAD = NTHREAD_KEYS
local SEP = '\0'
local HI = '\255'

-- redis.call with at most 500 list items per call (Lua's C stack is small)
local function chunked(cmd, key, list)
  for i = 1, #list, 500 do
    redis.call(cmd, key, unpack(list, i, math.min(i + 499, #list)))
  end
end

local function hmget(key, fields)
  local out = {}
  for i = 1, #fields, 500 do
    local part = redis.call('HMGET', key, unpack(fields, i, math.min(i + 499, #fields)))
    for j = 1, #part do out[#out + 1] = part[j] end
  end
  return out
end

local function lexrange(key, p)
  return redis.call('ZRANGEBYLEX', key, '[' .. p, '[' .. p .. HI)
end

-- TTL: idle keys expire after ttl ms; a pending wait with a deadline keeps the
-- thread until deadline + grace (inactive is not done).
local function refresh(ttl, now, grace)
  ttl = tonumber(ttl)
  if ttl <= 0 then return end
  local keep = ttl
  local top = redis.call('ZREVRANGE', WD, 0, 0, 'WITHSCORES')
  if top[2] then
    local hold = tonumber(top[2]) + tonumber(grace) - tonumber(now)
    if hold > keep then keep = hold end
  end
  local ms = string.format('%d', math.floor(keep))
  -- the thread's own keys only: a script may take keys that outlive the
  -- thread (its notification outbox) after them
  for i = 1, math.min(#KEYS, NTHREAD) do redis.call('PEXPIRE', KEYS[i], ms) end
end

-- the pending-write members of checkpoint f (ns\0cid) with unpacked refs t:
-- since layout step 6 its refs list them (t[7], suffixes task\0idx), saving
-- the write index WI an entry per write; WI still holds those of older
-- threads and of writes whose checkpoint had no refs yet
local function write_members(f, t)
  local out = lexrange(WI, f .. SEP)
  if t and t[7] then
    -- once each, should a write be in both (a thread stored before layout step 6)
    local seen = {}
    for _, m in ipairs(out) do seen[m] = true end
    for _, s in ipairs(t[7]) do
      local m = f .. SEP .. s
      if not seen[m] then seen[m] = true; out[#out + 1] = m end
    end
  end
  return out
end

-- unpacked refs ready to be packed again: a hole before t[7] would make
-- cmsgpack pack a map, which Python would not read as a list
local function fill_refs(t)
  t[3] = t[3] or {}; t[4] = t[4] or {}; t[5] = t[5] or {}; t[6] = t[6] or 0
  return t
end

"""
    + DELTA_LUA
    + r"""
-- one checkpoint: {ns, cid, record, refs, blob values, write values, chains}; without
-- blobs (list) the shell reads them with one HMGET instead: large values
-- copied through Lua strings cost more than a second round trip
local function load(ns, cid, with_blobs, known)
  local f = ns .. SEP .. cid
  local rec = redis.call('HGET', C, f)
  if not rec then return false end
  local refs = redis.call('HGET', R, f)
  local t = refs and cmsgpack.unpack(refs)
  local blobs, chain = {}, {}
  if t and with_blobs then
    local fields = t[2]
    if #fields > 0 then
      blobs = hmget(B, fields)
      chain = chains(fields, blobs, nil, known)
    end
  end
  local wm = write_members(f, t)
  local wv = {}
  if #wm > 0 then wv = hmget(W, wm) end
  return {ns, cid, rec, refs or false, blobs, wv, chain}
end

-- attach blob values to listed checkpoints when they are small (one round trip);
-- large ones are left to one HMGET by the shell (cheaper than copying through Lua)
local INLINE_LIMIT = 262144
local function attach(out)
  local total, lists, seen = 0, {}, {}
  for i, e in ipairs(out) do
    if e[4] then
      local fields = cmsgpack.unpack(e[4])[2]
      lists[i] = fields
      for _, fld in ipairs(fields) do
        total = total + redis.call('HSTRLEN', B, fld)
        if total > INLINE_LIMIT then return out end
      end
    end
  end
  for i, e in ipairs(out) do
    if lists[i] and #lists[i] > 0 then
      e[5] = hmget(B, lists[i])
      -- deltas' chains, each link once per reply: the entries of
      -- a history share most of theirs (the reader merges them)
      e[7] = chains(lists[i], e[5], seen)
    end
  end
  return out
end

local function split2(s)
  local i = string.find(s, SEP, 1, true)
  return string.sub(s, 1, i - 1), string.sub(s, i + 1)
end

-- the metadata-index members of a checkpoint (f = ns\0cid) from its unpacked
-- refs t: since layout step 5 they hold the members' key\0value\0 prefixes
-- only (t[6] = 1), the checkpoint's cid\0ns being known
local function index_members(t, f)
  if t[6] ~= 1 then return t[3] end
  local ns, cid = split2(f)
  local out = {}
  for k, p in ipairs(t[3]) do out[k] = p .. cid .. SEP .. ns end
  return out
end

-- since layout step 6 the metadata index X leaves out the step (unique per
-- checkpoint, an entry each for little use): a filter on it is checked
-- against the checkpoint's refs, which keep every prefix
local STEP = '"step"' .. SEP
local function indexed(p) return string.sub(p, 1, #STEP) ~= STEP end
local function has_prefixes(n, c, ps, refs)
  if #ps == 0 then return true end
  local f = n .. SEP .. c
  if refs == nil then refs = redis.call('HGET', R, f) end
  if not refs then return false end
  -- the refs hold each prefix verbatim (alone or in a whole member): most
  -- checkpoints fail this, without unpacking
  for _, p in ipairs(ps) do
    if not string.find(refs, p, 1, true) then return false end
  end
  local set = {}
  for _, m in ipairs(index_members(cmsgpack.unpack(refs), f)) do set[m] = true end
  for _, p in ipairs(ps) do
    if not set[p .. c .. SEP .. n] then return false end
  end
  return true
end

-- (cid, ns) of the thread's checkpoints, newest first: since layout step 6 ZA
-- holds those of subgraph namespaces only, the root's are Z's \0cid range
-- (members of both kept by an older layout are counted once)
local function all_desc(before, limit)
  local amax, zmax = '+', '[' .. SEP .. HI
  if before ~= '' then amax = '(' .. before; zmax = '(' .. SEP .. before end
  local a, z
  if limit > 0 then
    a = redis.call('ZREVRANGEBYLEX', ZA, amax, '-', 'LIMIT', 0, limit)
    z = redis.call('ZREVRANGEBYLEX', Z, zmax, '[' .. SEP, 'LIMIT', 0, limit)
  else
    a = redis.call('ZREVRANGEBYLEX', ZA, amax, '-')
    z = redis.call('ZREVRANGEBYLEX', Z, zmax, '[' .. SEP)
  end
  local keys, seen = {}, {}
  for _, m in ipairs(a) do
    if not seen[m] then seen[m] = true; keys[#keys + 1] = m end
  end
  for _, m in ipairs(z) do
    local k = string.sub(m, 2) .. SEP
    if not seen[k] then seen[k] = true; keys[#keys + 1] = k end
  end
  table.sort(keys, function(x, y) return x > y end)
  local out = {}
  for i, k in ipairs(keys) do
    if limit > 0 and i > limit then break end
    local c, n = split2(k)
    out[#out + 1] = {c, n}
  end
  return out
end

-- remove the wait entries ``wl`` (fields of WT) from the wait hash and both
-- wait indexes, appending them to ``into`` (what the caller reports removed)
local function drop_waits(wl, into)
  if #wl > 0 then
    chunked('HDEL', WT, wl); chunked('ZREM', WL, wl); chunked('ZREM', WD, wl)
    if into then for _, m in ipairs(wl) do into[#into + 1] = m end end
  end
end

-- delete one checkpoint (f = ns\0cid) with its waits; returns the blob fields
-- it referenced (garbage candidates), appends removed waits, and appends its
-- writes to wcand (a kept delta may refer to them: gc decides)
local function del_checkpoint(f, removed, wcand)
  local refs = redis.call('HGET', R, f)
  local fields = {}
  local t = refs and cmsgpack.unpack(refs)
  if t then
    fields = t[2]
    local xm = index_members(t, f)
    if #xm > 0 then chunked('ZREM', X, xm) end
  end
  local ns, cid = split2(f)
  redis.call('HDEL', C, f)
  redis.call('HDEL', R, f)
  redis.call('ZREM', Z, f)
  redis.call('ZREM', ZA, cid .. SEP .. ns)
  local wm = write_members(f, t)
  for _, m in ipairs(wm) do wcand[#wcand + 1] = m end
  if #wm > 0 then chunked('ZREM', WI, wm) end
  drop_waits(lexrange(WL, f .. SEP), removed)
  return fields
end

"""
).replace("NTHREAD_KEYS", str(len(THREAD_SUFFIXES)))
