-- done() for the wrk scripts of bench/ (loaded by each with dofile): one JSON line with the
-- request count, duration, bytes, errors and latency percentiles, which the benchmark parses.
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"bytes":%d,"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"mean":%.1f,"stdev":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.stdev, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
