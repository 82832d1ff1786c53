/**
 * The webhook transport and its guards, without a node: the address classes
 * refused, the name resolved at delivery time with the connection pinned to
 * the address that was checked (a rebinding resolver gets no second say),
 * the timeout, and secrets sealed under the key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Duration, Effect, Either, Exit } from "effect"
import { refusedAddress } from "../../services/webhooks/Addresses.ts"
import { makeSecrets, signature } from "../../services/webhooks/Signing.ts"
import { makeTransport, type Resolve } from "../../services/webhooks/Transport.ts"
import { certificate, type Receiver, signedBy, startReceiver } from "../support/Receiver.ts"

describe("address classes", () => {
  const refused = [
    "127.0.0.1", "127.255.0.9", "10.0.0.1", "172.16.5.5", "172.31.0.1", "192.168.0.1", "169.254.169.254", "100.64.0.1",
    "100.127.1.1", "224.0.0.251", "239.1.1.1", "255.255.255.255", "0.0.0.0", "::1", "::", "fd12:3456::1", "fc00::1",
    "fe80::1%eth0", "ff02::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:192.168.1.1", "64:ff9b::a00:1", "2002:a00:1::1"
  ]
  const allowed = ["93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:808:808::1"]

  it("refuses every internal class, and allows public addresses", () => {
    for (const address of refused) expect(refusedAddress(address, false), address).toBeDefined()
    for (const address of allowed) expect(refusedAddress(address, false), address).toBeUndefined()
  })

  it("WEBHOOK_ALLOW_PRIVATE lets loopback and private through, never unspecified, multicast or broadcast", () => {
    for (const address of ["127.0.0.1", "10.0.0.1", "192.168.1.1", "::1", "fd00::1", "::ffff:127.0.0.1"]) {
      expect(refusedAddress(address, true), address).toBeUndefined()
    }
    for (const address of ["0.0.0.0", "224.0.0.1", "255.255.255.255", "::", "ff02::1"]) {
      expect(refusedAddress(address, true), address).toBeDefined()
    }
  })
})

describe("delivery transport", () => {
  let receiver: Receiver
  const ca = certificate().cert
  beforeAll(async () => {
    receiver = await startReceiver((_, request) => (request.path === "/hang" ? "hang" : 200))
  })
  afterAll(() => receiver.close())

  /** A resolver answering from a script, counting its lookups. */
  const scripted = (answers: Array<Array<string>>) => {
    const calls: Array<string> = []
    const resolve: Resolve = async (host) => {
      calls.push(host)
      const next = answers[Math.min(calls.length - 1, answers.length - 1)] ?? []
      return next.map((address) => ({ address, family: address.includes(":") ? 6 as const : 4 as const }))
    }
    return { calls, resolve }
  }

  it("connects to the address it checked: a name that rebinds after the lookup is not looked up again", async () => {
    // First answer loopback (allowed here), then an address no receiver listens on.
    const { calls, resolve } = scripted([["127.0.0.1"], ["192.0.2.1"]])
    const transport = makeTransport({ allowPrivate: true, ca, resolve })
    const before = receiver.received.length
    const body = JSON.stringify({ event: "memory.created" })
    const result = await Effect.runPromise(
      transport.post(`https://receiver.test:${receiver.port}/pinned`, { "x-svc-signature": signature("s3cret", body) }, body)
    )
    expect(result.status).toBe(200)
    expect(calls).toEqual(["receiver.test"])
    expect(receiver.received.length).toBe(before + 1)
    const got = receiver.received.at(-1)!
    expect(got.path).toBe("/pinned")
    // The certificate was checked against the name, and the Host header carries it.
    expect(got.headers.host).toBe(`receiver.test:${receiver.port}`)
    expect(signedBy(got, "s3cret")).toBe(true)
  })

  it("resolves at delivery time: a name that now points inside is refused before any connection", async () => {
    // Public when the webhook was created, loopback when the delivery is made.
    const { resolve } = scripted([["93.184.215.14"], ["127.0.0.1"]])
    const transport = makeTransport({ allowPrivate: false, ca, resolve })
    const checked = await Effect.runPromise(Effect.either(transport.check(`https://rebind.test:${receiver.port}/x`)))
    expect(Either.isRight(checked)).toBe(true)
    const before = receiver.received.length
    const exit = await Effect.runPromiseExit(transport.post(`https://rebind.test:${receiver.port}/x`, {}, "{}"))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(JSON.stringify(exit)).toContain("RefusedUrl")
    expect(receiver.received.length).toBe(before)
  })

  it("a name with any internal address among its answers is refused; one that does not resolve too", async () => {
    const mixed = makeTransport({ allowPrivate: false, ca, resolve: scripted([["93.184.215.14", "10.0.0.7"]]).resolve })
    const none = makeTransport({ allowPrivate: false, ca, resolve: scripted([[]]).resolve })
    for (const [transport, url] of [[mixed, "https://mixed.test/"], [none, "https://nowhere.test/"]] as const) {
      const result = await Effect.runPromise(Effect.either(transport.check(url)))
      expect(Either.isLeft(result), url).toBe(true)
    }
  })

  it("an untrusted certificate gets no delivery; a receiver that hangs is cut at the timeout", async () => {
    const untrusting = makeTransport({ allowPrivate: true })
    const tls = await Effect.runPromise(Effect.either(untrusting.post(receiver.url, {}, "{}")))
    expect(Either.isLeft(tls) && tls.left._tag).toBe("NoAnswer")
    const quick = makeTransport({ allowPrivate: true, ca, timeout: Duration.millis(400) })
    const started = Date.now()
    const hung = await Effect.runPromise(Effect.either(quick.post(`https://localhost:${receiver.port}/hang`, {}, "{}")))
    expect(Either.isLeft(hung) && hung.left.message).toContain("no answer within 0.4 s")
    expect(Date.now() - started).toBeLessThan(5_000)
  })
})

describe("webhook secrets", () => {
  it("seal and open with the key; another key or a changed byte does not open", async () => {
    const box = makeSecrets("k".repeat(40))
    const sealed = box.seal("whsec_abc")
    expect(sealed).not.toContain("whsec_abc")
    expect(box.seal("whsec_abc")).not.toBe(sealed)
    expect(await Effect.runPromise(box.open(sealed))).toBe("whsec_abc")
    expect(Exit.isFailure(await Effect.runPromiseExit(makeSecrets("j".repeat(40)).open(sealed)))).toBe(true)
    const flipped = sealed.slice(0, -2) + (sealed.at(-2) === "A" ? "B" : "A") + sealed.at(-1)
    expect(Exit.isFailure(await Effect.runPromiseExit(box.open(flipped)))).toBe(true)
  })
})
