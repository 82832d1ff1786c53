/** HTML, Markdown and plain text: prose under its heading path, and tables as one section per row. */
import { Effect } from "effect"
import { convert, type DomNode, type FormatCallback } from "html-to-text"
import { lexer, type Token, type Tokens } from "marked"
import { attempt, bySections, decodeText, headingTrail, isRecord, oneLine, type Parser, prose, rowSections, type Section } from "./Shared.ts"

const BLOCK_TAGS = new Set(["p", "div", "br", "li", "ul", "ol", "tr", "table", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "blockquote", "pre"])

const nodeText = (node: DomNode): string => {
  if (node.type === "text") return node.data ?? ""
  if (node.type !== "tag" || node.name === "script" || node.name === "style") return ""
  const inner = (node.children ?? []).map(nodeText).join("")
  return node.name !== undefined && BLOCK_TAGS.has(node.name) ? ` ${inner} ` : inner
}

const tableRows = (table: DomNode): { readonly rows: Array<Array<string>>; readonly headed: boolean } => {
  const rows: Array<Array<string>> = []
  let headed = false
  const visit = (node: DomNode, inHead: boolean) => {
    for (const child of node.children ?? []) {
      if (child.type !== "tag" || child.name === "table") continue
      if (child.name !== "tr") {
        visit(child, inHead || child.name === "thead")
        continue
      }
      const cells = (child.children ?? []).filter((c) => c.type === "tag" && (c.name === "td" || c.name === "th"))
      if (rows.length === 0 && (inHead || (cells.length > 0 && cells.every((c) => c.name === "th")))) headed = true
      rows.push(cells.flatMap((cell) => {
        const span = Math.min(Math.max(Number(isRecord(cell.attribs) ? cell.attribs["colspan"] : 1) || 1, 1), 50)
        return [oneLine(nodeText(cell)), ...Array.from({ length: span - 1 }, () => "")]
      }))
    }
  }
  visit(table, false)
  return { rows, headed }
}

// Private-use characters mark headings and tables in html-to-text's output.
const MARKERS = /\uE000([1-6])\uE001([^\uE002]*)\uE002|\uE003(\d+)\uE004/g

/** HTML -> prose sections under their heading path, and tables as one section per row with the header kept. */
export const htmlSections = (html: string): Array<Section> => {
  const tables: Array<{ readonly rows: Array<Array<string>>; readonly headed: boolean }> = []
  const heading: FormatCallback = (elem, walk, builder) => {
    builder.openBlock({ leadingLineBreaks: 2 })
    builder.addLiteral(`\uE000${Number(elem.name?.slice(1)) || 1}\uE001`)
    walk(elem.children, builder)
    builder.addLiteral("\uE002")
    builder.closeBlock({ trailingLineBreaks: 2 })
  }
  const table: FormatCallback = (elem, _walk, builder) => {
    builder.openBlock({ leadingLineBreaks: 2 })
    builder.addLiteral(`\uE003${tables.length}\uE004`)
    tables.push(tableRows(elem))
    builder.closeBlock({ trailingLineBreaks: 2 })
  }
  const text = convert(html.replace(/[\uE000-\uE004]/g, ""), {
    wordwrap: false,
    // Uploads are capped well below this; html-to-text would otherwise cut long pages at 16M characters.
    limits: { maxInputLength: 1 << 30 },
    formatters: { engramHeading: heading, engramTable: table },
    selectors: [
      ...[1, 2, 3, 4, 5, 6].map((level) => ({ selector: `h${level}`, format: "engramHeading" })),
      { selector: "table", format: "engramTable" },
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" }
    ]
  })
  const sections: Array<Section> = []
  const trail = headingTrail()
  let last = 0
  for (const match of text.matchAll(MARKERS)) {
    sections.push(...prose(text.slice(last, match.index), trail.location()))
    last = match.index + match[0].length
    if (match[1] !== undefined) {
      trail.enter(Number(match[1]), match[2] ?? "")
      continue
    }
    const { rows, headed } = tables[Number(match[3])] ?? { rows: [], headed: false }
    const filled = rows.filter((row) => row.some((cell) => cell !== ""))
    // A lone row, or cells holding whole paragraphs (a table used for layout), read as prose.
    if (filled.length < 2 || (!headed && filled.some((row) => row.some((cell) => cell.length > 400)))) {
      sections.push(...prose(filled.map((row) => row.filter((cell) => cell !== "").join(" | ")).join("\n"), trail.location()))
      continue
    }
    const [header = [], ...body] = rows
    sections.push(...rowSections(header, body.map((cells, i) => ({ cells, row: i + 2 })), trail.location()))
  }
  sections.push(...prose(text.slice(last), trail.location()))
  return sections
}

export const parseHtml: Parser = (bytes, options, fail) =>
  Effect.map(attempt(fail, () => htmlSections(decodeText(bytes))), (sections) => bySections(sections, options))

const textField = (token: Token): string => ("text" in token && typeof token.text === "string" ? token.text : "")
const isHeading = (token: Token): token is Tokens.Heading => token.type === "heading" && "depth" in token && typeof token.depth === "number"
const isTable = (token: Token): token is Tokens.Table => token.type === "table" && "rows" in token && Array.isArray(token.rows)
const isList = (token: Token): token is Tokens.List => token.type === "list" && "items" in token && Array.isArray(token.items)
const childTokens = (token: Token): ReadonlyArray<Token> => ("tokens" in token && Array.isArray(token.tokens) ? token.tokens : [])

const entities: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: "\"", "#39": "'", nbsp: " " }
const unescape = (text: string) => text.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, name: string) => entities[name] ?? "")

const inlineText = (tokens: ReadonlyArray<Token>): string =>
  tokens.map((token) => {
    switch (token.type) {
      case "br":
        return "\n"
      case "html":
      case "checkbox":
        return ""
      case "image":
        return textField(token)
      default:
        return childTokens(token).length > 0 ? inlineText(childTokens(token)) : unescape(textField(token))
    }
  }).join("")

const blockText = (token: Token): string => {
  if (token.type === "space" || token.type === "hr" || token.type === "def") return ""
  if (token.type === "code") return textField(token)
  if (token.type === "html") return textField(token).replace(/<[^>]*>/g, " ")
  if (isList(token)) return token.items.map((item) => `- ${blocksText(item.tokens)}`).join("\n")
  if (isTable(token)) return [token.header, ...token.rows].map((row) => row.map((cell) => inlineText(cell.tokens)).join(" | ")).join("\n")
  if (token.type === "blockquote") return blocksText(childTokens(token))
  return childTokens(token).length > 0 ? inlineText(childTokens(token)) : unescape(textField(token))
}

const blocksText = (tokens: ReadonlyArray<Token>) => tokens.map(blockText).filter((text) => text.trim() !== "").join("\n")

export const markdownSections = (source: string): Array<Section> => {
  const sections: Array<Section> = []
  const trail = headingTrail()
  let pending: Array<string> = []
  const flush = () => {
    sections.push(...prose(pending.join("\n\n"), trail.location()))
    pending = []
  }
  for (const token of lexer(source)) {
    if (isHeading(token)) {
      flush()
      trail.enter(token.depth, inlineText(token.tokens))
    } else if (isTable(token)) {
      flush()
      const header = token.header.map((cell) => inlineText(cell.tokens))
      const rows = token.rows.map((row, i) => ({ cells: row.map((cell) => inlineText(cell.tokens)), row: i + 2 }))
      sections.push(...rowSections(header, rows, trail.location()))
    } else {
      pending.push(blockText(token))
    }
  }
  flush()
  return sections
}

export const parseMarkdown: Parser = (bytes, options, fail) =>
  Effect.map(attempt(fail, () => markdownSections(decodeText(bytes))), (sections) => bySections(sections, options))

export const parseText: Parser = (bytes, options, fail) =>
  Effect.map(
    attempt(fail, () => decodeText(bytes).split(/\r?\n[ \t]*\r?\n/).flatMap((paragraph) => prose(paragraph, {}))),
    (sections) => bySections(sections, options)
  )
