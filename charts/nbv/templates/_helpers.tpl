{{/*
The operator's image, as kustomize's `images` (config/manager/kustomization.yaml) makes
it: repository@digest when a digest is set, else repository:tag.
*/}}
{{- define "nbv.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/*
Argo CD's namespace: the value, else OpenShift GitOps' or Argo CD's default.
*/}}
{{- define "nbv.argocdNamespace" -}}
{{- .Values.argocd.namespace | default (ternary "openshift-gitops" "argocd" .Values.openshift.enabled) -}}
{{- end -}}

{{/*
The Secret with the metrics endpoint's certificate (tls.crt, tls.key): the value, else
with OpenShift's service CA the one it makes, else none (nbv makes a self-signed one).
*/}}
{{- define "nbv.metricsCertSecret" -}}
{{- .Values.metrics.certSecret | default (ternary "nbv-metrics-tls" "" .Values.metrics.openshiftServiceCA) -}}
{{- end -}}

{{/*
Values that cannot work together.
*/}}
{{- define "nbv.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection) -}}
{{- fail "replicaCount > 1 needs leaderElection: true (only the Lease's holder may run the controller)" -}}
{{- end -}}
{{- end -}}
