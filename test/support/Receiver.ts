/**
 * A real HTTPS webhook receiver for tests: a self-signed certificate (made
 * with openssl, valid for localhost, receiver.test and 127.0.0.1) and a
 * server that records every request's raw bytes and answers as the test's
 * script says: a status, or hanging past the delivery timeout.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { AddressInfo } from "node:net"
import { createHmac, timingSafeEqual } from "node:crypto"

export interface Certificate {
  readonly certFile: string
  readonly cert: string
  readonly key: string
}

let made: Certificate | undefined

/** One certificate per test process. */
export const certificate = (): Certificate => {
  if (made) return made
  const dir = mkdtempSync(join(tmpdir(), "engram-tls-"))
  const certFile = join(dir, "cert.pem")
  const keyFile = join(dir, "key.pem")
  execFileSync("openssl", [
    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", keyFile, "-out", certFile, "-days", "2",
    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,DNS:receiver.test,IP:127.0.0.1"
  ], { stdio: "ignore" })
  made = { certFile, cert: readFileSync(certFile, "utf8"), key: readFileSync(keyFile, "utf8") }
  return made
}

export interface Received {
  readonly at: number
  readonly path: string
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly raw: Buffer
  readonly json: any
  /** What this request was answered with. */
  readonly answer: Answer
}

/** An HTTP status, or no answer at all until the client gives up. */
export type Answer = number | "hang"

export interface Receiver {
  readonly url: string
  readonly port: number
  readonly received: Array<Received>
  readonly close: () => Promise<void>
}

/** Starts a receiver; `script(n)` answers the n-th request (0-based); 200 when it returns undefined. */
export const startReceiver = async (script: (n: number, request: { path: string }) => Answer | undefined = () => 200): Promise<Receiver> => {
  const { cert, key } = certificate()
  const received: Array<Received> = []
  const hanging = new Set<import("node:http").ServerResponse>()
  const server: Server = createServer({ cert, key }, (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks)
      const answer = script(received.length, { path: req.url ?? "/" }) ?? 200
      let json: any
      try {
        json = JSON.parse(raw.toString("utf8"))
      } catch {
        json = undefined
      }
      received.push({ at: Date.now(), path: req.url ?? "/", headers: req.headers, raw, json, answer })
      if (answer === "hang") {
        hanging.add(res)
        return
      }
      if (answer >= 300 && answer < 400) res.setHeader("location", "https://127.0.0.1:1/elsewhere")
      res.statusCode = answer
      res.end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `https://localhost:${port}/hook`,
    port,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Whether `received` carries a valid signature for `secret` over its raw bytes (compared in constant time). */
export const signedBy = (received: Received, secret: string) => {
  const header = String(received.headers["x-svc-signature"] ?? "")
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(received.raw).digest("hex")}`)
  const given = Buffer.from(header)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
