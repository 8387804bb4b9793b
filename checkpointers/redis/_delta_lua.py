"""The Lua side of delta-stored channel values, part of every script's prelude.

A channel value that extends a stored version is kept in the thread's value
hash as a delta; its *chain* is the versions it builds on, down to a whole
value, in the same hash, namespace and channel. Two stored forms:

* ``delta\\0<base version>\\0<blob>`` (layout steps 1-4): the base is spelled
  out for Lua; the blob copies the new items.
* ``delta2\\0<blob>`` (layout step 5): the blob of :mod:`langgraph_durable.checkpointers._delta`
  as is (1 format byte, 4-byte length of the msgpack meta, the meta, the
  tail). Lua reads the base, and for format 2 the pending writes the delta
  refers to, from the meta with the small msgpack reader below (``cmsgpack``
  refuses msgpack's bin type). Referenced writes live in the thread's write
  hash under ``ns\\0<writes_of>\\0<task>\\0<idx>``.

Reads return the chain as field/value pairs; a referenced write comes as
``WREF .. <write member>`` with the stored write (see ``Codec``).
"""

from __future__ import annotations

WREF = "\x00\x00\x00"
"""Prefix of a referenced write among a reply's chain pairs (no value field starts so)."""

DELTA_LUA = r"""
local DELTA = 'delta' .. SEP
local DELTA2 = 'delta2' .. SEP
local WREF = SEP .. SEP .. SEP

local function field_prefix(f)
  local last, pos = 0, 1
  while true do
    local i = string.find(f, SEP, pos, true)
    if not i then break end
    last, pos = i, i + 1
  end
  return string.sub(f, 1, last)
end

local function be_int(s, i, n)
  local v = 0
  for k = i, i + n - 1 do v = v * 256 + string.byte(s, k) end
  return v
end

-- one msgpack object of s at i: value, next index (the types the delta meta uses)
local function mp(s, i)
  local b = string.byte(s, i)
  if not b then error('delta meta: truncated') end
  if b < 0x80 then return b, i + 1 end
  if b >= 0xe0 then return b - 256, i + 1 end
  local n, a
  if b >= 0xa0 and b <= 0xbf then n, a = b - 0xa0, i + 1
  elseif b == 0xd9 or b == 0xc4 then n, a = be_int(s, i + 1, 1), i + 2
  elseif b == 0xda or b == 0xc5 then n, a = be_int(s, i + 1, 2), i + 3
  elseif b == 0xdb or b == 0xc6 then n, a = be_int(s, i + 1, 4), i + 5
  end
  if a then return string.sub(s, a, a + n - 1), a + n end
  if b >= 0x90 and b <= 0x9f then n, a = b - 0x90, i + 1
  elseif b == 0xdc then n, a = be_int(s, i + 1, 2), i + 3
  elseif b == 0xdd then n, a = be_int(s, i + 1, 4), i + 5
  end
  if a then
    local t = {}
    for k = 1, n do t[k], a = mp(s, a) end
    return t, a
  end
  if b == 0xc0 or b == 0xc2 then return false, i + 1 end
  if b == 0xc3 then return true, i + 1 end
  if b == 0xcc or b == 0xd0 then return be_int(s, i + 1, 1), i + 2 end
  if b == 0xcd or b == 0xd1 then return be_int(s, i + 1, 2), i + 3 end
  if b == 0xce or b == 0xd2 then return be_int(s, i + 1, 4), i + 5 end
  if b == 0xcf or b == 0xd3 then return be_int(s, i + 1, 8), i + 9 end
  error('delta meta: unexpected msgpack byte ' .. b)
end

-- the version a stored value extends (nil for a whole value) and, for a delta
-- that refers to pending writes, the checkpoint they belong to and its segments
local function delta_link(v)
  if string.sub(v, 1, 6) == DELTA then
    return string.sub(v, 7, string.find(v, SEP, 7, true) - 1)
  end
  if string.sub(v, 1, 7) ~= DELTA2 then return nil end
  local meta = mp(v, 13)
  if string.byte(v, 8) == 2 then return meta[1], meta[6], meta[7] end
  return meta[1]
end

-- the write members a delta refers to (f: its field ns\0channel\0version)
local function ref_members(f, wof, segs)
  local out = {}
  if not wof then return out end
  local ns = string.sub(f, 1, string.find(f, SEP, 1, true) - 1)
  for _, g in ipairs(segs) do
    if type(g) == 'table' then
      out[#out + 1] = ns .. SEP .. wof .. SEP .. g[1] .. SEP .. string.format('%d', g[2])
    end
  end
  return out
end

-- field/value pairs of the chains of the deltas among (fields, values), with
-- the writes they refer to; links in seen (shared by the entries of one
-- listing) are not sent again, nor the chains of the fields in known (the
-- client holds those versions whole and checks the delta against them)
local function chains(fields, values, seen, known)
  local out = {}
  seen = seen or {}
  for i = 1, #fields do
    local f, v = fields[i], values[i]
    if known and known[f] then v = nil end
    while v do
      local base, wof, segs = delta_link(v)
      if not base then break end
      for _, m in ipairs(ref_members(f, wof, segs)) do
        if not seen[WREF .. m] then
          seen[WREF .. m] = true
          local w = redis.call('HGET', W, m)
          if w then out[#out + 1] = WREF .. m; out[#out + 1] = w end
        end
      end
      f = field_prefix(f) .. base
      if seen[f] then break end
      seen[f] = true
      v = redis.call('HGET', B, f)
      if v then out[#out + 1] = f; out[#out + 1] = v end
    end
  end
  return out
end

-- drop the values among candidates that no remaining checkpoint needs (kept
-- deltas need their bases), then the writes among wcand that no kept delta
-- refers to; a dropped delta's writes whose checkpoint is gone are candidates
local function gc(candidates, wcand)
  if #candidates == 0 and #wcand == 0 then return end
  local used, wused = {}, {}
  for _, refs in ipairs(redis.call('HVALS', R)) do
    for _, fld in ipairs(cmsgpack.unpack(refs)[2]) do used[fld] = true end
  end
  local walk = {}
  for fld in pairs(used) do walk[#walk + 1] = fld end
  for _, fld in ipairs(walk) do
    local f, v = fld, redis.call('HGET', B, fld)
    while v do
      local base, wof, segs = delta_link(v)
      if not base then break end
      for _, m in ipairs(ref_members(f, wof, segs)) do wused[m] = true end
      f = field_prefix(f) .. base
      if used[f] then break end
      used[f] = true
      v = redis.call('HGET', B, f)
    end
  end
  local drop = {}
  local k = 1
  while k <= #candidates do
    local fld = candidates[k]
    k = k + 1
    if not used[fld] then
      used[fld] = true
      drop[#drop + 1] = fld
      local v = redis.call('HGET', B, fld)
      if v then
        local base, wof, segs = delta_link(v)
        -- its base too: kept for it alone so far, it may be needed no more
        if base then candidates[#candidates + 1] = field_prefix(fld) .. base end
        if wof then
          -- writes kept for it alone: of a gone checkpoint, or replaced by an upgrade
          local ns = string.sub(fld, 1, string.find(fld, SEP, 1, true) - 1)
          local wf = ns .. SEP .. wof
          local pending = {}
          if redis.call('HEXISTS', C, wf) == 1 then
            local pr = redis.call('HGET', R, wf)
            for _, m in ipairs(write_members(wf, pr and cmsgpack.unpack(pr))) do
              pending[m] = true
            end
          end
          for _, m in ipairs(ref_members(fld, wof, segs)) do
            if not pending[m] then wcand[#wcand + 1] = m end
          end
        end
      end
    end
  end
  if #drop > 0 then chunked('HDEL', B, drop) end
  local wdrop = {}
  for _, m in ipairs(wcand) do
    if not wused[m] then wused[m] = true; wdrop[#wdrop + 1] = m end
  end
  if #wdrop > 0 then chunked('HDEL', W, wdrop); chunked('ZREM', WI, wdrop) end
end
"""
