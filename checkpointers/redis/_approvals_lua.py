"""Lua scripts of the approvals fast path on Redis (one thread's slot each)."""

from __future__ import annotations

from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._audit_lua import AUDIT_TYPES, CHAIN_ADD
from langgraph_durable.checkpointers.redis._lua_common import COMMON as _COMMON
from langgraph_durable.checkpointers.redis._lua_common import Script

# The approvals keys follow the saver's 11 thread keys (THREAD_SUFFIXES order).
_APPROVALS = r"""
local DC, CL = KEYS[12], KEYS[13]

-- claim value: owner \0 taken_ms \0 done
local function parse_claim(v)
  local a = string.find(v, SEP, 1, true)
  local b = string.find(v, SEP, a + 1, true)
  return string.sub(v, 1, a - 1), tonumber(string.sub(v, a + 1, b - 1)), string.sub(v, b + 1)
end

local function iid_of(field)
  local last = 0
  while true do
    local i = string.find(field, SEP, last + 1, true)
    if not i then break end
    last = i
  end
  return string.sub(field, last + 1)
end
"""

# KEYS: the thread's, its outbox, then (with an audit entry) the audit stream
# and its chain head. ARGV: key, decision json, at_ms, owner, is_wait ('1' when
# key may name a wait), the audit entry json and its digest ('' '' without),
# the event id and event json ('' '' without).
# Compare-and-set: the stored decision wins; the winner also takes the claim on
# resuming (taken at the decision time, kept if a later claim exists).
# A script is not rolled back when a command fails halfway, so every command
# that can fail (a key of the wrong type) runs before the first write, and the
# audit entry is written before the decision: no decision without its entry.
RECORD_DECISION = Script(
    "record_decision",
    _COMMON
    + _APPROVALS
    + AUDIT_TYPES
    + CHAIN_ADD
    + r"""
local key, decision, at, owner = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local entry = ARGV[6]
if entry == '' then entry = nil end
local eid = ARGV[8]
if eid == '' then eid = nil end
-- reads first: each also checks its key's type
if redis.call('HEXISTS', DC, key) == 1 then return redis.call('HGET', DC, key) end
local old = ARGV[5] == '1' and redis.call('HGET', CL, key)
local AU, AH, OB = KEYS[#KEYS - 1], KEYS[#KEYS], KEYS[NTHREAD + 1]
if entry then
  must_be(AU, 'stream')
  must_be(AH, 'hash')
end
if eid then must_be(OB, 'hash') end
local left = redis.call('PTTL', KEYS[1])
-- then the writes, which cannot fail: the entry, the decision, its event, the claim
if entry then chain_add(AU, AH, entry, ARGV[7]) end
redis.call('HSET', DC, key, decision)
if eid then redis.call('HSETNX', OB, eid, ARGV[9]) end
if ARGV[5] == '1' then
  if old then
    local o, taken, done = parse_claim(old)
    if tonumber(at) > taken then taken = tonumber(at) end
    redis.call('HSET', CL, key, o .. SEP .. string.format('%d', taken) .. SEP .. done)
  else
    redis.call('HSET', CL, key, owner .. SEP .. at .. SEP .. '0')
  end
end
-- a saver with a TTL: the hashes this may have created expire with the thread's
-- checkpoints (KEYS[1]), not never (no later write may come to refresh them)
if left > 0 then
  redis.call('PEXPIRE', DC, left)
  if redis.call('EXISTS', CL) == 1 then redis.call('PEXPIRE', CL, left) end
end
return decision
""",
)

# ARGV: owner, now_ms, expired_ms, (unused), then candidates: a wait field
# (ns\0cid\0task\0iid) or 'i:' .. interrupt id.
# Returns {claimed entries..., '', gone candidates...}: entries this owner now
# holds; candidates whose wait no longer exists (the caller unlists them).
CLAIM = Script(
    "claim_waits",
    _COMMON
    + _APPROVALS
    + r"""
local owner, now, expired = ARGV[1], ARGV[2], tonumber(ARGV[3])
local out, gone, seen = {}, {}, {}
for k = 5, #ARGV do
  local cand = ARGV[k]
  local field = cand
  if string.sub(cand, 1, 2) == 'i:' then
    field = nil
    local want = string.sub(cand, 3)
    for _, f in ipairs(redis.call('HKEYS', WT)) do
      if iid_of(f) == want then field = f; break end
    end
  end
  local entry = field and redis.call('HGET', WT, field)
  if not entry then
    gone[#gone + 1] = cand
  else
    local iid = iid_of(field)
    local ok = not seen[iid]
    seen[iid] = true
    local old = ok and redis.call('HGET', CL, iid)
    if old then
      local o, taken, done = parse_claim(old)
      -- a live claim is skipped whoever holds it, so repeated calls page onwards
      if done == '1' or taken > expired then ok = false end
    end
    if ok then
      redis.call('HSET', CL, iid, owner .. SEP .. now .. SEP .. '0')
      out[#out + 1] = entry
    end
  end
end
out[#out + 1] = ''
for _, g in ipairs(gone) do out[#out + 1] = g end
return out
""",
)

# ARGV: interrupt id, owner, done ('1' marks the wait resolved for good).
RELEASE = Script(
    "release_claim",
    _COMMON
    + _APPROVALS
    + r"""
local old = redis.call('HGET', CL, ARGV[1])
if not old then return 0 end
local o, taken, done = parse_claim(old)
if o ~= ARGV[2] then return 0 end
if ARGV[3] == '1' then
  redis.call('HSET', CL, ARGV[1], o .. SEP .. string.format('%d', taken) .. SEP .. '1')
elseif done ~= '1' then
  redis.call('HDEL', CL, ARGV[1])
end
return 1
""",
)

# ARGV: decision keys. How many exist (HEXISTS: nothing is copied out).
COUNT = Script(
    "count_decisions",
    _COMMON
    + _APPROVALS
    + r"""
local n = 0
for k = 1, #ARGV do n = n + redis.call('HEXISTS', DC, ARGV[k]) end
return n
""",
)

ALL = (RECORD_DECISION, CLAIM, RELEASE, COUNT)

S.BY_SHA.update({s.sha: s for s in ALL})
