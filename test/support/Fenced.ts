/**
 * Reading a fenced memory section (src/security/Fence.ts) as a model would:
 * the begin line, the intro, the memory lines, the end line with the same
 * boundary. Throws when the frame is not whole, so a test that reads the
 * lines also checks the frame.
 */
const BEGIN = /^<<<RECALLED MEMORIES ([A-Za-z0-9_-]{16})>>>$/

export interface Fenced {
  readonly boundary: string
  readonly intro: string
  readonly lines: ReadonlyArray<string>
}

export const readFenced = (section: string): Fenced => {
  const all = section.split("\n")
  const begin = BEGIN.exec(all[0] ?? "")
  if (begin === null) throw new Error(`not a fenced section: ${section.slice(0, 200)}`)
  const boundary = begin[1]!
  const end = all.indexOf(`<<<END RECALLED MEMORIES ${boundary}>>>`)
  if (end !== all.length - 1) throw new Error(`the section does not end with its own end line: ${section.slice(-200)}`)
  return { boundary, intro: all[1]!, lines: all.slice(2, end) }
}

/** The fenced section inside a longer text (a system prompt), and where it starts. */
export const findFenced = (text: string): Fenced & { readonly at: number } => {
  const at = text.search(/<<<RECALLED MEMORIES [A-Za-z0-9_-]{16}>>>/)
  if (at < 0) throw new Error(`no fenced section in: ${text.slice(0, 300)}`)
  const boundary = text.slice(at).split("\n")[0]!.slice("<<<RECALLED MEMORIES ".length, -3)
  const endLine = `<<<END RECALLED MEMORIES ${boundary}>>>`
  const stop = text.indexOf(endLine, at)
  if (stop < 0) throw new Error("the section is not closed")
  return { ...readFenced(text.slice(at, stop + endLine.length)), at }
}
