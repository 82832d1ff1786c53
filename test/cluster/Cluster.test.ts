/**
 * Three real `engram serve` processes on one PostgreSQL database and Redis,
 * as the README and deploy/ recommend: one owner per space across the
 * cluster, a killed owner's work finishing on the survivors, and a rolling
 * restart that answers every request.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type ClusterNode, clusterDatabase, clusterSkipReason, holders, ownerOf, reportNodes, startCluster } from "../support/ClusterNodes.ts"
import { parsePrometheus } from "../support/Prometheus.ts"
import { signedBy, startReceiver } from "../support/Receiver.ts"

const json = async (response: Response) => (await response.json()) as any

const client = (key: string) => {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" }
  return {
    post: (node: ClusterNode, path: string, body: unknown) =>
      fetch(`${node.url}${path}`, { method: "POST", headers, body: JSON.stringify(body) }),
    patch: (node: ClusterNode, path: string, body: unknown) =>
      fetch(`${node.url}${path}`, { method: "PATCH", headers, body: JSON.stringify(body) }),
    get: (node: ClusterNode, path: string) => fetch(`${node.url}${path}`, { headers })
  }
}

const signupOn = async (node: ClusterNode, label: string) => {
  const post = (path: string, body: unknown, token?: string) =>
    fetch(`${node.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body)
    })
  const signup = await json(await post("/auth/signup", { email: `${label}-${Date.now()}@example.test`, password: "long password", org_name: label }))
  return (await json(await post("/v1/api-keys", { name: "k", env: "test" }, signup.session_token))).raw_key as string
}

const until = async <A>(what: string, timeoutMs: number, probe: () => Promise<A | undefined>) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const found = await probe()
    if (found !== undefined) return found
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
}

describe.skipIf(clusterSkipReason !== undefined)("a cluster of three nodes", () => {
  let nodes: Array<ClusterNode> = []
  let drop = async () => {}

  beforeAll(async () => {
    const database = await clusterDatabase()
    drop = database.drop
    nodes = await startCluster(3, database.url)
  }, 180_000)

  afterAll(async () => {
    for (const node of nodes) if (node.running()) await node.stop()
    await drop()
  }, 120_000)

  // A failed test shows what the nodes said; a node left stopped by it is started again for the next test.
  afterEach(async (context) => {
    if (context.task.result?.state !== "fail") return
    reportNodes(nodes)
    for (const node of nodes) if (!node.running()) await node.start()
  }, 60_000)

  it("reads its writes through every node, at once: one entity per space", async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode]
    const key = await signupOn(a, "ryw")
    const api = client(key)
    const spaceId = `ryw-${Date.now()}`
    const cities = ["Lisbon", "Oslo", "Quito", "Hanoi", "Dakar", "Perth", "Lyon", "Cusco", "Tunis", "Riga", "Bergen", "Porto"]
    for (const [i, city] of cities.entries()) {
      const writer = nodes[i % 3]!
      const written = await api.post(writer, "/v1/record", { space_id: spaceId, content: `Marta moved her bakery to ${city} in spring.` })
      expect(written.status).toBe(200)
      const memoryId = (await json(written)).memories[0].memory_id as string
      const readers = nodes.filter((n) => n !== writer)
      const found = await Promise.all(readers.map(async (reader) => {
        const reply = await api.post(reader, "/v1/retrieve", { space_id: spaceId, query: `Marta bakery ${city}`, limit: 5 })
        expect(reply.status).toBe(200)
        return (await json(reply)).results.map((r: any) => r.memory_id) as Array<string>
      }))
      for (const ids of found) expect(ids).toContain(memoryId)
    }

    // An edit through another node reaches the same entity: no 404, and every node recalls the new text.
    const written = await json(await api.post(a, "/v1/record", { space_id: spaceId, content: "Marta's sourdough starter is called Bruno." }))
    const memoryId = written.memories[0].memory_id
    const edited = await api.patch(b, `/v1/spaces/${spaceId}/memories/${memoryId}`, { text: "Marta's sourdough starter is called Clementine." })
    expect(edited.status).toBe(200)
    for (const reader of [a, c]) {
      const reply = await json(await api.post(reader, "/v1/retrieve", { space_id: spaceId, query: "sourdough starter name", limit: 3 }))
      expect(reply.results[0]).toMatchObject({ memory_id: memoryId, content: "Marta's sourdough starter is called Clementine." })
    }

    // Exactly one node holds the space's entity (it may have moved once while the cluster settled, never doubled).
    expect(holders(nodes, spaceId).map((node) => node.name)).toHaveLength(1)

    // Deleted through one node, the space is gone for every node at once; a write through another starts it afresh.
    const deleted = await fetch(`${c.url}/v1/spaces/${spaceId}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } })
    expect(deleted.status).toBe(204)
    const gone = await api.post(a, "/v1/retrieve", { space_id: spaceId, query: "Marta bakery" })
    expect(gone.status).toBe(404)
    expect((await json(gone)).error.code).toBe("not_found")
    expect((await api.post(b, "/v1/record", { space_id: spaceId, content: "Nadia restores clocks." })).status).toBe(200)
    const fresh = await json(await api.post(a, "/v1/retrieve", { space_id: spaceId, query: "Marta bakery Nadia clocks", limit: 10 }))
    expect(fresh.results.map((r: any) => r.content)).toEqual(["Nadia restores clocks."])
  }, 120_000)

  it("each node's metrics are its own: requests where they arrived, the wake and the awake space on the owner", async () => {
    const key = await signupOn(nodes[0]!, "metrics")
    const api = client(key)
    const spaceId = `metrics-${Date.now()}`
    const scrapeAll = () => Promise.all(nodes.map(async (node) => parsePrometheus(await (await fetch(node.metricsUrl)).text())))
    const before = await scrapeAll()
    expect((await api.post(nodes[0]!, "/v1/record", { space_id: spaceId, content: "Metrics are read from each node." })).status).toBe(200)
    for (let i = 0; i < 2; i++) expect((await api.get(nodes[2]!, `/v1/spaces/${spaceId}/memories`)).status).toBe(200)
    const owner = ownerOf(nodes, spaceId)
    expect(owner).toBeDefined()
    const after = await scrapeAll()
    const delta = (i: number, name: string, labels?: Record<string, string>) =>
      (after[i]!.value(name, labels) ?? 0) - (before[i]!.value(name, labels) ?? 0)
    expect(nodes.map((_, i) => delta(i, "engram_http_requests_total", { method: "POST", route: "/v1/record", status: "200" }))).toEqual([1, 0, 0])
    expect(nodes.map((_, i) => delta(i, "engram_http_requests_total", { method: "GET", route: "/v1/spaces/:space_id/memories", status: "200" })))
      .toEqual([0, 0, 2])
    const ownerIndex = nodes.indexOf(owner!)
    expect(nodes.map((_, i) => delta(i, "engram_space_wake_seconds_count"))).toEqual(nodes.map((_, i) => (i === ownerIndex ? 1 : 0)))
    expect(delta(ownerIndex, "engram_spaces_awake")).toBe(1)
  })

  it("a document uploaded through one node is parsed by the space's owner and recalled, listed and deleted through the others", async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode]
    const key = await signupOn(a, "docs")
    const api = client(key)
    const spaceId = `docs-${Date.now()}`
    const form = new FormData()
    form.append("files", new Blob(["# Depots\n\nThe Bergen depot stores the red tram number 7.\n"], { type: "text/markdown" }), "depots.md")
    form.append("files", new Blob(["Station,Manager\nBergen,Sigrid\nOslo,Anders\n"], { type: "text/csv" }), "stations.csv")
    const uploaded = await fetch(`${a.url}/v1/spaces/${spaceId}/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form })
    expect(uploaded.status).toBe(202)
    const jobIds = (await json(uploaded)).job_ids as Array<string>
    for (const jobId of jobIds) {
      await until(`job ${jobId}`, 60_000, async () => {
        const job = await json(await api.get(b, `/v1/spaces/${spaceId}/jobs/${jobId}`))
        return job.status === "completed" ? job : undefined
      })
    }
    const recalled = await json(await api.post(c, "/v1/retrieve", { space_id: spaceId, query: "Which depot stores the red tram?" }))
    expect(recalled.results[0].content).toContain("red tram")
    const listed = await json(await api.get(b, `/v1/spaces/${spaceId}/documents`))
    expect(listed.total).toBe(2)
    // The graph counts the chunks once, whichever node is asked.
    const graphs = await Promise.all(nodes.map(async (node) => json(await api.get(node, `/v1/spaces/${spaceId}/graph`))))
    for (const graph of graphs) expect(graph).toEqual(graphs[0])
    expect(graphs[0].nodes.map((n: any) => n.label)).toEqual(expect.arrayContaining(["Bergen", "Sigrid"]))
    const depots = listed.documents.find((d: any) => d.filename === "depots.md")
    const deleted = await fetch(`${c.url}/v1/spaces/${spaceId}/documents/${depots.document_id}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } })
    expect(deleted.status).toBe(204)
    const after = await json(await api.post(a, "/v1/retrieve", { space_id: spaceId, query: "Which depot stores the red tram?" }))
    expect(after.results.map((r: any) => r.content).join(" ")).not.toContain("red tram")
    expect(holders(nodes, spaceId)).toHaveLength(1)
  }, 120_000)

  it("a webhook made through one node hears writes made through every node, each event once, from the space's one owner", async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode]
    const receiver = await startReceiver()
    try {
      const key = await signupOn(b, "hooks")
      const api = client(key)
      const spaceId = `hooks-${Date.now()}`
      expect((await api.post(a, "/v1/spaces", { space_id: spaceId })).status).toBe(201)
      const hook = await json(await api.post(a, `/v1/spaces/${spaceId}/webhooks`, { url: receiver.url }))
      expect(hook.secret).toMatch(/^whsec_/)
      // Every node sees the new webhook within the spec's 15 s; the writes start after that.
      await new Promise((r) => setTimeout(r, 6_000))
      for (let i = 0; i < 9; i++) {
        const written = await api.post(nodes[i % 3]!, "/v1/record", { space_id: spaceId, content: `Tomas tuned piano number ${i} in Brno.`, document_id: `piano-${i}` })
        expect(written.status).toBe(200)
      }
      const items = await until("nine completed deliveries", 30_000, async () => {
        const listed = await json(await api.get(c, `/v1/spaces/${spaceId}/webhooks/${hook.id}/deliveries?limit=100`))
        return listed.items.length === 9 && listed.items.every((d: any) => d.status === "completed") ? listed.items : undefined
      })
      expect(items).toHaveLength(9)
      await new Promise((r) => setTimeout(r, 1_000))
      expect(receiver.received).toHaveLength(9)
      expect(new Set(receiver.received.map((r) => r.json.operation_id)).size).toBe(9)
      expect(receiver.received.map((r) => r.json.data.document_id).sort()).toEqual(Array.from({ length: 9 }, (_, i) => `piano-${i}`).sort())
      for (const r of receiver.received) expect(signedBy(r, hook.secret)).toBe(true)
      expect(holders(nodes, spaceId)).toHaveLength(1)
    } finally {
      await receiver.close()
    }
  }, 120_000)

  it("a space shared between two organizations: the member writes and reads through every node, and removal mid-traffic revokes on all of them", async () => {
    const [a, b, c] = nodes as [ClusterNode, ClusterNode, ClusterNode]
    const session = async (label: string) => {
      const signup = await json(await fetch(`${a.url}/auth/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: `${label}-${Date.now()}@example.test`, password: "long password", org_name: label })
      }))
      const key = await json(await fetch(`${a.url}/v1/api-keys`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${signup.session_token}` },
        body: JSON.stringify({ name: "k", env: "test" })
      }))
      return { token: signup.session_token as string, orgId: signup.org_id as string, key: key.raw_key as string }
    }
    const owner = await session("share-owner")
    const partner = await session("share-member")
    const spaceId = `shared-cluster-${Date.now()}`
    expect((await client(owner.key).post(a, "/v1/record", { space_id: spaceId, content: "Yusuf runs the Tuesday deploys from Nairobi." })).status).toBe(200)
    const shared = await fetch(`${b.url}/v1/spaces/${spaceId}/members`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ org_id: partner.orgId, access: "write" })
    })
    expect(shared.status).toBe(201)

    // The member writes through one node and reads through the others: one owner entity serves all of it.
    const member = client(partner.key)
    for (const [i, writer] of [a, b, c].entries()) {
      const written = await member.post(writer, "/v1/record", { space_id: spaceId, content: `Yusuf moved deploy number ${i} to Thursday in Kampala.` })
      expect(written.status).toBe(200)
      const id = (await json(written)).memories[0].memory_id as string
      for (const reader of nodes.filter((n) => n !== writer)) {
        const reply = await member.post(reader, "/v1/retrieve", { space_id: spaceId, query: `deploy number ${i} Thursday Kampala`, limit: 10 })
        expect(reply.status).toBe(200)
        expect((await json(reply)).results.map((r: any) => r.memory_id)).toContain(id)
        const byOwner = await client(owner.key).post(reader, "/v1/retrieve", { space_id: spaceId, query: `deploy number ${i} Kampala`, limit: 10 })
        expect((await json(byOwner)).results.map((r: any) => r.memory_id)).toContain(id)
      }
    }

    // Traffic from the member on every node while the owner removes it through one of them.
    let removedAt = Number.POSITIVE_INFINITY
    let running = true
    const seen: Array<{ started: number; status: number; code?: string; node: string }> = []
    const traffic = async (node: ClusterNode, n: number) => {
      while (running) {
        const started = Date.now()
        const reply = n % 2 === 0
          ? await member.post(node, "/v1/retrieve", { space_id: spaceId, query: "deploys", limit: 5 })
          : await member.post(node, "/v1/record", { space_id: spaceId, content: `Yusuf noted deploy check ${n} on ${node.name}.` })
        const body = await json(reply)
        seen.push({ started, status: reply.status, code: body?.error?.code, node: node.name })
        n += 1
        await new Promise((r) => setTimeout(r, 20))
      }
    }
    const workers = nodes.map((node, i) => traffic(node, i))
    // Enough traffic on each side of the removal, however slow a busy machine makes each request (at most 30 s each).
    const until = async (enough: () => boolean) => {
      for (const deadline = Date.now() + 30_000; !enough() && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 100))
    }
    await new Promise((r) => setTimeout(r, 1500))
    await until(() => seen.length > 10)
    const removed = await fetch(`${c.url}/v1/spaces/${spaceId}/members/${partner.orgId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${owner.token}` }
    })
    expect(removed.status).toBe(204)
    removedAt = Date.now()
    await new Promise((r) => setTimeout(r, 1500))
    await until(() => seen.filter((s) => s.started > removedAt).length > 10)
    running = false
    await Promise.all(workers)

    const before = seen.filter((s) => s.started < removedAt)
    const after = seen.filter((s) => s.started > removedAt)
    expect(before.length).toBeGreaterThan(10)
    expect(after.length).toBeGreaterThan(10)
    // Nothing failed for another reason; every request after the removal, on every node, is refused.
    for (const s of seen) expect([200, 403]).toContain(s.status)
    for (const s of after) expect(s).toMatchObject({ status: 403, code: "forbidden" })
    expect(new Set(after.map((s) => s.node)).size).toBe(3)
    expect(before.filter((s) => s.status === 200).length).toBeGreaterThan(0)
  }, 120_000)

  it("kill -9 of the owner mid-drain: its shards move, the survivors finish, every acknowledged item stored exactly once", async () => {
    const key = await signupOn(nodes[0]!, "kill")
    const api = client(key)
    const spaceId = `kill-${Date.now()}`
    const places = ["Lisbon", "Oslo", "Quito", "Hanoi", "Dakar", "Perth", "Lyon", "Cusco", "Tunis", "Riga"]
    const jobs: Array<string> = []
    // The first batch wakes the space's entity on its owner; find the owner, then queue the rest through the others.
    const first = await api.post(nodes[0]!, "/v1/record/batch", {
      space_id: spaceId,
      items: Array.from({ length: 100 }, (_, n) => ({ content: `Traveller ${n} booked a night ferry to ${places[n % 10]} for the lantern festival.`, metadata: { n } }))
    })
    expect(first.status).toBe(202)
    jobs.push((await json(first)).job_id)
    const owner = await until("the space's owner", 30_000, async () => ownerOf(nodes, spaceId))
    const survivors = nodes.filter((node) => node !== owner)
    for (let batch = 1; batch < 10; batch++) {
      const reply = await api.post(survivors[batch % 2]!, "/v1/record/batch", {
        space_id: spaceId,
        items: Array.from({ length: 100 }, (_, i) => {
          const n = batch * 100 + i
          return { content: `Traveller ${n} booked a night ferry to ${places[n % 10]} for the lantern festival.`, metadata: { n } }
        })
      })
      expect(reply.status).toBe(202)
      jobs.push((await json(reply)).job_id)
    }
    const progress = async (node: ClusterNode) => {
      let completed = 0
      for (const job of jobs) completed += (await json(await api.get(node, `/v1/spaces/${spaceId}/jobs/${job}`))).items.completed
      return completed
    }
    await until("the drain to start", 30_000, async () => ((await progress(survivors[0]!)) > 0 ? true : undefined))
    await owner.kill()
    const killedAt = Date.now()
    const atKill = await progress(survivors[0]!)
    expect(atKill).toBeLessThan(1000) // the kill landed mid-drain

    await until("progress on the survivors", 60_000, async () => ((await progress(survivors[1]!)) > atKill ? true : undefined))
    const resumedAfter = Date.now() - killedAt
    await until("every job completed", 120_000, async () => ((await progress(survivors[0]!)) === 1000 ? true : undefined))
    const newOwner = ownerOf(survivors, spaceId)
    expect(newOwner).toBeDefined()

    const listed = await json(await api.get(survivors[1]!, `/v1/spaces/${spaceId}/memories?limit=1000&type=fact&prefer_observations=false`))
    const seen = new Map<number, number>()
    for (const memory of listed.items) seen.set(memory.metadata.n, (seen.get(memory.metadata.n) ?? 0) + 1)
    expect(seen.size).toBe(1000)
    expect([...seen.values()].every((count) => count === 1)).toBe(true)
    expect(listed.total).toBe(1000)
    for (const job of jobs) {
      const status = await json(await api.get(survivors[0]!, `/v1/spaces/${spaceId}/jobs/${job}`))
      expect(status).toMatchObject({ status: "completed", items: { total: 100, completed: 100, failed: 0, queued: 0 } })
    }
    console.log(`cluster failover: drain resumed ${resumedAfter} ms after kill -9 (${atKill}/1000 stored at the kill)`)
    // The killed node comes back for the next test.
    await owner.start()
  }, 300_000)

  it("a rolling restart with SIGTERM answers every request of a steady trickle", async () => {
    const key = await signupOn(nodes[0]!, "rolling")
    const api = client(key)
    const spaces = Array.from({ length: 6 }, (_, i) => `rolling-${i}-${Date.now()}`)
    const draining = new Set<ClusterNode>()
    const failures: Array<string> = []
    const stored = new Map<string, Array<string>>(spaces.map((s) => [s, []]))
    let requests = 0
    let running = true
    const pick = () => {
      const live = nodes.filter((node) => node.running() && !draining.has(node))
      return live[Math.floor(Math.random() * live.length)]!
    }
    const trickle = async (worker: number) => {
      let i = 0
      while (running) {
        const spaceId = spaces[(worker + i) % spaces.length]!
        const node = pick()
        const n = i++
        try {
          const wrote = await api.post(node, "/v1/record", { space_id: spaceId, content: `Worker ${worker} note ${n}: the kettle whistled at dawn.` })
          requests++
          if (wrote.status !== 200) failures.push(`record via ${node.name}: ${wrote.status} ${await wrote.text()}`)
          else stored.get(spaceId)!.push((await json(wrote)).memories[0].memory_id)
          const read = await api.post(pick(), "/v1/retrieve", { space_id: spaceId, query: "kettle whistled at dawn", limit: 3 })
          requests++
          if (read.status !== 200) failures.push(`retrieve: ${read.status} ${await read.text()}`)
        } catch (error) {
          failures.push(`request via ${node.name} failed: ${String(error)}`)
        }
        await new Promise((r) => setTimeout(r, 25))
      }
    }
    const workers = [0, 1, 2].map(trickle)
    await new Promise((r) => setTimeout(r, 2000))
    for (const node of nodes) {
      // As a load balancer would: take the node out of rotation, then stop it.
      draining.add(node)
      await new Promise((r) => setTimeout(r, 200))
      expect(await node.stop()).toBe(0)
      await node.start()
      draining.delete(node)
      await new Promise((r) => setTimeout(r, 2000))
    }
    running = false
    await Promise.all(workers)
    expect(failures).toEqual([])
    expect(requests).toBeGreaterThan(50)

    // Nothing acknowledged was lost: every stored memory is listed.
    for (const [spaceId, ids] of stored) {
      const listed = await json(await api.get(nodes[0]!, `/v1/spaces/${spaceId}/memories?limit=1000&type=fact&prefer_observations=false`))
      const listedIds = new Set(listed.items.map((m: any) => m.id))
      for (const id of ids) expect(listedIds.has(id)).toBe(true)
    }
  }, 300_000)
})
