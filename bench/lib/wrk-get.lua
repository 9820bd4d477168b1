-- wrk script for a plain request repeated (the query bench's GETs): only the summary, in the
-- WRK_RESULT line load.mjs reads, as wrk-sequence.lua prints it
local sequence = debug.getinfo(1, "S").source:sub(2):gsub("wrk%-get%.lua$", "wrk-sequence-done.lua")
dofile(sequence)
