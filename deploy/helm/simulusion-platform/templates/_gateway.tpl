{{- define "simulusion-platform.gatewayEnv" -}}
- name: PLATFORM_HOST
  value: "0.0.0.0"
- name: PLATFORM_PORT
  value: "8000"
- name: PLATFORM_MODE
  value: {{ .Values.platform.mode | quote }}
- name: PLATFORM_AUTH
  value: {{ .Values.platform.auth | quote }}
{{- if ne .Values.platform.auth "none" }}
- name: PLATFORM_ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "simulusion-platform.adminTokenSecretName" . }}
      key: {{ .Values.platform.adminToken.existingSecretKey }}
{{- end }}
{{- if eq .Values.platform.auth "oidc" }}
- name: PLATFORM_OIDC_ISSUER
  value: {{ .Values.platform.oidc.issuer | quote }}
- name: PLATFORM_OIDC_CLIENT_ID
  value: {{ .Values.platform.oidc.clientId | quote }}
- name: PLATFORM_OIDC_AUDIENCE
  value: {{ .Values.platform.oidc.audience | quote }}
- name: PLATFORM_OIDC_ROLE_MAP
  value: {{ .Values.platform.oidc.roleMap | quote }}
{{- end }}
{{ include "simulusion-platform.databaseEnv" . }}
{{ include "simulusion-platform.stepTicketEnv" . }}
- name: PLATFORM_DIRECT_STEPS
  value: {{ .Values.platform.directSteps | quote }}
{{- with .Values.metrics.token.existingSecret }}
- name: PLATFORM_METRICS_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $.Values.metrics.token.existingSecretKey }}
{{- end }}
- name: PLATFORM_WADS
  value: {{ .Values.wads.location | quote }}
{{- if include "simulusion-platform.isS3" .Values.wads.location }}
{{ include "simulusion-platform.s3Env" . }}
{{- end }}
- name: PLATFORM_CREATE_TIMEOUT
  value: {{ add (include "simulusion-platform.startTimeout" . | int) 30 | quote }}
- name: PLATFORM_CACHE_DIR
  value: /tmp/cache
- name: PLATFORM_WARM_PREVIEWS
  value: {{ .Values.platform.warmPreviews | quote }}
- name: PLATFORM_LOG_LEVEL
  value: {{ .Values.platform.logLevel | quote }}
{{- end }}

{{- define "simulusion-platform.gatewayProbes" -}}
readinessProbe:
  httpGet:
    path: /healthz
    port: http
  periodSeconds: 10
  timeoutSeconds: 5
livenessProbe:
  httpGet:
    path: /healthz
    port: http
  initialDelaySeconds: 20
  periodSeconds: 20
  timeoutSeconds: 5
  failureThreshold: 6
{{- end }}
