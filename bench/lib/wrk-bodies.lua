-- wrk script: cycles through request bodies read from a file (one body per line), each request
-- built once in init() so that request() costs a table read; done() prints one JSON line.
-- Arguments (after `--`): <bodies file> <method> <path> <content type> [authorization]

local requests = {}
local next_index = 0

function init(args)
  local file, method, path, content_type, authorization = args[1], args[2], args[3], args[4], args[5]
  local headers = { ["Content-Type"] = content_type }
  if authorization and authorization ~= "" then headers["Authorization"] = authorization end
  if file and file ~= "" then
    for line in io.lines(file) do
      if #line > 0 then requests[#requests + 1] = wrk.format(method, path, headers, line) end
    end
  end
  if #requests == 0 then requests[1] = wrk.format(method, path, headers, nil) end
end

function request()
  next_index = next_index + 1
  if next_index > #requests then next_index = 1 end
  return requests[next_index]
end

function done(summary, latency, _)
  local e = summary.errors
  io.write(string.format(
    '\nWRK_RESULT {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"n":%d,"mean":%.1f,"p50":%d,"p90":%d,"p99":%d,"max":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    summary.requests, latency.mean, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max))
end
