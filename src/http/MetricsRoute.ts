/**
 * `GET /metrics` in the Prometheus text format, served apart from the API
 * (on METRICS_PORT, see layers/Main.ts): no key, nothing of any
 * organization's data, only counts. A store that cannot be read answers 503.
 */
import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { makeScrape } from "../observability/Metrics.ts"

const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

/** The metrics server's app, on whatever HttpServer is provided to it. */
export const MetricsApp = Layer.unwrapScoped(
  Effect.map(makeScrape, (scrape) =>
    HttpRouter.empty.pipe(
      HttpRouter.get(
        "/metrics",
        scrape.pipe(
          Effect.map((text) => HttpServerResponse.text(text, { contentType: CONTENT_TYPE })),
          Effect.catchTag("ServiceUnavailable", (e) =>
            Effect.as(Effect.logWarning(`metrics: ${e.message}`), HttpServerResponse.text(`# the store could not be read: ${e.message}\n`, { status: 503, contentType: CONTENT_TYPE })))
        )
      ),
      HttpServer.serve()
    ))
)
