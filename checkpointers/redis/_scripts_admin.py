"""The Lua scripts that delete, prune, copy, re-register and rewrite a Redis thread.

Read and write paths live in ``_scripts.py``; these run on operators' and
LangGraph's maintenance calls. Each touches the keys of one thread only.
"""

from __future__ import annotations

from langgraph_durable.checkpointers.redis._lua_common import COMMON as _COMMON
from langgraph_durable.checkpointers.redis._lua_common import Script

# ARGV: none. Returns the removed wait fields.
DELETE_THREAD = Script(
    "delete_thread",
    _COMMON
    + r"""
local fields = redis.call('HKEYS', WT)
redis.call('DEL', unpack(KEYS))
return fields
""",
)

# ARGV: index prefix of run_id=<run>. Returns the removed wait fields.
DELETE_RUN = Script(
    "delete_run",
    _COMMON
    + r"""
local p = ARGV[1]
local targets = {}
for _, m in ipairs(lexrange(X, p)) do
  local c, n = split2(string.sub(m, #p + 1))
  targets[#targets + 1] = n .. SEP .. c
end
local removed, cand, wcand = {}, {}, {}
for _, f in ipairs(targets) do
  for _, fld in ipairs(del_checkpoint(f, removed, wcand)) do cand[#cand + 1] = fld end
end
gc(cand, wcand)
return removed
""",
)

# ARGV: none. Keeps each namespace's latest checkpoint and, for DeltaChannel
# threads, its ancestors back to the nearest one where every delta channel
# is populated (the seed the channel is rebuilt from) with their writes.
PRUNE_KEEP_LATEST = Script(
    "prune_keep_latest",
    _COMMON
    + r"""
local all = redis.call('ZRANGE', Z, 0, -1)
local heads, order = {}, {}
for _, m in ipairs(all) do
  local n = split2(m)
  if not heads[n] then order[#order + 1] = n end
  heads[n] = m
end
local keep = {}
for _, n in ipairs(order) do
  local head = heads[n]
  keep[head] = true
  local t = cmsgpack.unpack(redis.call('HGET', R, head))
  local need, left = {}, 0
  for _, ch in ipairs(t[5]) do need[ch] = true; left = left + 1 end
  for _, ch in ipairs(t[4]) do if need[ch] then need[ch] = nil; left = left - 1 end end
  local cur = t[1]
  while left > 0 and cur ~= '' do
    local pf = n .. SEP .. cur
    local pr = redis.call('HGET', R, pf)
    if not pr then break end
    keep[pf] = true
    local pt = cmsgpack.unpack(pr)
    for _, ch in ipairs(pt[4]) do if need[ch] then need[ch] = nil; left = left - 1 end end
    cur = pt[1]
  end
end
local removed, cand, wcand = {}, {}, {}
for _, m in ipairs(all) do
  if not keep[m] then
    for _, fld in ipairs(del_checkpoint(m, removed, wcand)) do cand[#cand + 1] = fld end
  end
end
gc(cand, wcand)
-- a kept checkpoint whose parent is gone is left with no parent
for m in pairs(keep) do
  local refs = redis.call('HGET', R, m)
  local t = cmsgpack.unpack(refs)
  if t[1] ~= '' then
    local n = split2(m)
    if redis.call('HEXISTS', C, n .. SEP .. t[1]) == 0 then
      t[1] = ''
      redis.call('HSET', R, m, cmsgpack.pack(t))
    end
  end
end
return removed
""",
)

# ARGV: none. Everything of the thread, for copy_thread: its checkpoints,
# values, writes and waits, and its decisions, claims and activity results.
EXPORT = Script(
    "export",
    _COMMON
    + r"""
return {
  redis.call('HGETALL', C), redis.call('HGETALL', R), redis.call('HGETALL', B),
  redis.call('HGETALL', W), redis.call('ZRANGE', Z, 0, -1), redis.call('ZRANGE', ZA, 0, -1),
  redis.call('ZRANGE', X, 0, -1), redis.call('ZRANGE', WI, 0, -1),
  redis.call('HGETALL', WT), redis.call('ZRANGE', WL, 0, -1),
  redis.call('ZRANGE', WD, 0, -1, 'WITHSCORES'),
  redis.call('HGETALL', KEYS[12]), redis.call('HGETALL', KEYS[13]),
  redis.call('HGETALL', KEYS[14]),
}
""",
)

# ARGV: ttl, now, grace, then 14 counts (EXPORT's groups, in its order), then the
# items. Decisions, claims and activity results already on the target win
# (HSETNX: first writer wins, as when they are recorded).
IMPORT = Script(
    "import",
    _COMMON
    + r"""
local order = {C, R, B, W, Z, ZA, X, WI, WT, WL, WD, KEYS[12], KEYS[13], KEYS[14]}
local kinds = {'h', 'h', 'h', 'h', 'z', 'z', 'z', 'z', 'h', 'z', 's', 'n', 'n', 'n'}
local i = 4 + #order
for k = 1, #order do
  local n = tonumber(ARGV[3 + k])
  if n > 0 then
    local items = {}
    if kinds[k] == 'z' then
      for j = i, i + n - 1 do items[#items + 1] = 0; items[#items + 1] = ARGV[j] end
    elseif kinds[k] == 's' then
      -- WITHSCORES order is member, score; ZADD wants score, member
      for j = i, i + n - 1, 2 do items[#items + 1] = ARGV[j + 1]; items[#items + 1] = ARGV[j] end
    else
      for j = i, i + n - 1 do items[#items + 1] = ARGV[j] end
    end
    if kinds[k] == 'n' then
      for j = 1, #items, 2 do redis.call('HSETNX', order[k], items[j], items[j + 1]) end
    elseif kinds[k] == 'h' then
      chunked('HSET', order[k], items)
    else
      chunked('ZADD', order[k], items)
    end
  end
  i = i + n
end
refresh(ARGV[1], ARGV[2], ARGV[3])
return 1
""",
)

# ARGV: field*. The thread's indexed waits (all when no field is given).
WAITS = Script(
    "waits",
    _COMMON
    + r"""
if #ARGV == 0 then return redis.call('HGETALL', WT) end
local vals = hmget(WT, ARGV)
local out = {}
for k = 1, #ARGV do
  if vals[k] then out[#out + 1] = ARGV[k]; out[#out + 1] = vals[k] end
end
return out
""",
)

# KEYS: a registry shard, its expiry hints. ARGV: checked_at (ms), thread id*.
# Drops the threads a reader found gone (their keys expired) unless a writer
# registered them again since (its hint is then later than checked_at);
# returns the dropped ones.
UNREGISTER = Script(
    "unregister",
    r"""
local checked, out = tonumber(ARGV[1]), {}
for k = 2, #ARGV do
  local s = redis.call('ZSCORE', KEYS[2], ARGV[k])
  if s and tonumber(s) <= checked then
    redis.call('SREM', KEYS[1], ARGV[k])
    redis.call('ZREM', KEYS[2], ARGV[k])
    out[#out + 1] = ARGV[k]
  end
end
return out
""",
)

# KEYS: lock key. ARGV: token. Releases the layout lock if still ours.
UNLOCK = Script(
    "unlock",
    r"""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
""",
)

# Schema versions of a thread (migrations): per checkpoint its field and record
# (Python reads the version: Lua's cmsgpack cannot unpack the record's binary
# fields), and whether the latest root checkpoint has a pending interrupt.
# Returns {paused (0/1), field1, record1, field2, record2, ...}.
VERSIONS = Script(
    "versions",
    _COMMON
    + r"""
local out = {0}
local top = redis.call('ZREVRANGEBYLEX', Z, '[' .. SEP .. HI, '[' .. SEP, 'LIMIT', 0, 1)
if top[1] then
  local tr = redis.call('HGET', R, top[1])
  local wm = write_members(top[1], tr and cmsgpack.unpack(tr))
  if #wm > 0 then
    for _, v in ipairs(hmget(W, wm)) do
      if v and string.find(v, SEP .. '__interrupt__' .. SEP, 1, true) then out[1] = 1 end
    end
  end
end
for _, v in ipairs(redis.call('HGETALL', C)) do out[#out + 1] = v end
return out
""",
)

# Rewrite one checkpoint with its upgraded form (migrations), only if its record
# is still the one the upgrade was computed from (compare-and-set: a checkpoint
# another worker or a put changed meanwhile is left alone and 0 is returned).
# ARGV: ns, cid, old record, record, refs, ttl, now, grace, nb, nb blob pairs,
#       nm, nm index members, replace writes ('0'/'1'), [nk, nk members to keep,]
#       nw, nw (member, value), then (field, entry, deadline) of each indexed wait.
# A replaced write that a delta refers to is kept in W, out of WI:
# no longer a pending write of the checkpoint, still there for the delta.
# Returns {1, removed wait fields...} or 0.
REWRITE = Script(
    "rewrite",
    _COMMON
    + r"""
local ns, cid = ARGV[1], ARGV[2]
local f = ns .. SEP .. cid
if redis.call('HGET', C, f) ~= ARGV[3] then return 0 end
local old = redis.call('HGET', R, f)
local ot = old and cmsgpack.unpack(old)
if ot then
  local xm = index_members(ot, f)
  if #xm > 0 then chunked('ZREM', X, xm) end
end
-- the new refs list the pending writes (layout step 6): the old ones, or the
-- replacing ones below
local nt = fill_refs(cmsgpack.unpack(ARGV[5]))
nt[7] = {}
redis.call('HSET', C, f, ARGV[4])
local i = 10
local nb = tonumber(ARGV[9])
if nb > 0 then
  local pairs_ = {}
  for j = i, i + 2 * nb - 1 do pairs_[#pairs_ + 1] = ARGV[j] end
  chunked('HSET', B, pairs_)
  i = i + 2 * nb
end
local nm = tonumber(ARGV[i])
i = i + 1
if nm > 0 then
  local zargs = {}
  for j = i, i + nm - 1 do zargs[#zargs + 1] = 0; zargs[#zargs + 1] = ARGV[j] end
  chunked('ZADD', X, zargs)
  i = i + nm
end
local out = {1}
if ARGV[i] == '1' then
  local nk = tonumber(ARGV[i + 1])
  local keep = {}
  for j = i + 2, i + 1 + nk do keep[ARGV[j]] = true end
  i = i + 1 + nk
  local wm = write_members(f, ot)
  local drop = {}
  for _, m in ipairs(wm) do if not keep[m] then drop[#drop + 1] = m end end
  if #drop > 0 then chunked('HDEL', W, drop) end
  if #wm > 0 then chunked('ZREM', WI, wm) end
  drop_waits(lexrange(WL, f .. SEP), out)
  local nw = tonumber(ARGV[i + 1])
  i = i + 2
  for _ = 1, nw do
    redis.call('HSET', W, ARGV[i], ARGV[i + 1])
    nt[7][#nt[7] + 1] = string.sub(ARGV[i], #f + 2)
    i = i + 2
  end
  while i <= #ARGV do
    local fld, entry, dl = ARGV[i], ARGV[i + 1], ARGV[i + 2]
    redis.call('HSET', WT, fld, entry)
    redis.call('ZADD', WL, 0, fld)
    if dl ~= '' then redis.call('ZADD', WD, dl, fld) end
    i = i + 3
  end
elseif ot and ot[7] then
  nt[7] = ot[7]
end
redis.call('HSET', R, f, cmsgpack.pack(nt))
refresh(ARGV[6], ARGV[7], ARGV[8])
return out
""",
)
