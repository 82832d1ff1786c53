/**
 * Traces exported over OTLP/HTTP. Loaded only when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set (layers/Observability.ts): the OpenTelemetry SDK is about 0.3 s and
 * 20 MB at start for a node that exports nothing.
 */
import { NodeSdk } from "@effect/opentelemetry"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"

export const layer = (serviceName: string) =>
  NodeSdk.layer(() => ({
    resource: { serviceName },
    // The exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (and _HEADERS) itself and appends /v1/traces.
    spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter())
  }))
