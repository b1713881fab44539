{{- define "foresight.fullname" -}}
{{ .Release.Name }}-foresight
{{- end }}

{{- define "foresight.serviceAccountName" -}}
{{- if .Values.serviceAccount.name }}
{{- .Values.serviceAccount.name }}
{{- else }}
{{- .Release.Name }}-foresight
{{- end }}
{{- end }}

{{- define "foresight.labels" -}}
app.kubernetes.io/name: foresight
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "foresight.selectorLabels" -}}
app.kubernetes.io/name: foresight
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end }}
