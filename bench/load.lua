-- wrk script for bench/load.sh and bench/compare.sh: mixed reads over the
-- paths listed in the file given after "--", each request from a random
-- X-Forwarded-For address (one of about 16 million) with
-- Accept-Encoding: br, gzip, or the Accept-Encoding given as the second
-- argument ("identity" sends none).
local paths = {}
local accept = "br, gzip"

function init(args)
  local f = assert(io.open(args[1], "r"))
  for line in f:lines() do
    if #line > 0 then paths[#paths + 1] = line end
  end
  f:close()
  if args[2] ~= nil and #args[2] > 0 then accept = args[2] end
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
end

function request()
  local ip = math.random(1, 255) .. "." .. math.random(0, 255) .. "." .. math.random(0, 255) .. "." .. math.random(1, 254)
  local headers = { ["X-Forwarded-For"] = ip }
  if accept ~= "identity" then headers["Accept-Encoding"] = accept end
  return wrk.format("GET", paths[math.random(#paths)], headers)
end

function done(summary, latency, requests)
  local secs = summary.duration / 1e6
  io.write(string.format("requests/s: %.0f\n", summary.requests / secs))
  io.write(string.format("latency p50 %.2fms  p90 %.2fms  p99 %.2fms  max %.2fms\n",
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000))
  io.write(string.format("non-2xx/3xx: %d  socket errors: %d\n", summary.errors.status,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
