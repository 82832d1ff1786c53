// The newest modification time among the sources dist/ is built from: dist/
// is used only while it was built after every one of them.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

const DIRECTORIES = ["src", "layers", "services"]

export const newestSource = (root) => {
  let newest = statSync(join(root, "package.json")).mtimeMs
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.(ts|mjs|js|json)$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs)
    }
  }
  for (const directory of DIRECTORIES) walk(join(root, directory))
  return newest
}

// Whether dist/ was built after every source (its build.json says when); false when it is missing or unreadable.
export const bundleIsCurrent = (root) => {
  const stamp = join(root, "dist", "build.json")
  if (!existsSync(stamp)) return false
  try {
    return JSON.parse(readFileSync(stamp, "utf8")).newest_source_ms >= newestSource(root)
  } catch {
    return false
  }
}
