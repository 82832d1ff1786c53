/**
 * Deliveries survive a crash: SIGKILL the server in the middle of a retry
 * schedule, with one attempt still waiting on a receiver that hangs, start it
 * again on the same data directory, and every delivery is still made. The
 * receiver sees exactly as many requests per operation as the delivery
 * records attempts (no attempt sent twice, none lost), and the one cut short
 * by the crash counts as an attempt that got no answer. The receiver is real
 * HTTPS with a self-signed certificate, trusted through NODE_EXTRA_CA_CERTS;
 * the secret key the first start generated under DATA_DIR opens the secrets
 * after the restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { type Answer, certificate, type Receiver, signedBy, startReceiver } from "../support/Receiver.ts"
import { signupWithKey, startServer, withDataDir } from "../support/Process.ts"

const json = async (response: Response) => (await response.json()) as any
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

let healthy = false
let hangNext = true
let receiver: Receiver

beforeAll(async () => {
  receiver = await startReceiver((): Answer => {
    if (healthy) return 200
    // The first retry of the schedule hangs: the server is killed while it waits.
    if (receiver.received.length >= 5 && hangNext) {
      hangNext = false
      return "hang"
    }
    return 500
  })
})
afterAll(() => receiver.close())

describe("webhook deliveries across a crash", () => {
  it("SIGKILL mid-schedule, restart: every delivery made, each attempt sent once", async () => {
    await withDataDir(async (dataDir) => {
      const env = {
        DATA_DIR: dataDir,
        CONSOLIDATION: "off",
        WEBHOOK_ALLOW_PRIVATE: "1",
        WEBHOOK_RETRY_SCHEDULE: "0,2,2,2,2,2",
        NODE_EXTRA_CA_CERTS: certificate().certFile
      }
      const first = await startServer(env)
      const api = (server: { url: string }, token: string) => (method: string, path: string, body?: unknown) =>
        fetch(`${server.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      const key = await signupWithKey(first.url, `crash-${Date.now()}@example.test`)
      const call = api(first, key)
      expect((await call("POST", "/v1/spaces", { space_id: "crashy" })).status).toBe(201)
      const hook = await json(await call("POST", "/v1/spaces/crashy/webhooks", { url: receiver.url }))
      expect(hook.secret).toMatch(/^whsec_/)
      // The embedded profile generated its key under DATA_DIR, readable by its owner only.
      const keyFile = join(dataDir, "webhook-secret.key")
      expect(existsSync(keyFile)).toBe(true)
      expect(statSync(keyFile).mode & 0o077).toBe(0)

      for (let i = 0; i < 5; i++) {
        expect((await call("POST", "/v1/record", { space_id: "crashy", content: `Ravi planted pepper plant number ${i}.` })).status).toBe(200)
      }
      // Five first attempts (500), then the first retry hangs: kill while it waits.
      for (let waited = 0; receiver.received.length < 6 && waited < 30_000; waited += 100) await sleep(100)
      expect(receiver.received.length).toBeGreaterThanOrEqual(6)
      expect(receiver.received.some((r) => r.answer === "hang")).toBe(true)
      first.child.kill("SIGKILL")
      await new Promise((resolve) => first.child.once("exit", resolve))
      const beforeRestart = receiver.received.length
      healthy = true

      const second = await startServer(env)
      try {
        const again = api(second, key)
        let items: Array<any> = []
        for (let waited = 0; waited < 90_000; waited += 250) {
          items = (await json(await again("GET", `/v1/spaces/crashy/webhooks/${hook.id}/deliveries?limit=100`))).items
          if (items.length === 5 && items.every((d) => d.status === "completed")) break
          await sleep(250)
        }
        expect(items.map((d) => d.status)).toEqual(Array(5).fill("completed"))
        expect(receiver.received.length).toBeGreaterThan(beforeRestart)
        // Per operation: the receiver saw exactly the attempts recorded, the last one acknowledged.
        const byOperation = new Map<string, Array<(typeof receiver.received)[number]>>()
        for (const r of receiver.received) byOperation.set(r.json.operation_id, [...(byOperation.get(r.json.operation_id) ?? []), r])
        expect(byOperation.size).toBe(5)
        const attempts = items.map((d) => d.attempts).sort()
        const seen = [...byOperation.values()].map((rs) => rs.length).sort()
        expect(seen).toEqual(attempts)
        for (const requests of byOperation.values()) {
          expect(requests.at(-1)!.answer).toBe(200)
          expect(requests.slice(0, -1).every((r) => r.answer !== 200)).toBe(true)
          for (const r of requests) expect(signedBy(r, hook.secret)).toBe(true)
        }
        // The attempt the crash cut short was counted as one without an answer: the next one was the third, acknowledged.
        const hung = receiver.received.find((r) => r.answer === "hang")!
        expect(byOperation.get(hung.json.operation_id)!.map((r) => r.answer)).toEqual([500, "hang", 200])
      } finally {
        await second.stop()
      }
    })
  }, 180_000)
})
