/**
 * The cluster the Space entities run on, one shape per profile.
 *
 * - `Single` (embedded profile, one process): a runner that owns every shard;
 *   runner storage in memory (SQL runner storage hangs on PGlite), messages in
 *   the embedded store.
 * - `Socket` (server profile): every `engram serve` is a runner. Runners
 *   reach each other over TCP at RUNNER_HOST:RUNNER_PORT; the runner table,
 *   the shard locks (PostgreSQL advisory locks, released the moment a
 *   runner's connection dies) and the messages live in PostgreSQL. Shards
 *   spread over the live runners and move when one joins, leaves or dies.
 */
import {
  RunnerAddress,
  RunnerHealth,
  RunnerStorage,
  Runners,
  Sharding,
  ShardingConfig,
  SocketRunner,
  SqlMessageStorage,
  SqlRunnerStorage
} from "@effect/cluster"
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import { RpcSerialization } from "@effect/rpc"
import { Duration, Effect, Layer, Option } from "effect"
import { retryableWrites } from "../services/RunnerProtocol.ts"
import { AppConfig } from "../src/config/AppConfig.ts"
import { StartupError } from "./StartupError.ts"

/**
 * Failover and hand-over timings (docs/cluster.md explains them). A runner
 * that dies is found by the health check's ping within ~5-10 s, or, if it
 * ran the health check itself, when its heartbeat is 20 s old; its advisory
 * locks are already free, so survivors take its shards at once. A runner
 * stopping cleanly lets in-flight calls finish (up to 10 s), releases its
 * shards and unregisters; the others pick them up within ~2 s.
 */
export const timings = {
  shardLockRefreshInterval: Duration.seconds(5),
  shardLockExpiration: Duration.seconds(20),
  runnerHealthCheckInterval: Duration.seconds(5),
  refreshAssignmentsInterval: Duration.seconds(2),
  entityMessagePollInterval: Duration.seconds(5),
  entityTerminationTimeout: Duration.seconds(10),
  // A call to an entity on this runner skips the encode/decode round trip a remote one needs (the
  // default simulates it, as a testing aid); calls to other runners are always encoded.
  simulateRemoteSerialization: false
} satisfies Partial<ShardingConfig.ShardingConfig["Type"]>

const storeError = (e: { readonly message: string }) =>
  new StartupError({ message: `cannot keep the cluster's state in the store (DATABASE_URL): ${e.message}` })

/** One process owning every shard (embedded profile). */
export const Single = Sharding.layer.pipe(
  Layer.provideMerge(Runners.layerNoop),
  Layer.provideMerge(SqlMessageStorage.layer),
  Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
  Layer.provide(ShardingConfig.layer(timings)),
  Layer.mapError(storeError)
)

/** This node as one runner of a cluster over TCP, with its state in PostgreSQL (server profile). */
export const Socket = Layer.unwrapEffect(Effect.gen(function*() {
  const config = yield* AppConfig
  const sharding = ShardingConfig.layer({
    ...timings,
    runnerAddress: Option.some(RunnerAddress.make(config.runnerHost, config.runnerPort)),
    runnerListenAddress: Option.some(RunnerAddress.make(config.host, config.runnerPort))
  })
  const cannotListen = (cause: unknown) =>
    new StartupError({
      message: `cannot listen for other runners on ${config.host}:${config.runnerPort} (RUNNER_PORT): ${
        cause instanceof Error ? cause.message : String(cause)
      }`
    })
  const server = NodeClusterSocket.layerSocketServer.pipe(Layer.mapError((e) => cannotListen(e.cause)))
  const client = retryableWrites(NodeClusterSocket.layerClientProtocol)
  const health = RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(client))
  return SocketRunner.layer.pipe(
    Layer.provide([server, client]),
    Layer.provide(health),
    Layer.provideMerge(SqlMessageStorage.layer.pipe(Layer.mapError(storeError))),
    Layer.provide(SqlRunnerStorage.layer.pipe(Layer.mapError(storeError))),
    Layer.provide(sharding),
    Layer.provide(RpcSerialization.layerMsgPack)
  )
}))
