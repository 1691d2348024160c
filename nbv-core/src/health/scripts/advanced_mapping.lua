if obj.status == nil or obj.status.phase == nil then
  hs.status = "Progressing"
  hs.message = "Initializing"
  return hs
end

local phase = obj.status.phase

if phase == "Succeeded" then
  hs.status = "Healthy"

  -- Show cell execution summary
  if obj.status.results ~= nil then
    local totalCells = #obj.status.results
    hs.message = "Succeeded - Executed " .. totalCells .. " cells"
  else
    hs.message = "Notebook validation succeeded"
  end

elseif phase == "Failed" then
  hs.status = "Degraded"

  -- Find which cell failed
  if obj.status.results ~= nil then
    for i, result in ipairs(obj.status.results) do
      if result.status == "Failure" or result.status == "error" then
        hs.message = "Failed at cell " .. result.cellIndex .. ": " .. (result.errorMessage or result.errorType or "Error")
        return hs
      end
    end
  end

  hs.message = obj.status.message or "Validation failed"

elseif phase == "ValidationRunning" then
  hs.status = "Progressing"

  -- Show progress through cells
  if obj.status.results ~= nil then
    local completedCells = 0
    for _, result in ipairs(obj.status.results) do
      if result.status == "Success" or result.status == "success" then
        completedCells = completedCells + 1
      end
    end
    hs.message = "Executing notebook (" .. completedCells .. " cells completed)"
  else
    hs.message = "Validating notebook"
  end

else
  hs.status = "Progressing"
  hs.message = "Phase: " .. phase
end

return hs
