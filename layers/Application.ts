/**
 * The application services, identical in every profile. They need a
 * SqlClient, a Cache, the AppConfig, a cluster (Sharding) and the models
 * (Extractor, Embedder), which each profile provides.
 */
import { Layer } from "effect"
import { Accounts } from "../src/identity/Accounts.ts"
import { ApiKeys } from "../src/identity/ApiKeys.ts"
import { Authenticator } from "../src/identity/Authenticator.ts"
import { MemoryService } from "../src/space/MemoryService.ts"
import { Receipts } from "../src/space/Receipts.ts"
import { Reason } from "../src/reason/Reason.ts"
import { ReasonSettings } from "../src/reason/ReasonSettings.ts"
import { SpaceProfiles } from "../src/reason/SpaceProfiles.ts"
import { UserProfiles } from "../src/reason/UserProfiles.ts"
import { UserMemoryRepo } from "../services/store/UserMemoryRepo.ts"
import { ResumeQueued } from "../src/space/ResumeQueued.ts"
import { SpaceEntityLive } from "../src/space/SpaceEntityLive.ts"
import { Spaces } from "../src/spaces/Spaces.ts"
import { AccountRepo } from "../services/store/AccountRepo.ts"
import { ApiKeyRepo } from "../services/store/ApiKeyRepo.ts"
import { JobRepo } from "../services/store/JobRepo.ts"
import { MemoryRepo } from "../services/store/MemoryRepo.ts"
import { SessionRepo } from "../services/store/SessionRepo.ts"
import { SpaceRepo } from "../services/store/SpaceRepo.ts"
import { SettingsRepo } from "../services/store/SettingsRepo.ts"
import { ChatSettingsService } from "../src/proxy/ChatSettingsService.ts"
import { MemoryWrapper } from "../src/proxy/MemoryWrapper.ts"
import { Llm } from "./Models.ts"

const Repositories = Layer.mergeAll(
  AccountRepo.Default,
  SessionRepo.Default,
  ApiKeyRepo.Default,
  SpaceRepo.Default,
  MemoryRepo.Default,
  JobRepo.Default,
  SettingsRepo.Default
)

/** The Space entity registered on the cluster, and the resumption of queued writes. */
export const Entities = ResumeQueued.pipe(Layer.provideMerge(SpaceEntityLive), Layer.provide(Repositories))

/** Reason, the space profile and reason settings, user profiles. */
const Reasoning = UserProfiles.Default.pipe(
  Layer.provideMerge(Reason.Default),
  Layer.provideMerge(Layer.mergeAll(SpaceProfiles.Default, ReasonSettings.Default, UserMemoryRepo.Default))
)

/** The services the HTTP handlers and the CLI call. */
export const Services = MemoryWrapper.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(Accounts.Default, Authenticator.Default, MemoryService.Default, ChatSettingsService.Default)),
  Layer.merge(Reasoning),
  Layer.provideMerge(Layer.mergeAll(ApiKeys.Default, Receipts.Default, Spaces.Default, Llm)),
  Layer.provideMerge(Repositories)
)

export const Application = Services.pipe(Layer.provideMerge(Entities))
