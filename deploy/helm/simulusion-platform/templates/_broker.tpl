{{/* PLATFORM_POOLS from the pools map: "cartpole=2,pong=1", in the ids' order. */}}
{{- define "simulusion-platform.pools" -}}
{{- $pairs := list }}
{{- range $env, $count := .Values.pools }}
{{- $pairs = append $pairs (printf "%s=%d" $env (int $count)) }}
{{- end }}
{{- join "," $pairs }}
{{- end }}

{{/* Seconds the broker waits for an env host to start an instance: the pod's ready timeout
and 30 s more, so the launcher's own timeout (with the pod's reason) answers first. The gateway
waits 30 s more again for the broker's answer (PLATFORM_CREATE_TIMEOUT). */}}
{{- define "simulusion-platform.startTimeout" -}}
{{- add (int .Values.envPods.readyTimeout) 30 }}
{{- end }}

{{- define "simulusion-platform.brokerEnv" -}}
{{ include "simulusion-platform.databaseEnv" . }}
{{ include "simulusion-platform.jetstreamEnv" . }}
- name: PLATFORM_IDLE_TIMEOUT
  value: {{ .Values.platform.idleTimeout | quote }}
- name: PLATFORM_POOLS
  value: {{ include "simulusion-platform.pools" . | quote }}
- name: PLATFORM_START_TIMEOUT
  value: {{ include "simulusion-platform.startTimeout" . | quote }}
- name: PLATFORM_DURABLE_STEPS
  value: {{ .Values.platform.durableSteps | quote }}
{{- if .Values.platform.catalog }}
- name: PLATFORM_CATALOG
  value: /etc/simulusion/catalog.toml
{{- end }}
{{- end }}
