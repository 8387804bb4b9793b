-- Layout step 6, once per registered thread; KEYS in the order of
-- checkpointers.redis._keys.THREAD_SUFFIXES.
local ZA, R, X, WI = KEYS[2], KEYS[4], KEYS[6], KEYS[8]
local SEP = '\0'

local function zrem(key, list)
  for i = 1, #list, 500 do
    redis.call('ZREM', key, unpack(list, i, math.min(i + 499, #list)))
  end
end

-- root checkpoints (cid\0) leave za: z holds them
local root = {}
for _, m in ipairs(redis.call('ZRANGE', ZA, 0, -1)) do
  if string.sub(m, -1) == SEP then root[#root + 1] = m end
end
zrem(ZA, root)

-- the step leaves the metadata index: a filter on it reads the refs
zrem(X, redis.call('ZRANGEBYLEX', X, '["step"' .. SEP, '["step"' .. SEP .. '\255'))

-- pending writes move from wi into their checkpoint's refs (t[7]); those of a
-- checkpoint without refs (gone, kept for a delta) stay in wi
local byf, order = {}, {}
for _, m in ipairs(redis.call('ZRANGE', WI, 0, -1)) do
  local f, s = string.match(m, '^(.*)%z([^%z]*%z[^%z]*)$')
  if f then
    if not byf[f] then byf[f] = {}; order[#order + 1] = f end
    local l = byf[f]
    l[#l + 1] = {m, s}
  end
end
for _, f in ipairs(order) do
  local raw = redis.call('HGET', R, f)
  -- damaged refs stay as they are, their writes in wi (readers take both
  -- forms; the read names the damage): one bad checkpoint must not stop the
  -- step for every thread of the prefix
  local ok, t = false, nil
  if raw then ok, t = pcall(cmsgpack.unpack, raw) end
  if ok and type(t) == 'table' then
    t[3] = t[3] or {}; t[4] = t[4] or {}; t[5] = t[5] or {}; t[6] = t[6] or 0
    t[7] = t[7] or {}
    local have, moved = {}, {}
    for _, s in ipairs(t[7]) do have[s] = true end
    for _, e in ipairs(byf[f]) do
      if not have[e[2]] then have[e[2]] = true; t[7][#t[7] + 1] = e[2] end
      moved[#moved + 1] = e[1]
    end
    redis.call('HSET', R, f, cmsgpack.pack(t))
    zrem(WI, moved)
  end
end
return 1
