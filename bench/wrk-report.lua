-- What the wrk scripts of bench/ share (each loads this with dofile): request_headers(), and
-- done(), which prints one JSON line with the request count, duration, bytes, errors and latency
-- percentiles for the benchmark to parse.

-- Accept JSON (plus the given headers), and "Authorization: Token KEY" when BENCH_KEY is set.
function request_headers(extra)
  local headers = { ["Accept"] = "application/json" }
  for name, value in pairs(extra or {}) do headers[name] = value end
  local key = os.getenv("BENCH_KEY")
  if key and key ~= "" then headers["Authorization"] = "Token " .. key end
  return headers
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"stdev":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.stdev, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
