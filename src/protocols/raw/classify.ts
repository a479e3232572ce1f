// Raw repositories hold files by path. Everything is content, revalidated after contentMaxAge
// (raw files can change upstream under the same name).
import type { Route } from "../route.ts"

export const classify = (method: string, path: string): Route => {
  if (method !== "GET" && method !== "HEAD") {
    return { kind: "invalid", status: 405, message: `${method} is not supported: proxy repositories are read-only` }
  }
  if (path === "") return { kind: "invalid", status: 400, message: "a raw repository needs a file path after its name" }
  return { kind: "cached", key: path, upstreamPath: path, freshness: "content" }
}
