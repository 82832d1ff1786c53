/**
 * One process runs every Space entity: SingleRunner with in-memory runner
 * storage (SQL runner storage hangs on PGlite) and SQL message storage.
 */
import { SingleRunner } from "@effect/cluster"

export const Cluster = SingleRunner.layer({ runnerStorage: "memory" })
