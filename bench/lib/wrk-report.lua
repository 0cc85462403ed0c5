-- wrk report hook for http-read.mjs: prints one machine-readable line after the run. It defines no
-- response() hook on purpose: that would make wrk parse every body in Lua and slow the load
-- generator. Non-2xx/3xx answers are counted by wrk itself (summary.errors.status).
function done(summary, latency, requests)
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"status_errors":%d,"connect_errors":%d,' ..
    '"read_errors":%d,"write_errors":%d,"timeouts":%d,"lat_mean_us":%.1f,"lat_p50_us":%d,' ..
    '"lat_p90_us":%d,"lat_p99_us":%d,"lat_max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, summary.errors.status, summary.errors.connect,
    summary.errors.read, summary.errors.write, summary.errors.timeout, latency.mean,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
