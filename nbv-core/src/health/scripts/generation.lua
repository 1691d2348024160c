-- A status of an older spec: after a spec edit, the status still describes the
-- previous generation's run until the new run is reported, so it says nothing
-- about the new spec yet (nbv writes status.observedGeneration).
if type(obj.metadata) == "table" and type(obj.status) == "table"
    and type(obj.metadata.generation) == "number"
    and type(obj.status.observedGeneration) == "number"
    and obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the new spec to run (generation " .. obj.metadata.generation
    .. ", status of generation " .. obj.status.observedGeneration .. ")"
  return hs
end

