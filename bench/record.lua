-- wrk script: GET <BENCH_PATH><id>/ with ids drawn from [1, BENCH_TOTAL] by a fixed-seed
-- generator, so every target gets the same sequence. Environment: BENCH_PATH, BENCH_KEY (sent as
-- "Authorization: Token KEY" when set), BENCH_TOTAL. done() prints one JSON line.
dofile((debug.getinfo(1, 'S').source:match('^@(.*/)') or './') .. 'wrk-report.lua')
local path, total = random_target()
local headers = request_headers()

function request()
  return wrk.format("GET", path .. math.random(1, total) .. "/", headers)
end

