"""The Lua scripts of the Redis saver, as named constants (no I/O).

Each script touches the keys of ONE thread only (passed in KEYS, in
``_keys.THREAD_SUFFIXES`` order), so it is atomic and runs on Redis Cluster.
Everything runs on plain Redis >= 6.2 / Valkey: no modules, only ``cmsgpack``
(to read the refs Python packs with strings only) from the standard Lua
libraries Redis ships. The shared prelude is in ``_lua_common.py``, the
maintenance scripts (delete, prune, copy, rewrite) in ``_scripts_admin.py``;
this module names them all (``ALL``, ``BY_SHA``).
"""

from __future__ import annotations

from langgraph_durable.checkpointers.redis._lua_common import COMMON as _COMMON
from langgraph_durable.checkpointers.redis._lua_common import Script
from langgraph_durable.checkpointers.redis._scripts_admin import (
    DELETE_RUN,
    DELETE_THREAD,
    EXPORT,
    IMPORT,
    PRUNE_KEEP_LATEST,
    REWRITE,
    UNLOCK,
    UNREGISTER,
    VERSIONS,
    WAITS,
)

# ARGV: ns, cid ('' = latest), ttl, now, grace, field*: the blob fields whose
# chains not to send (the client holds their versions whole)
GET = Script(
    "get",
    _COMMON
    + r"""
local ns, cid = ARGV[1], ARGV[2]
if cid == '' then
  local top = redis.call('ZREVRANGEBYLEX', Z, '[' .. ns .. SEP .. HI, '[' .. ns .. SEP,
    'LIMIT', 0, 1)
  if #top == 0 then return false end
  cid = string.sub(top[1], #ns + 2)
end
local known = {}
for j = 6, #ARGV do known[ARGV[j]] = true end
local res = load(ns, cid, true, known)
if res then refresh(ARGV[3], ARGV[4], ARGV[5]) end
return res
""",
)

# ARGV: ns, cid, record, refs, ttl, now, grace, nblobs, (field, value)*nblobs,
# nrefs, (write member, tail length, tail sha1)*nrefs, member*
PUT = Script(
    "put",
    _COMMON
    + r"""
local ns, cid = ARGV[1], ARGV[2]
local f = ns .. SEP .. cid
local nb = tonumber(ARGV[8])
-- a delta is stored only with its base: if another client deleted
-- it since this saver cached it, write nothing; the saver retries whole
for j = 9, 8 + 2 * nb, 2 do
  local base = delta_link(ARGV[j + 1])
  if base and redis.call('HEXISTS', B, field_prefix(ARGV[j]) .. base) == 0 then
    return {'\255base-missing'}
  end
end
-- and with the pending writes it refers to, stored with the bytes it was cut
-- from (a retried task keeps its first write; the write may not have landed
-- yet): else write nothing; the saver retries with deltas that copy the items
local nr = tonumber(ARGV[9 + 2 * nb])
local at = 10 + 2 * nb
for j = at, at + 3 * nr - 1, 3 do
  local w = redis.call('HGET', W, ARGV[j])
  if not w or redis.sha1hex(string.sub(w, -tonumber(ARGV[j + 1]))) ~= ARGV[j + 2] then
    return {'\255writes-missing'}
  end
end
local old = redis.call('HGET', R, f)
local refs = ARGV[4]
-- the refs list the checkpoint's pending writes (layout step 6): those of the
-- same checkpoint stored again, and those stored before it (LangGraph sends a
-- step's writes and its checkpoint concurrently), which leave WI
local listed = {}
if old then
  local ot = cmsgpack.unpack(old)
  local xm = index_members(ot, f)
  if #xm > 0 then chunked('ZREM', X, xm) end
  if ot[7] then listed = ot[7] end
end
local early = lexrange(WI, f .. SEP)
if #listed > 0 or #early > 0 then
  local t = fill_refs(cmsgpack.unpack(refs))
  local have = {}
  for _, s in ipairs(listed) do have[s] = true end
  for _, m in ipairs(early) do
    local s = string.sub(m, #f + 2)
    if not have[s] then have[s] = true; listed[#listed + 1] = s end
  end
  t[7] = listed
  refs = cmsgpack.pack(t)
  if #early > 0 then chunked('ZREM', WI, early) end
end
redis.call('HSET', C, f, ARGV[3])
redis.call('HSET', R, f, refs)
redis.call('ZADD', Z, 0, f)
if ns ~= '' then redis.call('ZADD', ZA, 0, cid .. SEP .. ns) end
local i = 9
if nb > 0 then
  local pairs_ = {}
  for j = i, i + 2 * nb - 1 do pairs_[#pairs_ + 1] = ARGV[j] end
  chunked('HSET', B, pairs_)
  i = i + 2 * nb
end
i = i + 1 + 3 * nr
local zargs = {}
for j = i, #ARGV do zargs[#zargs + 1] = 0; zargs[#zargs + 1] = ARGV[j] end
if #zargs > 0 then chunked('ZADD', X, zargs) end
-- the thread moved past the waits of older checkpoints of this namespace
local gone = redis.call('ZRANGEBYLEX', WL, '[' .. ns .. SEP, '(' .. f)
drop_waits(gone)
refresh(ARGV[5], ARGV[6], ARGV[7])
return gone
""",
)

# KEYS: the thread's, then its outbox. ARGV: ttl, now, grace, nwrites, nreplace,
# (member, value, overwrite)*, replace prefix*, (field, entry, deadline, event id,
# event)*. A task that writes __interrupt__ again replaces its waits (a re-ask in
# the same task); returns the removed wait fields. A wait's event ('' when it has
# none) is stored first: if it cannot be, nothing is.
PUT_WRITES = Script(
    "put_writes",
    _COMMON
    + r"""
local nw, nr = tonumber(ARGV[4]), tonumber(ARGV[5])
local OB = KEYS[NTHREAD + 1]
for k = 6 + 3 * nw + nr, #ARGV, 5 do
  if ARGV[k + 3] ~= '' then redis.call('HSETNX', OB, ARGV[k + 3], ARGV[k + 4]) end
end
local i = 6
-- each write is listed in its checkpoint's refs (layout step 6), else in WI
local refs, dirty = {}, {}
for _ = 1, nw do
  local m, v = ARGV[i], ARGV[i + 1]
  if ARGV[i + 2] == '1' then
    redis.call('HSET', W, m, v)
  else
    redis.call('HSETNX', W, m, v)
  end
  local f, s = string.match(m, '^(.*)%z([^%z]*%z[^%z]*)$')
  local t = refs[f]
  if t == nil then
    local raw = redis.call('HGET', R, f)
    t = raw and fill_refs(cmsgpack.unpack(raw)) or false
    refs[f] = t
  end
  if t then
    t[7] = t[7] or {}
    local listed = false
    for _, x in ipairs(t[7]) do if x == s then listed = true; break end end
    if not listed then
      t[7][#t[7] + 1] = s
      if not dirty[f] then dirty[f] = true; dirty[#dirty + 1] = f end
    end
    -- a thread the layout step did not compact may still index it in WI:
    -- listed in both, every reader would return it twice
    redis.call('ZREM', WI, m)
  else
    redis.call('ZADD', WI, 0, m)
  end
  i = i + 3
end
for _, f in ipairs(dirty) do redis.call('HSET', R, f, cmsgpack.pack(refs[f])) end
local removed = {}
for _ = 1, nr do
  drop_waits(lexrange(WL, ARGV[i]), removed)
  i = i + 1
end
while i <= #ARGV do
  local fld, entry, dl = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  redis.call('HSET', WT, fld, entry)
  redis.call('ZADD', WL, 0, fld)
  if dl ~= '' then redis.call('ZADD', WD, dl, fld) end
  i = i + 5
end
refresh(ARGV[1], ARGV[2], ARGV[3])
return removed
""",
)

# ARGV: mode ('ns' | 'all'), ns, before ('' = none), limit (0 = none), prefix*
LIST = Script(
    "list",
    _COMMON
    + r"""
local mode, ns, before, limit = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local out = {}
local function add(n, c)
  local r = load(n, c, false)
  if r then out[#out + 1] = r end
end
-- filter prefixes: the indexed ones range over X, the others are checked on refs
local ix, chk = {}, {}
for k = 5, #ARGV do
  if indexed(ARGV[k]) then ix[#ix + 1] = ARGV[k] else chk[#chk + 1] = ARGV[k] end
end
if #ix == 0 then
  -- the checkpoint order itself, newest first (all of it when some filter is
  -- checked on refs: the limit counts matches)
  local lim = limit
  if #chk > 0 then lim = 0 end
  local found = {}
  if mode == 'ns' then
    local max = '[' .. ns .. SEP .. HI
    if before ~= '' then max = '(' .. ns .. SEP .. before end
    local ms
    if lim > 0 then
      ms = redis.call('ZREVRANGEBYLEX', Z, max, '[' .. ns .. SEP, 'LIMIT', 0, lim)
    else
      ms = redis.call('ZREVRANGEBYLEX', Z, max, '[' .. ns .. SEP)
    end
    for _, m in ipairs(ms) do found[#found + 1] = {string.sub(m, #ns + 2), ns} end
  else
    found = all_desc(before, lim)
  end
  -- refs read 16 per call
  local page = 1
  if #chk > 0 then page = 16 end
  for i = 1, #found, page do
    local last = math.min(i + page - 1, #found)
    local raws = {}
    if #chk > 0 then
      local fs = {}
      for j = i, last do fs[#fs + 1] = found[j][2] .. SEP .. found[j][1] end
      raws = redis.call('HMGET', R, unpack(fs))
    end
    for j = i, last do
      local e = found[j]
      if has_prefixes(e[2], e[1], chk, raws[j - i + 1]) then
        add(e[2], e[1])
        if limit > 0 and #out >= limit then return attach(out) end
      end
    end
  end
  return attach(out)
end
-- metadata filter: range over the first indexed key=value, check the other
-- indexed ones by ZSCORE, the rest on the checkpoint's refs
local p = ix[1]
local max = '[' .. p .. HI
if before ~= '' then max = '(' .. p .. before end
local offset, page = 0, 256
while true do
  local ms = redis.call('ZREVRANGEBYLEX', X, max, '[' .. p, 'LIMIT', offset, page)
  local cands, fs = {}, {}
  for _, m in ipairs(ms) do
    local rest = string.sub(m, #p + 1)
    local c, n = split2(rest)
    if mode ~= 'ns' or n == ns then
      local ok = true
      for k = 2, #ix do
        if not redis.call('ZSCORE', X, ix[k] .. rest) then ok = false; break end
      end
      if ok then cands[#cands + 1] = {c, n}; fs[#fs + 1] = n .. SEP .. c end
    end
  end
  -- the candidates' refs 16 per call when some filter is checked on them
  for i = 1, #cands, 16 do
    local last = math.min(i + 15, #cands)
    local raws = {}
    if #chk > 0 then raws = redis.call('HMGET', R, unpack(fs, i, last)) end
    for j = i, last do
      local e = cands[j]
      if has_prefixes(e[2], e[1], chk, raws[j - i + 1]) then
        add(e[2], e[1])
        if limit > 0 and #out >= limit then return attach(out) end
      end
    end
  end
  if #ms < page then break end
  offset = offset + page
end
return attach(out)
""",
)

# ARGV: ns, cid ('' = latest), channel*
DELTA = Script(
    "delta_history",
    _COMMON
    + r"""
local ns, cid = ARGV[1], ARGV[2]
if cid == '' then
  local top = redis.call('ZREVRANGEBYLEX', Z, '[' .. ns .. SEP .. HI, '[' .. ns .. SEP,
    'LIMIT', 0, 1)
  if #top == 0 then return {} end
  cid = string.sub(top[1], #ns + 2)
end
local refs = redis.call('HGET', R, ns .. SEP .. cid)
if not refs then return {} end
local remaining, left = {}, 0
for k = 3, #ARGV do
  if not remaining[ARGV[k]] then remaining[ARGV[k]] = true; left = left + 1 end
end
local cur = cmsgpack.unpack(refs)[1]
local out = {}
while cur ~= '' and left > 0 do
  local pf = ns .. SEP .. cur
  local pr = redis.call('HGET', R, pf)
  if not pr then break end
  local t = cmsgpack.unpack(pr)
  local picked = {}
  local wm = write_members(pf, t)
  if #wm > 0 then
    for _, v in ipairs(hmget(W, wm)) do
      if v then
        local a = string.find(v, SEP, 1, true)
        local b = string.find(v, SEP, a + 1, true)
        local e = string.find(v, SEP, b + 1, true)
        if remaining[string.sub(v, b + 1, e - 1)] then picked[#picked + 1] = v end
      end
    end
  end
  local seeds = {}
  for _, ch in ipairs(t[4]) do
    if remaining[ch] then seeds[#seeds + 1] = ch end
  end
  local node = false
  if #seeds > 0 then node = load(ns, cur, true) end
  out[#out + 1] = {cur, picked, seeds, node}
  for _, ch in ipairs(seeds) do remaining[ch] = nil; left = left - 1 end
  cur = t[1]
end
return out
""",
)

# ARGV: field*. The chains of the deltas stored at those fields, as
# field/value pairs: what list reads after its HMGET of the listed values.
CHAIN = Script(
    "chain",
    _COMMON
    + r"""
local fields = {}
for i = 1, #ARGV do fields[i] = ARGV[i] end
return chains(fields, hmget(B, fields))
""",
)

ALL = (
    GET,
    PUT,
    PUT_WRITES,
    LIST,
    DELTA,
    DELETE_THREAD,
    DELETE_RUN,
    PRUNE_KEEP_LATEST,
    EXPORT,
    IMPORT,
    WAITS,
    UNLOCK,
    VERSIONS,
    REWRITE,
    CHAIN,
    UNREGISTER,
)
BY_SHA = {s.sha: s for s in ALL}

__all__ = [
    "ALL",
    "BY_SHA",
    "CHAIN",
    "DELETE_RUN",
    "DELETE_THREAD",
    "DELTA",
    "EXPORT",
    "GET",
    "IMPORT",
    "LIST",
    "PRUNE_KEEP_LATEST",
    "PUT",
    "PUT_WRITES",
    "REWRITE",
    "UNLOCK",
    "UNREGISTER",
    "VERSIONS",
    "WAITS",
    "Script",
]
