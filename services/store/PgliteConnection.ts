/**
 * node-postgres's connection to the embedded store, handing PGlite each
 * statement's messages at once. node-postgres writes a statement as five
 * protocol messages (parse, bind, describe, execute, sync) in one go, and
 * the connection PGlite ships passes each to PostgreSQL on its own: five
 * entries into its WebAssembly, five parses of what comes back, five turns
 * of the promise chain, for every statement on the node's one event loop.
 * Here the messages written in one turn go as one buffer, which PostgreSQL
 * reads message by message as a server reads its socket (after an error it
 * skips to the sync, as it would there), and the replies come back in order.
 */
import type { PGlite } from "@electric-sql/pglite"
import { EventEmitter } from "node:events"
import { serialize } from "pg-protocol"

type Serializer = typeof serialize
type Arg<K extends keyof Serializer> = Parameters<Serializer[K]>[0]

export class PgliteConnection extends EventEmitter {
  /** What node-postgres's client reads and writes on its connection. */
  _connecting = false
  readonly stream = { destroy: () => this.end() }
  parsedStatements: Record<string, string> = {}
  submittedNamedStatements: Record<string, string> = {}

  /** Messages written this turn, not yet handed over. */
  private pending: Array<Uint8Array> = []
  /** Each batch runs after the one before it: PGlite is one session. */
  private chain: Promise<unknown>
  /** Whether anyone listens for every message (node-postgres does only for some features). */
  private everyMessage = false

  constructor(private readonly pglite: PGlite) {
    super()
    this.chain = pglite.waitReady
    this.on("newListener", (event) => {
      if (event === "message") this.everyMessage = true
    })
  }

  async connect() {
    this._connecting = true
    await this.pglite.waitReady
    process.nextTick(() => this.emit("readyForQuery"))
  }

  private send(message: Uint8Array) {
    this.pending.push(message)
    if (this.pending.length === 1) queueMicrotask(() => this.handOver())
  }

  private handOver() {
    const batch = this.pending
    this.pending = []
    const bytes = batch.length === 1 ? batch[0]! : Buffer.concat(batch)
    this.chain = this.chain
      .then(() => this.pglite.execProtocolStream(bytes, { throwOnError: false }))
      .then((replies) => {
        for (const reply of replies) {
          if (this.everyMessage) this.emit("message", reply)
          this.emit(reply.name === "error" ? "errorMessage" : reply.name, reply)
        }
      })
      .catch((error: unknown) => {
        this.emit("error", error)
      })
  }

  // The embedded store has no handshake: these have nothing to send.
  requestSsl() {}
  startup() {}
  cancel() {}
  password() {}
  ref() {}
  unref() {}

  sendSASLInitialResponseMessage(mechanism: string, response: string) {
    this.send(serialize.sendSASLInitialResponseMessage(mechanism, response))
  }
  sendSCRAMClientFinalMessage(data: string) {
    this.send(serialize.sendSCRAMClientFinalMessage(data))
  }
  query(text: string) {
    this.send(serialize.query(text))
  }
  parse(options: Arg<"parse">) {
    this.send(serialize.parse(options))
  }
  bind(options: Arg<"bind">) {
    this.send(serialize.bind(options))
  }
  execute(options: Arg<"execute">) {
    this.send(serialize.execute(options))
  }
  describe(options: Arg<"describe">) {
    this.send(serialize.describe(options))
  }
  close(options: Arg<"close">) {
    this.send(serialize.close(options))
  }
  flush() {
    this.send(serialize.flush())
  }
  sync() {
    this.send(serialize.sync())
  }
  sendCopyFromChunk(chunk: Buffer) {
    this.send(serialize.copyData(chunk))
  }
  endCopyFrom() {
    this.send(serialize.copyDone())
  }
  sendCopyFail(message: string) {
    this.send(serialize.copyFail(message))
  }

  end() {
    this.chain = this.chain.then(() => {
      this.emit("end")
    })
    for (const event of this.eventNames()) if (event !== "newListener") this.removeAllListeners(event)
    this.everyMessage = false
  }
}

/** node-postgres's settings for a pool of one client on the embedded store. */
export const pgliteConfig = (pglite: PGlite) => ({
  user: "postgres",
  password: "unused",
  database: "postgres",
  host: "localhost",
  port: 5432,
  connection: new PgliteConnection(pglite)
})
