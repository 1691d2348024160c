-- The actions of a NotebookValidationJob. "rerun" asks nbv to run the notebook again;
-- it is offered once the last run has ended (a run in progress is not interrupted).
local actions = {}
local phase = nil
if type(obj.status) == "table" then
  phase = obj.status.phase
end
actions["rerun"] = {
  ["displayName"] = "Run again",
  ["iconClass"] = "fa fa-fw fa-redo",
  ["disabled"] = not (phase == "Succeeded" or phase == "Failed")
}
return actions
