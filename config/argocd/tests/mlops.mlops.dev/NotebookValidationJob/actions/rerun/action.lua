-- Asks nbv to run the job again: writes a new value into the mlops.dev/rerun
-- annotation. nbv starts one new run for each value it has not answered yet (the
-- value it answered is status.rerun.request), so the value is one more than the
-- highest number either holds. Only the annotation changes: the spec, and so the
-- Application's sync status, stay as they are.
local key = "mlops.dev/rerun"

-- A whole number below 10^15 (which tostring writes without an exponent), or 0.
local function number(value)
  local n = tonumber(value)
  if n == nil or n < 0 or n >= 1e15 or n % 1 ~= 0 then
    return 0
  end
  return n
end

if obj.metadata.annotations == nil then
  obj.metadata.annotations = {}
end
local last = number(obj.metadata.annotations[key])
if type(obj.status) == "table" and type(obj.status.rerun) == "table" then
  local answered = number(obj.status.rerun.request)
  if answered > last then
    last = answered
  end
end
obj.metadata.annotations[key] = tostring(last + 1)
return obj
