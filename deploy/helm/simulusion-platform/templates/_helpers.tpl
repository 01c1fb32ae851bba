{{/*
Names, labels and the pieces every workload shares.
*/}}

{{- define "simulusion-platform.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* <release>-<chart name>, unless the release name already holds the chart's name. */}}
{{- define "simulusion-platform.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "simulusion-platform.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Common labels; call with (dict "root" $ "component" "gateway"). */}}
{{- define "simulusion-platform.labels" -}}
helm.sh/chart: {{ include "simulusion-platform.chart" .root }}
{{ include "simulusion-platform.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: simulusion-platform
{{- end }}

{{/* Selector labels; call with (dict "root" $ "component" "gateway"). */}}
{{- define "simulusion-platform.selectorLabels" -}}
app.kubernetes.io/name: {{ include "simulusion-platform.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{- define "simulusion-platform.componentName" -}}
{{- printf "%s-%s" (include "simulusion-platform.fullname" .root) .component | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "simulusion-platform.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "simulusion-platform.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "simulusion-platform.envhostServiceAccountName" -}}
{{- printf "%s-envhost" (include "simulusion-platform.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "simulusion-platform.envPodsServiceAccountName" -}}
{{- if .Values.envPods.serviceAccount.create }}
{{- default (printf "%s-env" (include "simulusion-platform.fullname" .)) .Values.envPods.serviceAccount.name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- default "default" .Values.envPods.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The environments' namespace: envPods.namespace, else <release namespace>-envs. */}}
{{- define "simulusion-platform.envsNamespace" -}}
{{- default (printf "%s-envs" .Release.Namespace) .Values.envPods.namespace | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "simulusion-platform.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The environments image: envPods.image, else <image.repository>-envs, same tag. */}}
{{- define "simulusion-platform.envsImage" -}}
{{- $repository := default (printf "%s-envs" .Values.image.repository) .Values.envPods.image.repository }}
{{- $tag := default (default .Chart.AppVersion .Values.image.tag) .Values.envPods.image.tag }}
{{- printf "%s:%s" $repository $tag }}
{{- end }}

{{- define "simulusion-platform.natsUrl" -}}
{{- if .Values.nats.url }}
{{- .Values.nats.url }}
{{- else }}
{{- printf "nats://%s-nats.%s.svc:4222" (include "simulusion-platform.fullname" .) .Release.Namespace }}
{{- end }}
{{- end }}

{{- define "simulusion-platform.stepTicketSecretName" -}}
{{- default (printf "%s-step-ticket" (include "simulusion-platform.fullname" .)) .Values.stepTicket.existingSecret }}
{{- end }}

{{- define "simulusion-platform.adminTokenSecretName" -}}
{{- default (printf "%s-admin-token" (include "simulusion-platform.fullname" .)) .Values.platform.adminToken.existingSecret }}
{{- end }}

{{- define "simulusion-platform.dataClaimName" -}}
{{- default (printf "%s-data" (include "simulusion-platform.fullname" .)) .Values.persistence.existingClaim }}
{{- end }}

{{/* Whether any setting keeps its data on the data volume (SQLite, folder recordings or WADs). */}}
{{- define "simulusion-platform.usesSqlite" -}}
{{- if not (or .Values.database.url .Values.database.existingSecret) }}true{{ end }}
{{- end }}

{{- define "simulusion-platform.isS3" -}}
{{- if hasPrefix "s3://" . }}true{{ end }}
{{- end }}

{{/* Fails with one line when the values cannot make a working platform. */}}
{{- define "simulusion-platform.checkValues" -}}
{{- if and (eq .Values.platform.auth "oidc") (not (and .Values.platform.oidc.issuer .Values.platform.oidc.clientId)) }}
{{- fail "platform.auth=oidc needs platform.oidc.issuer and platform.oidc.clientId" }}
{{- end }}
{{- if and (include "simulusion-platform.usesSqlite" .) (not .Values.persistence.enabled) }}
{{- fail "without database.url or database.existingSecret the platform keeps SQLite on the data volume: set persistence.enabled=true or give a PostgreSQL database" }}
{{- end }}
{{- if and (not .Values.persistence.enabled) (not (include "simulusion-platform.isS3" .Values.recordings.location)) }}
{{- fail (printf "recordings.location=%s is a folder on the data volume: set persistence.enabled=true or an s3:// location" .Values.recordings.location) }}
{{- end }}
{{- if and (not .Values.persistence.enabled) (not (include "simulusion-platform.isS3" .Values.wads.location)) }}
{{- fail (printf "wads.location=%s is a folder on the data volume: set persistence.enabled=true or an s3:// location" .Values.wads.location) }}
{{- end }}
{{- end }}

{{/* Pod-level scheduling and security shared by every control plane pod; call with (dict "root" $ "service" .Values.gateway). */}}
{{- define "simulusion-platform.podScheduling" -}}
{{- with .service.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .service.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .service.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "simulusion-platform.imagePullSecrets" -}}
{{- with .Values.image.pullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- end }}

{{/* The variables every service reads: NATS, the log format; HOME on the writable /tmp (the
root file system is read-only). The metrics token is the gateway's alone (gatewayEnv): the other
services answer the gateway over NATS, not Prometheus. */}}
{{- define "simulusion-platform.commonEnv" -}}
- name: HOME
  value: /tmp
- name: PLATFORM_NATS_URL
  value: {{ include "simulusion-platform.natsUrl" . | quote }}
- name: PLATFORM_LOG_FORMAT
  value: {{ .Values.platform.logFormat | quote }}
{{- end }}

{{/* The services that may create the sessions stream: the broker, the env hosts, the recorder. */}}
{{- define "simulusion-platform.jetstreamEnv" -}}
- name: PLATFORM_JETSTREAM_REPLICAS
  value: {{ .Values.nats.streamReplicas | quote }}
- name: PLATFORM_JETSTREAM_MAX_BYTES
  value: {{ .Values.nats.streamMaxBytes | int64 | quote }}
{{- end }}

{{- define "simulusion-platform.databaseEnv" -}}
- name: PLATFORM_DATABASE_URL
{{- if .Values.database.existingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ .Values.database.existingSecret }}
      key: {{ .Values.database.existingSecretKey }}
{{- else if .Values.database.url }}
  value: {{ .Values.database.url | quote }}
{{- else }}
  value: "sqlite+aiosqlite:////data/platform.db"
{{- end }}
{{- end }}

{{/* PLATFORM_S3_*: for a service that keeps something at an s3:// location. */}}
{{- define "simulusion-platform.s3Env" -}}
{{- $s3 := .Values.recordings.s3 -}}
- name: PLATFORM_S3_ENDPOINT
  value: {{ $s3.endpoint | quote }}
- name: PLATFORM_S3_REGION
  value: {{ $s3.region | quote }}
- name: PLATFORM_S3_SECURE
  value: {{ $s3.secure | quote }}
{{- with $s3.existingSecret }}
- name: PLATFORM_S3_ACCESS_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $s3.accessKeyKey }}
- name: PLATFORM_S3_SECRET_KEY
  valueFrom:
    secretKeyRef:
      name: {{ . }}
      key: {{ $s3.secretKeyKey }}
{{- end }}
{{- end }}

{{- define "simulusion-platform.stepTicketEnv" -}}
- name: PLATFORM_STEP_TICKET_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "simulusion-platform.stepTicketSecretName" . }}
      key: {{ .Values.stepTicket.existingSecretKey }}
{{- end }}

{{/* A readiness and liveness check for services without a port: NATS answers from this pod
(the services reconnect to NATS for ever; five minutes without it restarts the pod). */}}
{{- define "simulusion-platform.natsProbes" -}}
readinessProbe:
  exec:
    command:
      - python
      - -c
      - {{ include "simulusion-platform.natsCheck" . | quote }}
  periodSeconds: 10
  timeoutSeconds: 5
livenessProbe:
  exec:
    command:
      - python
      - -c
      - {{ include "simulusion-platform.natsCheck" . | quote }}
  initialDelaySeconds: 30
  periodSeconds: 30
  timeoutSeconds: 5
  failureThreshold: 10
{{- end }}

{{- define "simulusion-platform.natsCheck" -}}
import os, socket, urllib.parse; u = urllib.parse.urlsplit(os.environ["PLATFORM_NATS_URL"].split(",")[0].strip()); socket.create_connection((u.hostname, u.port or 4222), timeout=3).close()
{{- end }}

{{/* The data volume (an emptyDir without persistence) and a writable /tmp for a pod with a read-only root. */}}
{{- define "simulusion-platform.volumes" -}}
volumes:
  - name: tmp
    emptyDir: {}
  - name: data
{{- if .Values.persistence.enabled }}
    persistentVolumeClaim:
      claimName: {{ include "simulusion-platform.dataClaimName" . }}
{{- else }}
    emptyDir: {}
{{- end }}
{{- end }}

{{- define "simulusion-platform.volumeMounts" -}}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  - name: data
    mountPath: /data
{{- end }}

{{/*
A Deployment of one service. Call with a dict:
  root: $, component: "broker", service: .Values.broker (replicas, resources, scheduling,
  podAnnotations), image: the image, imagePullPolicy (optional: image.pullPolicy), command: the container's command (a list), env: extra
  variables (YAML text), ports: container ports (YAML text, optional), probes: YAML text,
  serviceAccountName, automountToken (bool), annotations: extra pod annotations (a dict),
  extraVolumes / extraVolumeMounts: YAML list items (optional).
*/}}
{{- define "simulusion-platform.deployment" -}}
{{- $root := .root -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "simulusion-platform.componentName" . }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "simulusion-platform.labels" . | nindent 4 }}
spec:
  replicas: {{ .service.replicas }}
  selector:
    matchLabels:
      {{- include "simulusion-platform.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "simulusion-platform.labels" . | nindent 8 }}
      {{- $annotations := merge (dict) (default (dict) .annotations) (default (dict) .service.podAnnotations) }}
      {{- with $annotations }}
      annotations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    spec:
      serviceAccountName: {{ .serviceAccountName }}
      automountServiceAccountToken: {{ .automountToken }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with include "simulusion-platform.imagePullSecrets" $root }}
      {{- . | nindent 6 }}
      {{- end }}
      {{- with include "simulusion-platform.podScheduling" . }}
      {{- . | nindent 6 }}
      {{- end }}
      containers:
        - name: {{ .component }}
          image: {{ .image | quote }}
          imagePullPolicy: {{ default $root.Values.image.pullPolicy .imagePullPolicy }}
          command:
            {{- toYaml .command | nindent 12 }}
          env:
            {{- include "simulusion-platform.commonEnv" $root | nindent 12 }}
            {{- with .env }}
            {{- . | nindent 12 }}
            {{- end }}
          {{- with .ports }}
          ports:
            {{- . | nindent 12 }}
          {{- end }}
          {{- .probes | nindent 10 }}
          resources:
            {{- toYaml .service.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          {{- include "simulusion-platform.volumeMounts" $root | nindent 10 }}
            {{- with .extraVolumeMounts }}
            {{- . | nindent 12 }}
            {{- end }}
      {{- include "simulusion-platform.volumes" $root | nindent 6 }}
        {{- with .extraVolumes }}
        {{- . | nindent 8 }}
        {{- end }}
{{- end }}
