/** The HTTP application: every HttpApi group, /openapi.json, /docs, behind the envelope middleware. */
import { HttpApiBuilder, HttpApiScalar } from "@effect/platform"
import { Layer } from "effect"
import { EngramApi } from "../domain/Api.ts"
import { ApiKeyHandlers } from "./ApiKeyHandlers.ts"
import { AuthenticationLive } from "./AuthenticationLive.ts"
import { AuthHandlers, LogoutHandlers, SwitchHandlers } from "./AuthHandlers.ts"
import { InvitationHandlers } from "./InvitationHandlers.ts"
import { envelopeMiddleware } from "./Envelope.ts"
import { readsFirst, WriteTurns } from "./ReadsFirst.ts"
import { CONSOLE_ROUTES, ConsoleRoute } from "./ConsoleRoute.ts"
import { MCP_ROUTES, McpRoute } from "./McpRoute.ts"
import { ConnectedClientHandlers } from "./ConnectedClientHandlers.ts"
import { OAUTH_ROUTES, OAuthRoutes } from "./OAuthRoutes.ts"
import { MemoryHandlers } from "./MemoryHandlers.ts"
import { ModelHandlers } from "./ModelHandlers.ts"
import { ChatSettingsHandlers } from "./ChatSettingsHandlers.ts"
import { ExtractionSettingsHandlers } from "./ExtractionSettingsHandlers.ts"
import { ConsolidationHandlers } from "./ConsolidationHandlers.ts"
import { MemoryModelHandlers } from "./MemoryModelHandlers.ts"
import { WebhookHandlers } from "./WebhookHandlers.ts"
import { DocumentHandlers } from "./DocumentHandlers.ts"
import { UPLOAD_PATH } from "../domain/Documents.ts"
import { IMPORTS_PATH } from "../domain/PortabilityApi.ts"
import { PortabilityHandlers } from "./PortabilityHandlers.ts"
import { OrgHandlers } from "./OrgHandlers.ts"
import { PROXY_ROUTES, ProxyRoutes } from "./ProxyRoutes.ts"
import { ProfileHandlers } from "./ProfileHandlers.ts"
import { ReasonHandlers } from "./ReasonHandlers.ts"
import { SpaceHandlers } from "./SpaceHandlers.ts"
import { ProjectHandlers } from "./ProjectHandlers.ts"
import { SpaceMemberHandlers } from "./SpaceMemberHandlers.ts"
import { RuleHandlers } from "./RuleHandlers.ts"
import { SystemHandlers } from "./SystemHandlers.ts"
import { FeedbackHandlers, UsageHandlers } from "./UsageHandlers.ts"
import { BILLING_ROUTES, BillingHandlers, BillingWebhookRoute } from "./BillingHandlers.ts"
import { type RawRoutes, RouteTable } from "./Routes.ts"

/**
 * HttpApi routes that read their own bodies: uploads stream their multipart
 * body under their own limits (the JSON guard would refuse it), imports
 * stream the export file to disk under their own (MAX_IMPORT_BYTES).
 */
const STREAMED_BODIES: RawRoutes = { routes: [], ownBodies: [["POST", UPLOAD_PATH], ["POST", IMPORTS_PATH]] }

/** Every route the node serves, declared by the modules that serve them. */
export const RouteTableLive = RouteTable.layer([PROXY_ROUTES, OAUTH_ROUTES, MCP_ROUTES, CONSOLE_ROUTES, BILLING_ROUTES, STREAMED_BODIES])

export const ApiLive = HttpApiBuilder.api(EngramApi).pipe(
  Layer.provide([SystemHandlers, AuthHandlers, LogoutHandlers, OrgHandlers, ApiKeyHandlers, SpaceHandlers, MemoryHandlers, ModelHandlers, ChatSettingsHandlers]),
  Layer.provide([ReasonHandlers, ProfileHandlers, ConsolidationHandlers, MemoryModelHandlers, WebhookHandlers, DocumentHandlers]),
  Layer.provide([UsageHandlers, FeedbackHandlers, BillingHandlers]),
  Layer.provide([SwitchHandlers, InvitationHandlers]),
  Layer.provide([ProjectHandlers, RuleHandlers, SpaceMemberHandlers]),
  Layer.provide([ExtractionSettingsHandlers]),
  Layer.provide([PortabilityHandlers, ConnectedClientHandlers]),
  Layer.provide(AuthenticationLive)
)

/** Serves the API on whatever HttpServer the profile provides (a port, or a test server). */
export const HttpLive = HttpApiBuilder.serve((app) => envelopeMiddleware(readsFirst(app))).pipe(
  // The reference's script is served inline; its default fonts would come from a third-party host an offline install cannot reach.
  Layer.provide(HttpApiScalar.layer({ path: "/docs", scalar: { withDefaultFonts: false } })),
  Layer.provide(ProxyRoutes),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
  Layer.provide(McpRoute),
  Layer.provide(ConsoleRoute),
  Layer.provide(OAuthRoutes),
  Layer.provide(BillingWebhookRoute),
  Layer.provide(ApiLive),
  Layer.provide([RouteTableLive, WriteTurns.layer])
)
