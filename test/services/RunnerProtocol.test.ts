import { RunnerAddress, Runners } from "@effect/cluster"
import { Socket } from "@effect/platform"
import type { FromClientEncoded } from "@effect/rpc/RpcMessage"
import { expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { retryableWrites } from "../../services/RunnerProtocol.ts"

/** A peer's protocol whose sends end the way the platform's socket protocol ends them. */
const peer = (send: (request: FromClientEncoded) => Effect.Effect<void>) =>
  Layer.succeed(Runners.RpcClientProtocol, () =>
    Effect.succeed({ run: () => Effect.never, send, supportsAck: true, supportsTransferables: false }))

const request: FromClientEncoded = { _tag: "Ack", requestId: "1" }
const address = RunnerAddress.make("127.0.0.1", 1)

const sendThrough = (layer: Layer.Layer<Runners.RpcClientProtocol>) =>
  Effect.gen(function*() {
    const connect = yield* Runners.RpcClientProtocol
    const protocol = yield* connect(address)
    return yield* Effect.exit(protocol.send(request))
  }).pipe(Effect.scoped, Effect.provide(layer))

it.effect("a write that fails on a closing socket is the client error the cluster sends again, not a defect", () =>
  Effect.gen(function*() {
    const epipe = new Socket.SocketGenericError({ reason: "Write", cause: new Error("write EPIPE") })
    const exit = yield* sendThrough(retryableWrites(peer(() => Effect.die(epipe))))
    expect(Exit.isFailure(exit) && Cause.isDieType(exit.cause)).toBe(false)
    const error = Exit.isFailure(exit) ? Cause.failureOption(exit.cause) : undefined
    expect(error?._tag).toBe("Some")
    if (error?._tag !== "Some") return
    expect(error.value._tag).toBe("RpcClientError")
    expect(error.value.cause).toBe(epipe)
  }))

it.effect("other defects stay defects, and sends that succeed are untouched", () =>
  Effect.gen(function*() {
    const bug = new Error("a bug")
    const read = new Socket.SocketGenericError({ reason: "Read", cause: bug })
    for (const defect of [bug, read]) {
      const exit = yield* sendThrough(retryableWrites(peer(() => Effect.die(defect))))
      expect(Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined).toBe(defect)
      expect(Exit.isFailure(exit) && Cause.isFailType(exit.cause)).toBe(false)
    }
    const sent: Array<FromClientEncoded> = []
    const exit = yield* sendThrough(retryableWrites(peer((r) => Effect.sync(() => sent.push(r)))))
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(sent).toEqual([request])
  }))
