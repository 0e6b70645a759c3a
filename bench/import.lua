-- wrk script: POST <path> with a video import of a different existing file each request, the
-- files <root>/dNNN/clip_NNNNNN.mov numbered from BENCH_FIRST, 1,000 to a folder. Each thread
-- takes every BENCH_THREADS-th number from BENCH_FIRST + its index and stops once it has read
-- BENCH_COUNT / BENCH_THREADS responses (requests already sent when it stops may still reach
-- the server: the caller counts what was imported from the catalogue). Environment: BENCH_ROOT,
-- BENCH_PRODUCTION, BENCH_PATH, BENCH_KEY ("Authorization: Token KEY" when set), BENCH_FIRST,
-- BENCH_COUNT, BENCH_THREADS (must equal wrk's -t). done() prints one JSON line.
dofile((debug.getinfo(1, 'S').source:match('^@(.*/)') or './') .. 'wrk-report.lua')
local root = os.getenv("BENCH_ROOT")
local production = os.getenv("BENCH_PRODUCTION") or "Bench"
local path = os.getenv("BENCH_PATH") or "/api/asset/import/"
local first = tonumber(os.getenv("BENCH_FIRST") or "0")
local count = tonumber(os.getenv("BENCH_COUNT") or "100000")
local nthreads = tonumber(os.getenv("BENCH_THREADS") or "1")
local headers = request_headers({ ["Content-Type"] = "application/json" })

local index = 0
function setup(thread)
  thread:set("tid", index)
  index = index + 1
end

local sent, received, perThread = 0, 0, 0
function init(args)
  perThread = math.ceil(count / nthreads)
end

function request()
  local i = first + tid + sent * nthreads
  sent = sent + 1
  local body = string.format(
    '{"type":"video","production":"%s","asset":{"asset_meta":{"name":"clip_%06d","path_file":"%s/d%03d/clip_%06d.mov",' ..
    '"description":"Bench import %d","width":1920,"height":1080,"duration":%d}}}',
    production, i, root, math.floor(i / 1000), i, i, 250 + i % 5000)
  return wrk.format("POST", path, headers, body)
end

function response(status, headers, body)
  received = received + 1
  if received >= perThread then wrk.thread:stop() end
end

