"""Lua of the Redis audit trail: SHA-256, the chained append, the purge, the read.

Redis's Lua has SHA-1 only (``redis.sha1hex``), so the link is computed here by
a SHA-256 written in Lua with the ``bit`` library every Redis and Valkey ship.
The client sends each entry's digest (the SHA-256 of its JSON, computed in
Python: verification recomputes it from the stored JSON, so a wrong one shows
as an altered entry); the script hashes only the 64 bytes
``previous link || digest``, two compressions, the second over the padding
block, whose message schedule is the same for every link and is spelled out
below as constants.
"""

from __future__ import annotations

from langgraph_durable.checkpointers.redis import _scripts as S
from langgraph_durable.checkpointers.redis._lua_common import Script

_K = (
    0x428A2F98, 0x71374491, 0xB5C0FBCF, 0xE9B5DBA5, 0x3956C25B, 0x59F111F1, 0x923F82A4, 0xAB1C5ED5,
    0xD807AA98, 0x12835B01, 0x243185BE, 0x550C7DC3, 0x72BE5D74, 0x80DEB1FE, 0x9BDC06A7, 0xC19BF174,
    0xE49B69C1, 0xEFBE4786, 0x0FC19DC6, 0x240CA1CC, 0x2DE92C6F, 0x4A7484AA, 0x5CB0A9DC, 0x76F988DA,
    0x983E5152, 0xA831C66D, 0xB00327C8, 0xBF597FC7, 0xC6E00BF3, 0xD5A79147, 0x06CA6351, 0x14292967,
    0x27B70A85, 0x2E1B2138, 0x4D2C6DFC, 0x53380D13, 0x650A7354, 0x766A0ABB, 0x81C2C92E, 0x92722C85,
    0xA2BFE8A1, 0xA81A664B, 0xC24B8B70, 0xC76C51A3, 0xD192E819, 0xD6990624, 0xF40E3585, 0x106AA070,
    0x19A4C116, 0x1E376C08, 0x2748774C, 0x34B0BCB5, 0x391C0CB3, 0x4ED8AA4A, 0x5B9CCA4F, 0x682E6FF3,
    0x748F82EE, 0x78A5636F, 0x84C87814, 0x8CC70208, 0x90BEFFFA, 0xA4506CEB, 0xBEF9A3F7, 0xC67178F2,
)  # fmt: skip


def _ror(x: int, n: int) -> int:
    return ((x >> n) | (x << (32 - n))) & 0xFFFFFFFF


def _padding_schedule() -> list[int]:
    """``w[i] + K[i]`` of the padding block of a 64-byte message (0x80, zeros, length 512)."""
    w = [0x80000000] + [0] * 14 + [512]
    for i in range(16, 64):
        s0 = _ror(w[i - 15], 7) ^ _ror(w[i - 15], 18) ^ (w[i - 15] >> 3)
        s1 = _ror(w[i - 2], 17) ^ _ror(w[i - 2], 19) ^ (w[i - 2] >> 10)
        w.append((w[i - 16] + s0 + w[i - 7] + s1) & 0xFFFFFFFF)
    return [(w[i] + _K[i]) & 0xFFFFFFFF for i in range(64)]


def _table(values: list[int] | tuple[int, ...]) -> str:
    return ",".join(str(v) for v in values)


# link(prev_hex, digest): hex of SHA-256(raw prev || digest), digest 32 raw bytes.
# Sums of up to five 32-bit words stay exact in a double; tobit wraps them.
SHA256_LINK = (
    r"""
local band, bor, bxor, ror = bit.band, bit.bor, bit.bxor, bit.ror
local rshift, tobit = bit.rshift, bit.tobit
local GENESIS = string.rep('0', 64)
-- built on the first link only: scripts that append nothing pay nothing
local K, KPAD
local function constants()
  K = {"""
    + _table(_K)
    + r"""}
  KPAD = {"""
    + _table(_padding_schedule())
    + r"""}
end

local function compress(H, w)
  local a, b, c, d, e, f, g, h = H[1], H[2], H[3], H[4], H[5], H[6], H[7], H[8]
  for i = 1, 64 do
    local t1 = h + bxor(ror(e, 6), ror(e, 11), ror(e, 25)) + bxor(g, band(e, bxor(f, g))) + w[i]
    h, g, f = g, f, e
    e = tobit(d + t1)
    d, c, b = c, b, a
    a = tobit(t1 + bxor(ror(b, 2), ror(b, 13), ror(b, 22)) + bor(band(b, c), band(d, bor(b, c))))
  end
  H[1], H[2], H[3], H[4] = tobit(H[1] + a), tobit(H[2] + b), tobit(H[3] + c), tobit(H[4] + d)
  H[5], H[6], H[7], H[8] = tobit(H[5] + e), tobit(H[6] + f), tobit(H[7] + g), tobit(H[8] + h)
end

local function link(prev_hex, digest)
  if not K then constants() end
  local w = {}
  for i = 1, 8 do
    w[i] = tobit(tonumber(string.sub(prev_hex, i * 8 - 7, i * 8), 16))
    local b1, b2, b3, b4 = string.byte(digest, i * 4 - 3, i * 4)
    w[i + 8] = bor(b1 * 16777216, b2 * 65536, b3 * 256, b4)
  end
  for i = 17, 64 do
    local x, y = w[i - 15], w[i - 2]
    w[i] = tobit(w[i - 16] + bxor(ror(x, 7), ror(x, 18), rshift(x, 3)) + w[i - 7]
      + bxor(ror(y, 17), ror(y, 19), rshift(y, 10)))
  end
  for i = 1, 64 do w[i] = w[i] + K[i] end
  local H = {1779033703, -1150833019, 1013904242, -1521486534,
             1359893119, -1694144372, 528734635, 1541459225}
  compress(H, w)
  compress(H, KPAD)
  local out = {}
  for i = 1, 8 do out[i] = bit.tohex(H[i], 8) end
  return table.concat(out)
end
"""
)

# Chained append. The head AH holds n (newest position), h (its link), bn/bh
# (the base the chain starts after), l (entries from before the chain, counted
# not hashed), pn/pat (purged in all, when last). A stream without a head was
# written before layout step 7: its entries are counted and the chain follows.
# Callers check the key types first: nothing here fails once it has written.
CHAIN_ADD = (
    SHA256_LINK
    + r"""
local function chain_add(AU, AH, entry, digest)
  local got = redis.call('HMGET', AH, 'n', 'h')
  local n, h = tonumber(got[1]), got[2]
  local fresh = not n
  if fresh then n, h = redis.call('XLEN', AU), GENESIS end
  local l = link(h, digest)
  local pos = string.format('%d', n + 1)
  redis.call('XADD', AU, '*', 'e', entry, 'n', pos, 'h', l)
  if fresh then
    local base = string.format('%d', n)
    redis.call('HSET', AH, 'n', pos, 'h', l, 'bn', base, 'bh', GENESIS, 'l', base)
  else
    redis.call('HSET', AH, 'n', pos, 'h', l)
  end
end
"""
)

# A key of the audit that holds something else than this code writes fails the
# script before it writes anything (its error names the key).
AUDIT_TYPES = r"""
local function must_be(key, want)
  local t = redis.call('TYPE', key)['ok']
  if t ~= 'none' and t ~= want then
    error('WRONGTYPE audit key ' .. key .. ' holds a ' .. t .. ', not a ' .. want)
  end
end
"""

# KEYS: the audit stream, its dedupe set, its chain head, the thread's outbox.
# ARGV: fives of (dedupe key or '', entry json, digest, event id or '', event
# json or ''). Each entry is added before its dedupe key, so a failure never
# marks an entry seen that was not written; its event (a reminder's) with it.
APPEND_AUDIT = Script(
    "append_audit",
    AUDIT_TYPES
    + CHAIN_ADD
    + r"""
must_be(KEYS[1], 'stream')
must_be(KEYS[2], 'set')
must_be(KEYS[3], 'hash')
must_be(KEYS[4], 'hash')
for k = 1, #ARGV, 5 do
  local dk = ARGV[k]
  if dk == '' or redis.call('SISMEMBER', KEYS[2], dk) == 0 then
    chain_add(KEYS[1], KEYS[3], ARGV[k + 1], ARGV[k + 2])
    if ARGV[k + 3] ~= '' then redis.call('HSETNX', KEYS[4], ARGV[k + 3], ARGV[k + 4]) end
    if dk ~= '' then redis.call('SADD', KEYS[2], dk) end
  end
end
return 1
""",
)

# KEYS: the audit stream, its dedupe set, its chain head. ARGV: now (ms).
# The entries go; the head stays as the base of later entries, counting what
# went. Returns how many entries went.
PURGE_AUDIT = Script(
    "purge_audit",
    AUDIT_TYPES
    + r"""
must_be(KEYS[1], 'stream')
must_be(KEYS[3], 'hash')
local gone = redis.call('XLEN', KEYS[1])
local got = redis.call('HMGET', KEYS[3], 'n', 'h', 'pn')
redis.call('DEL', KEYS[1], KEYS[2])
if got[1] or gone > 0 then
  local n, h = got[1], got[2]
  if not n then n, h = string.format('%d', gone), string.rep('0', 64) end
  local pn = string.format('%d', (tonumber(got[3]) or 0) + gone)
  redis.call('HSET', KEYS[3], 'n', n, 'h', h, 'bn', n, 'bh', h, 'l', '0', 'pn', pn,
             'pat', ARGV[1])
end
return gone
""",
)

# KEYS: the audit stream, its chain head. The head (flat) and every entry, read
# in one step so they agree.
READ_CHAIN = Script(
    "read_audit_chain",
    r"""
return {redis.call('HGETALL', KEYS[2]), redis.call('XRANGE', KEYS[1], '-', '+')}
""",
)

ALL = (APPEND_AUDIT, PURGE_AUDIT, READ_CHAIN)

S.BY_SHA.update({s.sha: s for s in ALL})
