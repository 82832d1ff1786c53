import { api, list, num, str } from "../api.ts"
import { formatDate, h, plural, table } from "../dom.ts"
import { failed } from "./failed.ts"
import { spaceBase, spaceHeader } from "./spaceNav.ts"

const SVG = "http://www.w3.org/2000/svg"
const svg = (tag: string, attrs: Record<string, string | number>, ...children: ReadonlyArray<Node>) => {
  const element = document.createElementNS(SVG, tag)
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value))
  element.append(...children)
  return element
}

interface Point { x: number; y: number; vx: number; vy: number }

/** A force layout: linked entities pull together, all push apart; a few hundred steps, then frozen. */
const layout = (ids: ReadonlyArray<string>, links: ReadonlyArray<readonly [string, string, number]>, size: number) => {
  const at = new Map<string, Point>(ids.map((id, i) => {
    const angle = (2 * Math.PI * i) / Math.max(1, ids.length)
    return [id, { x: size / 2 + (size / 3) * Math.cos(angle), y: size / 2 + (size / 3) * Math.sin(angle), vx: 0, vy: 0 }]
  }))
  const points = [...at.values()]
  for (let step = 0; step < 300; step++) {
    for (let i = 0; i < points.length; i++) {
      for (let j = i + 1; j < points.length; j++) {
        const a = points[i]!, b = points[j]!
        const dx = a.x - b.x, dy = a.y - b.y
        const d2 = Math.max(dx * dx + dy * dy, 25)
        const push = 900 / d2
        a.vx += dx * push; a.vy += dy * push; b.vx -= dx * push; b.vy -= dy * push
      }
    }
    for (const [source, target, weight] of links) {
      const a = at.get(source), b = at.get(target)
      if (a === undefined || b === undefined) continue
      const dx = b.x - a.x, dy = b.y - a.y
      const pull = 0.01 * Math.min(3, weight)
      a.vx += dx * pull; a.vy += dy * pull; b.vx -= dx * pull; b.vy -= dy * pull
    }
    for (const p of points) {
      p.vx += (size / 2 - p.x) * 0.005; p.vy += (size / 2 - p.y) * 0.005
      // Room on the right for the longest labels.
      p.x = Math.min(size - 110, Math.max(20, p.x + p.vx * 0.5)); p.y = Math.min(size - 20, Math.max(20, p.y + p.vy * 0.5))
      p.vx *= 0.6; p.vy *= 0.6
    }
  }
  return at
}

/** The space's entity graph drawn as a graph (and, for screen readers, as a table of its links). */
export const graphPage = async (spaceId: string) => {
  const graph = await api("GET", `${spaceBase(spaceId)}/graph?limit=150`)
  const nodes = list(graph, "nodes")
  const edges = list(graph, "edges")
  const size = 640
  const at = layout(nodes.map((n) => str(n, "id")), edges.map((e) => [str(e, "source"), str(e, "target"), num(e, "weight")] as const), size)
  const most = Math.max(1, ...nodes.map((n) => num(n, "mention_count")))
  // A group, not an image: its nodes are buttons, which an image would hide from assistive technology.
  const drawing = svg("svg", { viewBox: `0 0 ${size} ${size}`, role: "group", "aria-labelledby": "graph-caption", class: "graph", id: "graph" },
    svg("title", { id: "graph-caption" }, document.createTextNode(`${plural(nodes.length, "entity", "entities")} and ${plural(edges.length, "link")}`)),
    ...edges.flatMap((e) => {
      const a = at.get(str(e, "source")), b = at.get(str(e, "target"))
      return a && b ? [svg("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "stroke-width": Math.min(6, 0.5 + num(e, "weight") / 2), class: "edge" })] : []
    }),
    ...nodes.flatMap((n) => {
      const p = at.get(str(n, "id"))
      if (p === undefined) return []
      const r = 4 + 10 * Math.sqrt(num(n, "mention_count") / most)
      return [svg("g", { class: "node", "data-entity": str(n, "label"), "data-id": str(n, "id"), tabindex: 0, role: "button", "aria-label": `Show what the memories say about ${str(n, "label")}` },
        svg("circle", { cx: p.x, cy: p.y, r }),
        svg("text", { x: p.x + r + 2, y: p.y + 4 }, document.createTextNode(str(n, "label"))))]
    }))
  // A node opens its entity: how often it is mentioned and the memories that name it.
  const detail = h("div", { id: "entity-detail", "aria-live": "polite" })
  const show = async (entityId: string) => {
    try {
      const entity = await api("GET", `${spaceBase(spaceId)}/entities/${encodeURIComponent(entityId)}`)
      detail.replaceChildren(h("article", { class: "card" },
        h("h3", {}, str(entity, "name")),
        h("p", {}, `${num(entity, "mention_count")} mentions, from ${formatDate(str(entity, "first_seen"))} to ${formatDate(str(entity, "last_seen"))}`),
        h("ul", {}, list(entity, "observations").map((o) => h("li", {}, str(o, "text"))))))
    } catch (error) {
      failed(error)
    }
  }
  for (const node of drawing.querySelectorAll<SVGGElement>("g.node")) {
    const open = () => void show(node.dataset.id ?? "")
    node.addEventListener("click", open)
    node.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault()
        open()
      }
    })
  }
  return h("section", { "aria-labelledby": "space-title" },
    spaceHeader(spaceId, "graph"),
    h("h2", {}, "Entity graph"),
    nodes.length === 0
      ? h("p", { class: "empty" }, "No entities yet: they come from what the space's memories name.")
      : h("div", { class: "graph-wrap" }, drawing),
    detail,
    h("p", {}, `${plural(num(graph, "total_entities"), "entity", "entities")}, ${plural(num(graph, "total_edges"), "link")} in all; the drawing shows the most mentioned.`),
    table("Links, strongest first", ["From", "To", "Together in"],
      [...edges].sort((a, b) => num(b, "weight") - num(a, "weight")).slice(0, 50)
        .map((e) => [str(e, "source_label"), str(e, "target_label"), plural(num(e, "weight"), "memory", "memories")])))
}
