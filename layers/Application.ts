/** The application services, identical in every profile; they need a SqlClient, a Cache and the AppConfig. */
import { Layer } from "effect"
import { Accounts } from "../src/identity/Accounts.ts"
import { ApiKeys } from "../src/identity/ApiKeys.ts"
import { Authenticator } from "../src/identity/Authenticator.ts"
import { Spaces } from "../src/spaces/Spaces.ts"
import { AccountRepo } from "../services/store/AccountRepo.ts"
import { ApiKeyRepo } from "../services/store/ApiKeyRepo.ts"
import { SessionRepo } from "../services/store/SessionRepo.ts"
import { SpaceRepo } from "../services/store/SpaceRepo.ts"

const Repositories = Layer.mergeAll(AccountRepo.Default, SessionRepo.Default, ApiKeyRepo.Default, SpaceRepo.Default)

export const Application = Layer.mergeAll(Accounts.Default, Authenticator.Default, Spaces.Default).pipe(
  Layer.provideMerge(ApiKeys.Default),
  Layer.provideMerge(Repositories)
)
