-- gadgets.example.com/Gadget has a check of its own: Argo CD takes this exact
-- directory over the wildcard `_.example.com/_`.
hs = {}
if obj.status ~= nil and obj.status.phase == "Running" then
  hs.status = "Healthy"
  hs.message = "Gadget running " .. (obj.status.instances or 0) .. " instances"
else
  hs.status = "Progressing"
  hs.message = "Gadget starting"
end
return hs
