// Files under a directory, for tests that compare a tree before and after, or count blob files.
import { readFileSync, readdirSync, statSync } from "node:fs"
import { join, relative } from "node:path"

/** every regular file below `dir` (relative path → stat), depth first, names sorted */
export const listTree = (dir: string): Map<string, ReturnType<typeof statSync> & {}> => {
  const out = new Map<string, ReturnType<typeof statSync> & {}>()
  const walk = (path: string) => {
    for (const name of readdirSync(path).sort()) {
      const full = join(path, name)
      const stat = statSync(full)
      if (stat.isDirectory()) walk(full)
      else out.set(relative(dir, full), stat)
    }
  }
  walk(dir)
  return out
}

/** every file below `dir` with its mode and bytes: equal snapshots mean a byte-identical tree */
export const snapshotTree = (dir: string): Record<string, string> =>
  Object.fromEntries(
    [...listTree(dir)].map(([path, stat]) => [path, `${(Number(stat.mode) & 0o7777).toString(8)} ${readFileSync(join(dir, path)).toString("base64")}`])
  )
