/** The whole HTTP contract, shared by the server, the OpenAPI document and typed clients. */
import { HttpApi, OpenApi } from "@effect/platform"
import { ENGRAM_VERSION } from "./Version.ts"
import { OPERATION_DOCS } from "./OperationDocs.ts"
import { Authentication } from "./Principal.ts"
import { ApiKeysApi } from "./ApiKeysApi.ts"
import { AuthApi, LogoutApi, SwitchApi } from "./AuthApi.ts"
import { InvitationsApi, OrgInvitationsApi } from "./InvitationsApi.ts"
import { InternalError, ServiceUnavailable } from "./Errors.ts"
import { MemoryApi } from "./MemoryApi.ts"
import { ModelsApi } from "./Models.ts"
import { ChatSettingsApi } from "./ChatSettings.ts"
import { ExtractionSettingsApi } from "./ExtractionSettings.ts"
import { ConsolidationApi } from "./ConsolidationApi.ts"
import { MemoryModelsApi } from "./MemoryModels.ts"
import { OrgsApi } from "./OrgsApi.ts"
import { BillingApi } from "./Billing.ts"
import { FeedbackApi, UsageApi } from "./Usage.ts"
import { ProfilesApi } from "./Profiles.ts"
import { objectAt, withRawRoutes } from "./RawRoutesOpenApi.ts"
import { ReasonApi } from "./Reason.ts"
import { SpacesApi } from "./SpacesApi.ts"
import { ProjectsApi } from "./Projects.ts"
import { ConnectedClientsApi } from "./ConnectedClients.ts"
import { RulesApi } from "./Rules.ts"
import { SpaceMembersApi } from "./SpaceMembersApi.ts"
import { SystemApi } from "./SystemApi.ts"
import { WebhooksApi } from "./Webhooks.ts"
import { DocumentsApi } from "./Documents.ts"
import { PortabilityApi } from "./PortabilityApi.ts"

export class EngramApi extends HttpApi.make("engram")
  .add(SystemApi)
  .add(AuthApi)
  .add(LogoutApi)
  .add(SwitchApi)
  .add(OrgsApi)
  .add(OrgInvitationsApi)
  .add(InvitationsApi)
  .add(ApiKeysApi)
  .add(SpacesApi)
  .add(ProjectsApi)
  .add(ConnectedClientsApi)
  .add(RulesApi)
  .add(SpaceMembersApi)
  .add(MemoryApi)
  .add(ModelsApi)
  .add(ReasonApi)
  .add(ProfilesApi)
  .add(ChatSettingsApi)
  .add(ExtractionSettingsApi)
  .add(ConsolidationApi)
  .add(MemoryModelsApi)
  .add(WebhooksApi)
  .add(DocumentsApi)
  .add(PortabilityApi)
  .add(UsageApi)
  .add(FeedbackApi)
  .add(BillingApi)
  .addError(ServiceUnavailable)
  .addError(InternalError)
  .annotate(OpenApi.Title, "Engram")
  .annotate(OpenApi.Version, ENGRAM_VERSION)
  .annotate(OpenApi.Description, "Long-term memory service for software agents")
  .annotate(OpenApi.Transform, (spec) => withSecurityAndSummaries(withRawRoutes(spec)))
{}

const METHODS = ["get", "post", "put", "patch", "delete"] as const

/** "listSent" -> "List sent". */
const sentenceOf = (name: string) => {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

/**
 * Every operation behind the Authentication middleware declares the bearer
 * scheme (so the reference's "Try it" sends the key), and every operation
 * without a summary of its own gets one from its name. Read from the API's
 * own definition when the document is made.
 */
const withSecurityAndSummaries = (spec: Record<string, unknown>): Record<string, unknown> => {
  const authenticated = new Set<string>()
  const names = new Map<string, string>()
  HttpApi.reflect(EngramApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, middleware }) => {
      const key = `${endpoint.method.toLowerCase()} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`
      names.set(key, endpoint.name)
      if ([...middleware].some((tag) => tag.key === Authentication.key)) authenticated.add(key)
    }
  })
  const paths: Record<string, unknown> = {}
  for (const [path, item] of Object.entries(objectAt(spec, "paths"))) {
    const operations: Record<string, unknown> = { ...objectAt({ item }, "item") }
    for (const method of METHODS) {
      const operation = objectAt(operations, method)
      if (Object.keys(operation).length === 0) continue
      const key = `${method} ${path}`
      const name = names.get(key)
      const [summary, description] = OPERATION_DOCS[key] ?? []
      operations[method] = {
        ...operation,
        ...(typeof operation.summary === "string" && operation.summary !== ""
          ? {}
          : summary !== undefined && summary !== "" ? { summary } : name === undefined ? {} : { summary: sentenceOf(name) }),
        ...(typeof operation.description === "string" && operation.description !== "" ? {} : description === undefined ? {} : { description }),
        ...(authenticated.has(key) && !(Array.isArray(operation.security) && operation.security.length > 0) ? { security: [{ bearer: [] }] } : {})
      }
    }
    paths[path] = operations
  }
  return { ...spec, paths }
}
