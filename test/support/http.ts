// A small HTTP client for tests: sends the path exactly as given (no normalisation of "..", unlike
// fetch or curl), can bind a local address, and reports whether the body arrived complete.
import { createHash } from "node:crypto"
import { request, type IncomingHttpHeaders } from "node:http"

export interface Reply {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: Buffer
  /** false when the connection ended before the declared body was complete */
  readonly complete: boolean
}

export interface RequestOptions {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly localAddress?: string
  /** called on every body chunk (e.g. to see that bytes arrive before the end) */
  readonly onData?: (chunk: Buffer) => void
  /** keep only the sha256 of the body, not its bytes */
  readonly hashOnly?: boolean
  /** request body */
  readonly body?: string | Buffer
}

export const send = (base: string, path: string, options: RequestOptions = {}) =>
  new Promise<Reply & { readonly sha256: string }>((resolve, reject) => {
    const url = new URL(base)
    const req = request({
      host: url.hostname,
      port: url.port,
      path,
      method: options.method ?? "GET",
      headers: options.headers,
      localAddress: options.localAddress,
      agent: false
    })
    req.setTimeout(60_000, () => req.destroy(new Error(`timeout on ${path}`)))
    req.on("error", reject)
    req.on("response", (res) => {
      const chunks: Array<Buffer> = []
      const hash = createHash("sha256")
      let settled = false
      const finish = (complete: boolean) => {
        if (settled) return
        settled = true
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks),
          complete,
          sha256: hash.digest("hex")
        })
      }
      res.on("data", (chunk: Buffer) => {
        hash.update(chunk)
        if (!options.hashOnly) chunks.push(chunk)
        options.onData?.(chunk)
      })
      res.on("end", () => finish(res.complete))
      res.on("error", () => finish(false))
      res.on("close", () => finish(res.complete))
    })
    req.end(options.body)
  })

export const sha256 = (data: Buffer | string): string => createHash("sha256").update(data).digest("hex")

/** Reads one sample of a Prometheus metric from exposition text (0 when absent). */
export const metricValue = (text: string, name: string, labels: Record<string, string> = {}): number => {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue
    const match = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line)
    if (match === null || match[1] !== name) continue
    const present = Object.fromEntries(
      [...(match[3] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]])
    )
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[4])
  }
  return 0
}
