-- Health of an apps/v1 Deployment, judged from its rollout.
--
--   Suspended    spec.paused is true.
--   Progressing  the Deployment controller has not yet observed the latest spec
--                (status.observedGeneration < metadata.generation), fewer replicas
--                run the new template than wanted, old replicas are still
--                terminating, or new replicas are not available yet.
--   Degraded     the rollout exceeded spec.progressDeadlineSeconds (condition
--                Progressing with reason ProgressDeadlineExceeded).
--   Healthy      every wanted replica runs the new template and is available.
--
-- Written for Argo CD's production VM: base library only (no string, no math).
-- Every number read from the object is a float64; integral values print as
-- integers ("3"), so they can be concatenated as they are.

local hs = {}
local spec = obj.spec or {}
local status = obj.status or {}
local generation = (obj.metadata or {}).generation or 0

local function condition(conditionType)
  for _, c in ipairs(status.conditions or {}) do
    if c.type == conditionType then
      return c
    end
  end
  return nil
end

if spec.paused == true then
  hs.status = "Suspended"
  hs.message = "Rollout is paused"
  return hs
end

-- A status about an older spec says nothing about the current one.
if (status.observedGeneration or 0) < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the rollout of generation " .. generation .. " to be observed"
  return hs
end

local progressing = condition("Progressing")
if progressing ~= nil and progressing.reason == "ProgressDeadlineExceeded" then
  hs.status = "Degraded"
  hs.message = "Rollout exceeded its progress deadline: " .. (progressing.message or "no details")
  return hs
end

-- `or` replaces nil only: 0 is true in Lua, so replicas: 0 stays 0.
local wanted = spec.replicas or 1
local updated = status.updatedReplicas or 0
local current = status.replicas or 0
local available = status.availableReplicas or 0

if updated < wanted then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout: " .. updated .. " of " .. wanted .. " replicas updated"
elseif current > updated then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout: " .. (current - updated) .. " old replicas pending termination"
elseif available < updated then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout: " .. available .. " of " .. updated .. " updated replicas available"
else
  hs.status = "Healthy"
  hs.message = available .. " of " .. wanted .. " replicas available"
end
return hs
