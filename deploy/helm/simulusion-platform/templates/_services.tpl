{{/* PLATFORM_RECORDINGS and, for s3://, PLATFORM_S3_*: the recorder and evals. */}}
{{- define "simulusion-platform.recordingsEnv" -}}
- name: PLATFORM_RECORDINGS
  value: {{ .Values.recordings.location | quote }}
{{- if include "simulusion-platform.isS3" .Values.recordings.location }}
{{ include "simulusion-platform.s3Env" . }}
{{- end }}
{{- end }}

{{- define "simulusion-platform.recorderEnv" -}}
{{ include "simulusion-platform.recordingsEnv" . }}
- name: PLATFORM_RECORDER_SPOOL
  value: /data/recorder-spool
{{ include "simulusion-platform.jetstreamEnv" . }}
{{- end }}

{{- define "simulusion-platform.machinesEnv" -}}
{{ include "simulusion-platform.databaseEnv" . }}
- name: PLATFORM_SSH_KEY
  value: /data/ssh/id_ed25519
- name: PLATFORM_EXPERIMENTS_GATEWAY
  value: {{ printf "%s:%d" (include "simulusion-platform.componentName" (dict "root" . "component" "gateway")) (int .Values.gateway.service.port) | quote }}
- name: PLATFORM_MACHINES_ALLOW_NETWORKS
  value: {{ .Values.machines.allowNetworks | quote }}
- name: PLATFORM_PUBLIC_URL
  value: {{ .Values.machines.publicUrl | quote }}
{{- end }}
