"""The Lua scripts of the Redis saver, as named constants (no I/O).

Each script touches the keys of ONE thread only (passed in KEYS, in
``_keys.THREAD_SUFFIXES`` order), so it is atomic and runs on Redis Cluster.
Everything runs on plain Redis >= 6.2 / Valkey: no modules, only ``cmsgpack``
(to read the refs Python packs with strings only) from the standard Lua
libraries Redis ships.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from checkpointers.redis._delta_lua import DELTA_LUA


@dataclass(frozen=True)
class Script:
    """A Lua script, called by SHA1 (EVALSHA) with EVAL as the NOSCRIPT fallback."""

    name: str
    source: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.source.encode()).hexdigest())


_COMMON = (
    r"""
local Z, ZA, C, R, B, X = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local W, WI, WT, WL, WD = KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11]
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
  for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ms) end
end

-- the pending-write members of checkpoint f (ns\0cid) with unpacked refs t:
-- since layout step 6 its refs list them (t[7], suffixes task\0idx), saving
-- the write index WI an entry per write; WI still holds those of older
-- threads and of writes whose checkpoint had no refs yet
local function write_members(f, t)
  local out = lexrange(WI, f .. SEP)
  if t and t[7] then
    for _, s in ipairs(t[7]) do out[#out + 1] = f .. SEP .. s end
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
      -- deltas' chains (issue 12), each link once per reply: the entries of
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
  local wl = lexrange(WL, f .. SEP)
  if #wl > 0 then
    chunked('HDEL', WT, wl); chunked('ZREM', WL, wl); chunked('ZREM', WD, wl)
    for _, m in ipairs(wl) do removed[#removed + 1] = m end
  end
  return fields
end

"""
)

# ARGV: ns, cid ('' = latest), ttl, now, grace, field*: the blob fields whose
# chains not to send (the client holds their versions whole, issue 3)
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
-- a delta is stored only with its base (issue 12): if another client deleted
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
if #gone > 0 then
  chunked('HDEL', WT, gone); chunked('ZREM', WL, gone); chunked('ZREM', WD, gone)
end
refresh(ARGV[5], ARGV[6], ARGV[7])
return gone
""",
)

# ARGV: ttl, now, grace, nwrites, nreplace, (member, value, overwrite)*, replace prefix*,
# (field, entry, deadline)*. A task that writes __interrupt__ again replaces its
# waits (a re-ask in the same task); returns the removed wait fields.
PUT_WRITES = Script(
    "put_writes",
    _COMMON
    + r"""
local nw, nr = tonumber(ARGV[4]), tonumber(ARGV[5])
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
  else
    redis.call('ZADD', WI, 0, m)
  end
  i = i + 3
end
for _, f in ipairs(dirty) do redis.call('HSET', R, f, cmsgpack.pack(refs[f])) end
local removed = {}
for _ = 1, nr do
  local gone = lexrange(WL, ARGV[i])
  if #gone > 0 then
    chunked('HDEL', WT, gone); chunked('ZREM', WL, gone); chunked('ZREM', WD, gone)
    for _, m in ipairs(gone) do removed[#removed + 1] = m end
  end
  i = i + 1
end
while i <= #ARGV do
  local fld, entry, dl = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  redis.call('HSET', WT, fld, entry)
  redis.call('ZADD', WL, 0, fld)
  if dl ~= '' then redis.call('ZADD', WD, dl, fld) end
  i = i + 3
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
# A replaced write that a delta refers to (issue 12) is kept in W, out of WI:
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
  local wl = lexrange(WL, f .. SEP)
  if #wl > 0 then
    chunked('HDEL', WT, wl); chunked('ZREM', WL, wl); chunked('ZREM', WD, wl)
    for _, m in ipairs(wl) do out[#out + 1] = m end
  end
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

# ARGV: field*. The chains of the deltas stored at those fields (issue 12), as
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
    GET, PUT, PUT_WRITES, LIST, DELTA, DELETE_THREAD, DELETE_RUN, PRUNE_KEEP_LATEST,
    EXPORT, IMPORT, WAITS, UNLOCK, VERSIONS, REWRITE, CHAIN, UNREGISTER,
)
BY_SHA = {s.sha: s for s in ALL}
