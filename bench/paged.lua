-- wrk script: GET <path>?limit=50&offset=N with N drawn from [0, TOTAL - 50] by a fixed-seed
-- generator, so every target gets the same sequence. Environment: BENCH_PATH, BENCH_KEY (sent as
-- "Authorization: Token KEY" when set), BENCH_TOTAL. done() prints one JSON line.
local path = os.getenv("BENCH_PATH") or "/api/videoassets/"
local key = os.getenv("BENCH_KEY")
local total = tonumber(os.getenv("BENCH_TOTAL") or "100000")
local headers = { ["Accept"] = "application/json" }
if key and key ~= "" then headers["Authorization"] = "Token " .. key end

function init(args)
  math.randomseed(20261122)
end

function request()
  local offset = math.random(0, total - 50)
  return wrk.format("GET", path .. "?limit=50&offset=" .. offset, headers)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"stdev":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.stdev, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
