-- Any resource of a group under example.com (Argo CD's wildcard directory
-- `_.example.com/_`, that is `*.example.com/*`): its Ready condition, and the
-- throughput it reports. `goto continue` skips the other conditions, as Argo CD's
-- own built-in checks do; numbers print as gopher-lua prints them.
hs = {status = "Progressing", message = "Waiting for the Ready condition"}
if obj.status == nil or obj.status.conditions == nil then
  return hs
end
for _, condition in ipairs(obj.status.conditions) do
  if condition.type ~= "Ready" then
    goto continue
  end
  if condition.status == "True" then
    hs.status = "Healthy"
    hs.message = "Ready"
    if obj.status.throughput ~= nil then
      hs.message = hs.message .. " at " .. obj.status.throughput .. " requests/s"
    end
  elseif condition.status == "False" then
    hs.status = "Degraded"
    hs.message = condition.message or "Not ready"
  end
  ::continue::
end
return hs
