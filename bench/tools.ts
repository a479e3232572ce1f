// Finds the external programs the benchmarks drive. The bench never installs anything itself:
// it names the apt-get line and lets the caller decide.
import { accessSync, constants } from "node:fs"
import { join } from "node:path"

// /usr/sbin is not on a non-root PATH, and Debian puts nginx there.
const searchPath = (): string[] => [...(process.env.PATH ?? "").split(":").filter(Boolean), "/usr/sbin", "/sbin"]

export const findExecutable = (name: string): string | undefined => {
  for (const dir of searchPath()) {
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // keep looking
    }
  }
  return undefined
}

export interface Tools {
  readonly nginx: string
  readonly wrk: string
  readonly curl: string
}

/** The tools, or undefined after printing how to install the missing ones. */
export const findTools = (): Tools | undefined => {
  const nginx = findExecutable("nginx")
  const wrk = findExecutable("wrk")
  const curl = findExecutable("curl")
  if (nginx !== undefined && wrk !== undefined && curl !== undefined) return { nginx, wrk, curl }
  const missing = [nginx ?? "nginx", wrk ?? "wrk", curl ?? "curl"].filter((t) => !t.includes("/"))
  console.error(`bench: missing ${missing.join(", ")}; install with:\n  apt-get update && apt-get install -y ${missing.join(" ")}`)
  return undefined
}
