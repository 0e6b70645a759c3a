-- wrk script: GET each of the paths in BENCH_PATHS (separated by "|") in turn, every connection
-- starting at its own place in the list, so that 16 connections run a mix of queries. BENCH_KEY
-- as in wrk-report.lua. done() prints one JSON line.
dofile((debug.getinfo(1, 'S').source:match('^@(.*/)') or './') .. 'wrk-report.lua')
local headers = request_headers()
local paths = {}
for p in string.gmatch(os.getenv("BENCH_PATHS") or "/api/search/?q=a", "[^|]+") do table.insert(paths, p) end
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("start", counter)
end

local i = nil
function request()
  if i == nil then i = (start or 1) * 7 end
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1], headers)
end
