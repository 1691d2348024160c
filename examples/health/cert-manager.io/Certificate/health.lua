-- Health of a cert-manager.io/v1 Certificate, from its Ready condition.
--
--   Healthy      Ready is True: the Secret holds a valid, up-to-date certificate
--                (even while a renewal is being issued in the background).
--   Progressing  no Ready condition yet; Ready describes an older generation of
--                the spec; Ready is False while an Issuing condition is True (a
--                first issuance or a reissue in progress); or Ready is Unknown.
--   Degraded     Ready is False and nothing is being issued: the issuer refused
--                the request, the Secret is invalid, ...
--
-- Written for Argo CD's production VM: base library only (no string, no math).

local hs = {}
local status = obj.status or {}
local generation = (obj.metadata or {}).generation

local ready = nil
local issuing = nil
for _, c in ipairs(status.conditions or {}) do
  if c.type == "Ready" then
    ready = c
  elseif c.type == "Issuing" then
    issuing = c
  end
end

if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for cert-manager to report on the certificate"
elseif generation ~= nil and ready.observedGeneration ~= nil and ready.observedGeneration < generation then
  hs.status = "Progressing"
  hs.message = "Waiting for cert-manager to check generation " .. generation
elseif ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message or "Certificate is ready"
elseif ready.status == "False" and issuing ~= nil and issuing.status == "True" then
  hs.status = "Progressing"
  hs.message = "Issuing certificate: " .. (issuing.message or ready.message or "in progress")
elseif ready.status == "False" then
  hs.status = "Degraded"
  hs.message = ready.message or ("Certificate is not ready (reason: " .. (ready.reason or "none") .. ")")
else
  hs.status = "Progressing"
  hs.message = "Certificate readiness is unknown: " .. (ready.message or "no details")
end
return hs
