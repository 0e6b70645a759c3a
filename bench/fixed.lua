-- wrk script: the same GET <BENCH_PATH> every time (a first page, what an editing tool asks for
-- most). Environment: BENCH_PATH (path and query), BENCH_KEY (sent as "Authorization: Token KEY"
-- when set). done() prints one JSON line.
dofile((debug.getinfo(1, 'S').source:match('^@(.*/)') or './') .. 'wrk-report.lua')
local path = os.getenv("BENCH_PATH") or "/api/videoassets/?limit=50&offset=0"
local headers = request_headers()

function request()
  return wrk.format("GET", path, headers)
end

