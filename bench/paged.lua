-- wrk script: GET <path>?limit=50&offset=N with N drawn from [0, TOTAL - 50] by a fixed-seed
-- generator, so every target gets the same sequence. Environment: BENCH_PATH, BENCH_KEY (sent as
-- "Authorization: Token KEY" when set), BENCH_TOTAL. done() prints one JSON line.
dofile((debug.getinfo(1, 'S').source:match('^@(.*/)') or './') .. 'wrk-report.lua')
local path, total = random_target()
local headers = request_headers()

function request()
  local offset = math.random(0, total - 50)
  return wrk.format("GET", path .. "?limit=50&offset=" .. offset, headers)
end

