-- What the wrk scripts of bench/ share (each loads this with dofile): request_headers(),
-- random_target(), and done(), which prints one JSON line with the request count, duration, bytes, errors and latency
-- percentiles for the benchmark to parse.

-- Accept JSON (plus the given headers), and "Authorization: Token KEY" when BENCH_KEY is set.
function request_headers(extra)
  local headers = { ["Accept"] = "application/json" }
  for name, value in pairs(extra or {}) do headers[name] = value end
  local key = os.getenv("BENCH_KEY")
  if key and key ~= "" then headers["Authorization"] = "Token " .. key end
  return headers
end

-- For the scripts that draw at random (paged.lua, record.lua): BENCH_PATH and BENCH_TOTAL, and an
-- init() that seeds the generator the same way for every target, so each gets the same sequence.
function random_target()
  function init(args)
    math.randomseed(20261122)
  end
  return os.getenv("BENCH_PATH") or "/api/videoassets/", tonumber(os.getenv("BENCH_TOTAL") or "100000")
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"stdev":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.stdev, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
