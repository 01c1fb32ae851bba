{{- define "simulusion-platform.envhostEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
- name: PLATFORM_ENVHOST_ID
  value: "$(POD_NAME)"
- name: PLATFORM_ENVHOST_LISTEN
  value: "0.0.0.0:50100"
- name: PLATFORM_ENVHOST_ADVERTISE
  value: "$(POD_IP):50100"
- name: PLATFORM_ENVHOST_STEP_LISTEN
  value: "0.0.0.0:50101"
- name: PLATFORM_ENVHOST_STEP_ADVERTISE
  value: "$(POD_IP):50101"
- name: PLATFORM_ENVHOST_CAPACITY
  value: {{ .Values.envhost.capacity | quote }}
- name: PLATFORM_ENVHOST_RUN_DIR
  value: /tmp/envhost
{{ include "simulusion-platform.jetstreamEnv" . }}
{{ include "simulusion-platform.stepTicketEnv" . }}
- name: PLATFORM_WADS
  value: {{ .Values.wads.location | quote }}
{{- if include "simulusion-platform.isS3" .Values.wads.location }}
{{ include "simulusion-platform.s3Env" . }}
{{- end }}
{{ include "simulusion-platform.kubeLauncherEnv" . }}
{{- end }}

{{/* The pod launcher's settings (PLATFORM_LAUNCHER=kubernetes, PLATFORM_KUBE_*) from envPods. */}}
{{- define "simulusion-platform.kubeLauncherEnv" -}}
{{- $pods := .Values.envPods -}}
- name: PLATFORM_LAUNCHER
  value: kubernetes
- name: PLATFORM_KUBE_NAMESPACE
  value: {{ include "simulusion-platform.envsNamespace" . | quote }}
- name: PLATFORM_KUBE_IMAGE
  value: {{ include "simulusion-platform.envsImage" . | quote }}
- name: PLATFORM_KUBE_IMAGE_PULL_POLICY
  value: {{ $pods.image.pullPolicy | quote }}
- name: PLATFORM_KUBE_IMAGE_PULL_SECRETS
  value: {{ join "," .Values.image.pullSecrets | quote }}
- name: PLATFORM_KUBE_CPU_REQUEST
  value: {{ $pods.resources.requests.cpu | quote }}
- name: PLATFORM_KUBE_MEMORY_REQUEST
  value: {{ $pods.resources.requests.memory | quote }}
- name: PLATFORM_KUBE_CPU_LIMIT
  value: {{ $pods.resources.limits.cpu | quote }}
- name: PLATFORM_KUBE_MEMORY_LIMIT
  value: {{ $pods.resources.limits.memory | quote }}
- name: PLATFORM_KUBE_NODE_SELECTOR
  value: {{ toJson $pods.nodeSelector | quote }}
- name: PLATFORM_KUBE_TOLERATIONS
  value: {{ toJson $pods.tolerations | quote }}
- name: PLATFORM_KUBE_GPU_NODE_SELECTOR
  value: {{ toJson $pods.gpu.nodeSelector | quote }}
- name: PLATFORM_KUBE_GPU_TOLERATIONS
  value: {{ toJson $pods.gpu.tolerations | quote }}
- name: PLATFORM_KUBE_SERVICE_ACCOUNT
  value: {{ include "simulusion-platform.envPodsServiceAccountName" . | quote }}
- name: PLATFORM_KUBE_INSTANCE_PORT
  value: {{ $pods.instancePort | quote }}
- name: PLATFORM_KUBE_READY_TIMEOUT
  value: {{ $pods.readyTimeout | quote }}
{{- end }}

{{- define "simulusion-platform.envhostProbes" -}}
readinessProbe:
  tcpSocket:
    port: grpc
  periodSeconds: 10
  timeoutSeconds: 5
livenessProbe:
  tcpSocket:
    port: grpc
  initialDelaySeconds: 30
  periodSeconds: 20
  timeoutSeconds: 5
  failureThreshold: 6
{{- end }}
