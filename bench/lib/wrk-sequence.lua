-- wrk script: a stream of ever-new sessions, built per request from templates (one per line) in
-- which SESSION_MARK (12 "@") stands for a session's block number in hex — the mapping of
-- src/cli/synthetic-stream.ts (SyntheticStream.slot), which the bench uses to know what the
-- service must count. Requests are concatenations of pre-built pieces: cheap enough for wrk to
-- outrun a bare uWS server on one core.
-- Arguments (after `--`): <templates file> <method> <path> <content type> <authorization or "">
--   <events per session> <open sessions> <sites> <events per request: 1, or 100 for batches>

local CLASSES = 100
local MARK = "@@@@@@@@@@@@"
local pieces = {}      -- pieces[i]: the request of template i split around MARK
local E, W, SITES, PER_REQUEST
-- wrk calls request() once before the run to check what it returns (script_verify_request) and
-- never sends that request: the stream starts with the call after it
local seq = -1

local function split(s)
  local out, from = {}, 1
  while true do
    local i = string.find(s, MARK, from, true)
    if not i then out[#out + 1] = string.sub(s, from); return out end
    out[#out + 1] = string.sub(s, from, i - 1)
    from = i + #MARK
  end
end

function init(args)
  local file, method, path, content_type, authorization = args[1], args[2], args[3], args[4], args[5]
  E, W, SITES, PER_REQUEST = tonumber(args[6]), tonumber(args[7]), tonumber(args[8]), tonumber(args[9])
  local headers = { ["Content-Type"] = content_type }
  if authorization and authorization ~= "" then headers["Authorization"] = authorization end
  local templates = {}
  for line in io.lines(file) do
    if #line > 0 then templates[#templates + 1] = line end
  end
  if PER_REQUEST == 1 then
    for i, t in ipairs(templates) do pieces[i] = split(wrk.format(method, path, headers, t)) end
  else
    -- a batch of CLASSES consecutive sessions at the same step: one body per site and step
    for group = 0, #templates / CLASSES - 1 do
      local body = {}
      for c = 1, CLASSES do body[c] = templates[group * CLASSES + c] end
      pieces[group + 1] = split(wrk.format(method, path, headers, "[" .. table.concat(body, ",") .. "]"))
    end
  end
end

-- SyntheticStream.slot(seq) for event number `e`
local function slot(e)
  local round = E * W
  local i = e % round
  local session = math.floor(e / round) * W + i % W
  local step = math.floor(i / W)
  local site = math.floor(session / CLASSES) % SITES
  return session, step, site
end

function request()
  local e = math.max(seq, 0) * PER_REQUEST
  seq = seq + 1
  local session, step, site = slot(e)
  local p
  if PER_REQUEST == 1 then
    p = pieces[(site * E + step) * CLASSES + session % CLASSES + 1]
  else
    p = pieces[site * E + step + 1]
  end
  local hex = string.format("%012x", math.floor(session / CLASSES))
  return table.concat(p, hex)
end

-- the summary line, shared with wrk-get.lua
dofile((debug.getinfo(1, "S").source:sub(2):gsub("wrk%-sequence%.lua$", "wrk-sequence-done.lua")))
