-- wrk script for bench/run.sh. Parameters come from the environment:
--   BENCH_METHOD (GET|POST), BENCH_BODY (form body for POST), BENCH_AUTH (value of Authorization),
--   BENCH_HOST (Host header; empty = from the URL).
-- done() prints one machine-readable line that run.sh parses.
local method = os.getenv("BENCH_METHOD") or "GET"
local body = os.getenv("BENCH_BODY") or ""
local auth = os.getenv("BENCH_AUTH") or ""
local host = os.getenv("BENCH_HOST") or ""

wrk.method = method
if method == "POST" then
  wrk.body = body
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
end
if auth ~= "" then wrk.headers["Authorization"] = auth end
if host ~= "" then wrk.headers["Host"] = host end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "BENCH requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d non2xx=%d sockerr=%d\n",
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.status, e.connect + e.read + e.write + e.timeout))
end
