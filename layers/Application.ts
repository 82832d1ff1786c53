/**
 * The application, identical in every profile: the services the HTTP
 * handlers and the CLI call (each declares its own dependencies), and the
 * Space entity with the cluster's waker and the node's OAuth sweep. A profile
 * provides what they run on: the SQL store, the cache, the models, the
 * cluster and the AppConfig.
 */
import { Layer } from "effect"
import { Accounts } from "../src/identity/Accounts.ts"
import { ApiKeys } from "../src/identity/ApiKeys.ts"
import { Authenticator } from "../src/identity/Authenticator.ts"
import { ChatSettingsService } from "../src/proxy/ChatSettingsService.ts"
import { MemoryWrapper } from "../src/proxy/MemoryWrapper.ts"
import { Reason } from "../src/reason/Reason.ts"
import { ReasonSettings } from "../src/reason/ReasonSettings.ts"
import { SpaceProfiles } from "../src/reason/SpaceProfiles.ts"
import { UserProfiles } from "../src/reason/UserProfiles.ts"
import { MemoryService } from "../src/space/MemoryService.ts"
import { Receipts } from "../src/space/Receipts.ts"
import { MemoryModels } from "../src/memoryModels/MemoryModels.ts"
import { ConsolidationStatusService } from "../src/space/ConsolidationStatus.ts"
import { SpaceEntityLive } from "../src/space/SpaceEntity.ts"
import { SpaceWaker } from "../src/space/SpaceWaker.ts"
import { Spaces } from "../src/spaces/Spaces.ts"
import { Projects } from "../src/spaces/Projects.ts"
import { ConnectedClients } from "../src/oauth/ConnectedClients.ts"
import * as OAuthSweep from "../src/oauth/OAuthSweep.ts"
import { Rules } from "../src/security/Rules.ts"
import { SpaceMembers } from "../src/spaces/SpaceMembers.ts"
import { Webhooks } from "../src/webhooks/Webhooks.ts"
import { Documents } from "../src/documents/Documents.ts"
import { Portability } from "../src/portability/Portability.ts"
import { Feedback } from "../src/metering/Feedback.ts"
import { Billing } from "../src/metering/Billing.ts"
import { Metering } from "../src/metering/Metering.ts"
import { UsageReports } from "../src/metering/Usage.ts"
import { ReadPriority } from "../services/EventLoop.ts"
import { OperationsRepo } from "../services/store/OperationsRepo.ts"

/**
 * The Space entity registered on the cluster, the singleton that wakes spaces
 * with work due, and this node's sweep of spent OAuth codes, tokens and grants.
 */
export const Entities = Layer.mergeAll(SpaceEntityLive, SpaceWaker, OAuthSweep.layer())

/** The services the HTTP handlers call. */
export const Services = Layer.mergeAll(
  Accounts.Default,
  ApiKeys.Default,
  Authenticator.Default,
  Spaces.Default,
  Projects.Default,
  Rules.Default,
  SpaceMembers.Default,
  MemoryService.Default,
  Receipts.Default,
  ChatSettingsService.Default,
  MemoryWrapper.Default,
  Reason.Default,
  ReasonSettings.Default,
  SpaceProfiles.Default,
  UserProfiles.Default,
  ConsolidationStatusService.Default,
  MemoryModels.Default,
  Webhooks.Default,
  Documents.Default,
  Portability.Default,
  ConnectedClients.Default,
  Metering.Default,
  Feedback.Default,
  UsageReports.Default,
  Billing.Default,
  ReadPriority.Default,
  // The store's gauges the metrics server reads (METRICS_PORT).
  OperationsRepo.Default
)

export const Application = Layer.merge(Services, Entities)
