/**
 * Connections over real sockets to a real `engram serve`: a body refused
 * early (413) is answered with `Connection: close`, read to its end while
 * the client still sends it (no reset under it), and the connection then
 * closes cleanly; a client's next request never meets a reset; a body
 * trickled slower than the minimum rate is cut off with 408 in seconds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { connect, type Socket } from "node:net"
import { runEngram, type Running, startServer, withDataDir } from "../support/Process.ts"

interface Raw {
  readonly socket: Socket
  /** Everything received so far. */
  readonly received: () => string
  /** How the connection ended: `end` (the server closed cleanly), `error: <code>` (a reset), or undefined while open. */
  readonly ended: () => string | undefined
}

const open = (port: number) =>
  new Promise<Raw>((resolve, reject) => {
    // Half-open allowed: a client may go on sending its body after the server has ended its side.
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true })
    let received = ""
    let ended: string | undefined
    socket.on("data", (d) => (received += d.toString("latin1")))
    socket.on("end", () => (ended ??= "end"))
    socket.on("error", (e: NodeJS.ErrnoException) => (ended ??= `error: ${e.code}`))
    socket.on("close", () => (ended ??= "close"))
    socket.once("connect", () => resolve({ socket, received: () => received, ended: () => ended }))
    socket.once("error", reject)
  })

const until = async (what: string, ms: number, probe: () => boolean) => {
  const deadline = Date.now() + ms
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const write = (socket: Socket, data: string | Buffer) =>
  new Promise<void>((resolve, reject) => socket.write(data, (error) => (error ? reject(error) : resolve())))

describe("connections", () => {
  let server: Running
  let key = ""
  let port = 0
  let stopDir = async () => {}

  beforeAll(async () => {
    let release = () => {}
    const held = new Promise<void>((r) => (release = r))
    let ready = () => {}
    const started = new Promise<void>((r) => (ready = r))
    const done = withDataDir(async (dataDir) => {
      key = JSON.parse((await runEngram(["bootstrap", "--org", "C", "--email", "c@example.test"], { DATA_DIR: dataDir })).stdout).api_key
      server = await startServer({ DATA_DIR: dataDir, CONSOLIDATION: "off" })
      port = Number(new URL(server.url).port)
      ready()
      await held
      await server.stop()
    })
    stopDir = async () => {
      release()
      await done
    }
    await started
  }, 120_000)

  afterAll(() => stopDir(), 60_000)

  // Both shapes: the refusal before any of the body arrived, and a body whose start came with
  // the headers (Node's parser pauses the socket then; the drain must set it reading again).
  it.each([
    ["the headers alone first", false],
    ["the body's first MiB in the same write as the headers", true]
  ])("a JSON body over the limit (%s): 413 with Connection: close while it is still being sent, read to its end, then a clean close", async (_shape, together) => {
    const raw = await open(port)
    const total = 40 * 1024 * 1024
    const chunk = Buffer.alloc(1024 * 1024, "a")
    const head = `POST /v1/record HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`
    if (together) await write(raw.socket, Buffer.concat([Buffer.from(head), chunk]))
    else {
      await write(raw.socket, head)
      await write(raw.socket, chunk)
    }
    await until("the 413", 10_000, () => raw.received().includes("\r\n\r\n"))
    expect(raw.received()).toMatch(/^HTTP\/1\.1 413 /)
    expect(raw.received().toLowerCase()).toContain("connection: close")
    expect(raw.received()).toContain("payload_too_large")
    // The rest of the body is still taken: no reset while the client finishes sending it.
    for (let sent = chunk.length; sent < total; sent += chunk.length) await write(raw.socket, chunk)
    raw.socket.end()
    await until("the server to close", 10_000, () => raw.ended() !== undefined)
    expect(raw.ended()).toBe("end")
  }, 60_000)

  it("after an upload refused with 413 (fetch, kept-alive connections), the next requests are served, also 6 s later", async () => {
    const headers = { authorization: `Bearer ${key}` }
    for (let round = 0; round < 2; round++) {
      const form = new FormData()
      form.append("files", new Blob([new Uint8Array(26 * 1024 * 1024)], { type: "text/plain" }), "big.txt")
      const refused = await fetch(`${server.url}/v1/spaces/uploads/documents`, { method: "POST", headers, body: form })
      expect(refused.status).toBe(413)
      expect((await refused.json() as any).error.code).toBe("file_too_large")
      expect(refused.headers.get("connection")).toBe("close")
      for (const wait of [0, 6_000]) {
        await new Promise((r) => setTimeout(r, wait))
        const next = await fetch(`${server.url}/v1/spaces`, { headers })
        expect(next.status).toBe(200)
      }
    }
  }, 90_000)

  it("a body trickled at a byte a second is cut off with 408 request_timeout in seconds, not minutes", async () => {
    const raw = await open(port)
    const started = Date.now()
    await write(raw.socket, `POST /v1/record HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`)
    const trickle = setInterval(() => {
      if (raw.ended() === undefined && !raw.socket.destroyed) raw.socket.write("{")
    }, 1_000)
    try {
      await until("the 408", 30_000, () => raw.received().includes("\r\n\r\n"))
      expect(raw.received()).toMatch(/^HTTP\/1\.1 408 /)
      expect(raw.received()).toContain("request_timeout")
      expect(raw.received().toLowerCase()).toContain("connection: close")
      expect(Date.now() - started).toBeLessThan(20_000)
      await until("the server to close", 10_000, () => raw.ended() !== undefined)
    } finally {
      clearInterval(trickle)
      raw.socket.destroy()
    }
    // The node serves others meanwhile and afterwards.
    expect((await fetch(`${server.url}/v1/spaces`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200)
  }, 60_000)
})
