/** The whole HTTP contract, shared by the server, the OpenAPI document and typed clients. */
import { HttpApi, OpenApi } from "@effect/platform"
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
import { withRawRoutes } from "./RawRoutesOpenApi.ts"
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
  .annotate(OpenApi.Description, "Long-term memory service for software agents")
  .annotate(OpenApi.Transform, withRawRoutes)
{}
