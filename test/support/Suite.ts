/** Runs a block of HTTP tests once per profile, each against its own node; says loudly when a profile is skipped. */
import type { HttpClient, HttpServer } from "@effect/platform"
import { describe, it, layer } from "@effect/vitest"
import type { Vitest } from "@effect/vitest"
import { Duration, Layer } from "effect"
import { modelsOn } from "../../layers/Models.ts"
import type { AppConfigShape } from "../../src/config/AppConfig.ts"
import type { Catalog } from "../../services/llm/Catalog.ts"
import type { WebhookTransport } from "../../services/webhooks/Transport.ts"
import { type Infrastructure, profiles, serverSkipReason } from "./Profiles.ts"
import { testNode } from "./TestNode.ts"

type NodeServices = HttpClient.HttpClient | HttpServer.HttpServer | Infrastructure

export interface Replacements<Extra> {
  /** A catalog of stand-in models instead of the configured one. */
  readonly catalog?: Layer.Layer<Catalog, unknown>
  /**
   * Services of the test's own (a stand-in server, say). A catalog that needs
   * them is given the same layer: layers are built once per node by reference.
   */
  readonly extra?: Layer.Layer<Extra, unknown>
  /** How webhook deliveries leave (a test's receiver and its certificate) instead of the live transport. */
  readonly transport?: Layer.Layer<WebhookTransport>
}

export const eachProfile = <Extra = never>(
  title: string,
  body: (it: Vitest.MethodsNonLive<NodeServices | Extra, true>) => void,
  overrides?: Partial<AppConfigShape>,
  replace: Replacements<Extra> = {}
) => {
  for (const profile of profiles) {
    const base = profile.infrastructure(replace.catalog === undefined ? undefined : modelsOn(replace.catalog))
    // Merged last, the test's transport is the one the node sees.
    const infrastructure = replace.transport === undefined ? base : Layer.merge(base, replace.transport)
    const node = replace.extra === undefined
      ? testNode(infrastructure, overrides)
      : testNode(infrastructure, overrides).pipe(Layer.provideMerge(replace.extra))
    layer(node as Layer.Layer<NodeServices | Extra, unknown>, { excludeTestServices: true, timeout: Duration.minutes(2) })(
      `${title} [${profile.name}]`,
      body as (it: Vitest.MethodsNonLive<NodeServices | Extra, true>) => void
    )
  }
  const reason = serverSkipReason
  if (reason !== undefined) {
    describe(`${title} [server profile]`, () => {
      it.skip(reason, () => {})
    })
  }
}

if (serverSkipReason !== undefined) console.warn(`\n*** ${serverSkipReason} ***\n`)
