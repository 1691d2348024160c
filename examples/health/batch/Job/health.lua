-- Health of a batch/v1 Job.
--
--   Degraded     condition Failed is True (backoffLimit reached, deadline
--                exceeded, ...), or more pods failed than spec.backoffLimit
--                allows and the Job controller has not written the condition yet.
--   Healthy      condition Complete is True, or status.succeeded reached
--                spec.completions (1 when unset).
--   Suspended    spec.suspend is true.
--   Progressing  otherwise, with the counts of active, succeeded and failed pods.
--
-- Written for Argo CD's production VM: base library only (no string, no math).

local hs = {}
local spec = obj.spec or {}
local status = obj.status or {}

local function trueCondition(conditionType)
  for _, c in ipairs(status.conditions or {}) do
    if c.type == conditionType and c.status == "True" then
      return c
    end
  end
  return nil
end

-- `or` replaces nil only: 0 is true in Lua, so backoffLimit: 0 stays 0.
local completions = spec.completions or 1
local backoffLimit = spec.backoffLimit or 6
local active = status.active or 0
local succeeded = status.succeeded or 0
local failed = status.failed or 0

local failedCondition = trueCondition("Failed")
local complete = trueCondition("Complete")

if failedCondition ~= nil then
  hs.status = "Degraded"
  hs.message = (failedCondition.reason or "Failed") .. ": " .. (failedCondition.message or "the job failed")
elseif complete ~= nil or succeeded >= completions then
  hs.status = "Healthy"
  hs.message = succeeded .. " of " .. completions .. " completions succeeded"
elseif failed > backoffLimit then
  hs.status = "Degraded"
  hs.message = failed .. " pods failed, more than backoffLimit " .. backoffLimit .. " allows"
elseif spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "Job is suspended"
elseif active == 0 and succeeded == 0 and failed == 0 then
  hs.status = "Progressing"
  hs.message = "Waiting for the job's pods to start"
else
  hs.status = "Progressing"
  hs.message = active .. " active, " .. succeeded .. " of " .. completions .. " completions succeeded"
  if failed > 0 then
    hs.message = hs.message .. ", " .. failed .. " failed (backoffLimit " .. backoffLimit .. ")"
  end
end
return hs
