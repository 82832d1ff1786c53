/** Runs a block of HTTP tests once per profile, each against its own node; says loudly when a profile is skipped. */
import { describe, it, layer } from "@effect/vitest"
import type { Vitest } from "@effect/vitest"
import type { HttpClient, HttpServer } from "@effect/platform"
import { Duration, Layer } from "effect"
import type { AppConfigShape } from "../../src/config/AppConfig.ts"
import { type Infrastructure, profiles, serverSkipReason } from "./Profiles.ts"
import { testNode } from "./TestNode.ts"

type NodeServices = HttpClient.HttpClient | HttpServer.HttpServer | Infrastructure

export const eachProfile = <Extra = never>(
  title: string,
  body: (it: Vitest.MethodsNonLive<NodeServices | Extra, true>) => void,
  overrides?: Partial<AppConfigShape>,
  /** Replaces parts of the infrastructure (a catalog of stand-in models, say), and may add services of its own. */
  replace?: Layer.Layer<Extra | Partial<Infrastructure> & any, unknown>
) => {
  for (const profile of profiles) {
    const infrastructure = replace === undefined ? profile.infrastructure : Layer.merge(profile.infrastructure, replace)
    layer(testNode(infrastructure as typeof profile.infrastructure, overrides), { excludeTestServices: true, timeout: Duration.minutes(2) })(
      `${title} [${profile.name}]`,
      body as (it: Vitest.MethodsNonLive<any, true>) => void
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
