/** `postgres://user:secret@host:5432/db?x` -> `postgres://host:5432/db`: connection URLs safe for logs and messages. */
export const describeUrl = (url: string) => {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`
  } catch {
    return "(unparseable URL)"
  }
}
