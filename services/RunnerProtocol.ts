/**
 * How one runner reaches another: the platform's socket client protocol, with
 * a failed write reported as the error the cluster retries.
 *
 * The RPC client's socket protocol turns a failed write into a defect
 * (`orDie`). When a peer is stopping, a request written to its closing socket
 * fails with `EPIPE` and reached the caller as that defect, a 500, while every
 * request sent a moment later found the socket already marked broken, failed
 * with `RpcClientError`, and was sent again to the shard's next owner
 * (`RunnerUnavailable`). A write that fails left nothing the peer could
 * read as a request (the socket is gone), so sending it again cannot run it
 * twice: it is now the same `RpcClientError`.
 */
import { Runners } from "@effect/cluster"
import { Socket } from "@effect/platform"
import { RpcClientError } from "@effect/rpc/RpcClientError"
import { Effect, Layer } from "effect"

const writeFailed = (defect: unknown) =>
  Socket.isSocketError(defect) && defect.reason === "Write"
    ? Effect.fail(new RpcClientError({ reason: "Protocol", message: "Error writing to socket", cause: defect }))
    : Effect.die(defect)

/** `inner`'s protocol, whose sends fail with `RpcClientError` where a socket write failed. */
export const retryableWrites = <E, R>(inner: Layer.Layer<Runners.RpcClientProtocol, E, R>) =>
  Layer.effect(
    Runners.RpcClientProtocol,
    Effect.map(Runners.RpcClientProtocol, (connect) => (address) =>
      Effect.map(connect(address), (protocol) => ({
        ...protocol,
        send: (request, transferables) =>
          protocol.send(request, transferables).pipe(Effect.catchAllDefect(writeFailed))
      })))
  ).pipe(Layer.provide(inner))
