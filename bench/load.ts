// Load generators shared by the benchmarks. Clients are separate processes (wrk, curl) so the
// bench process, which also serves the upstream fixture, never becomes the bottleneck.
import { execFile, spawn } from "node:child_process"
import { performance } from "node:perf_hooks"

export interface WrkResult {
  readonly requestsPerSecond: number
  readonly requests: number
  readonly non2xx: number
  readonly socketErrors: number
}

const parseWrk = (output: string): WrkResult => {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(output)
  const total = /(\d+) requests in/.exec(output)
  if (rps === null || total === null) throw new Error(`could not read wrk output:\n${output}`)
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(output)
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output)
  return {
    requestsPerSecond: Number(rps[1]),
    requests: Number(total[1]),
    non2xx: non2xx === null ? 0 : Number(non2xx[1]),
    socketErrors: errors === null ? 0 : errors.slice(1).reduce((sum, n) => sum + Number(n), 0)
  }
}

/** Keep-alive request rate against one URL with wrk. */
export const wrkRate = (options: {
  readonly wrk: string
  readonly url: string
  readonly connections: number
  readonly seconds: number
  readonly threads?: number
  readonly headers?: Record<string, string>
}): Promise<WrkResult> => {
  const threads = Math.min(options.threads ?? 2, options.connections)
  const headerArgs = Object.entries(options.headers ?? {}).flatMap(([k, v]) => ["-H", `${k}: ${v}`])
  const args = ["-t", String(threads), "-c", String(options.connections), "-d", `${options.seconds}s`, "--timeout", "5s", ...headerArgs, options.url]
  return new Promise((resolve, reject) =>
    execFile(options.wrk, args, { timeout: (options.seconds + 30) * 1000, killSignal: "SIGKILL" }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`wrk failed: ${error.message}\n${stderr}`))
      try {
        resolve(parseWrk(stdout))
      } catch (parseError) {
        reject(parseError)
      }
    })
  )
}

export interface Download {
  readonly status: number
  readonly bytes: number
  /** from spawning curl to its exit, as the caller sees it */
  readonly seconds: number
  /** since the start of the batch it belongs to */
  readonly finishedAfterSeconds: number
}

/** One GET with curl into /dev/null; bounded by maxSeconds. */
export const curlDownload = (options: {
  readonly curl: string
  readonly url: string
  readonly maxSeconds: number
  readonly headers?: Record<string, string>
  readonly batchStart?: number
}): Promise<Download> => {
  const headerArgs = Object.entries(options.headers ?? {}).flatMap(([k, v]) => ["-H", `${k}: ${v}`])
  const args = ["-s", "-o", "/dev/null", "--max-time", String(options.maxSeconds), "-w", "%{http_code} %{size_download}", ...headerArgs, options.url]
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(options.curl, args, { stdio: ["ignore", "pipe", "pipe"], timeout: (options.maxSeconds + 10) * 1000, killSignal: "SIGKILL" })
    let out = ""
    child.stdout.on("data", (chunk) => (out += chunk))
    child.stderr.on("data", (chunk) => (out += chunk))
    child.once("error", reject)
    child.once("close", (code) => {
      const finished = performance.now()
      const [status, bytes] = out.trim().split(" ").map(Number)
      if (code !== 0) return reject(new Error(`curl ${options.url} exited with ${code}: ${out}`))
      resolve({
        status,
        bytes,
        seconds: (finished - started) / 1000,
        finishedAfterSeconds: (finished - (options.batchStart ?? started)) / 1000
      })
    })
  })
}

export interface Batch {
  readonly downloads: ReadonlyArray<Download>
  /** start of the batch to the last client finishing */
  readonly wallSeconds: number
  readonly bytes: number
}

/** `clients` concurrent curl downloads of the same URL; fails if any is not a full 200. */
export const concurrentDownloads = async (options: {
  readonly curl: string
  readonly url: string
  readonly clients: number
  readonly expectedBytes: number
  readonly maxSeconds: number
  readonly headers?: Record<string, string>
}): Promise<Batch> => {
  const batchStart = performance.now()
  const downloads = await Promise.all(
    Array.from({ length: options.clients }, () => curlDownload({ ...options, batchStart }))
  )
  const wallSeconds = (performance.now() - batchStart) / 1000
  const bad = downloads.filter((d) => d.status !== 200 || d.bytes !== options.expectedBytes)
  if (bad.length > 0) {
    throw new Error(`${bad.length}/${downloads.length} downloads of ${options.url} were incomplete: ` +
      bad.slice(0, 3).map((d) => `${d.status} ${d.bytes} B`).join(", "))
  }
  return { downloads, wallSeconds, bytes: downloads.reduce((sum, d) => sum + d.bytes, 0) }
}
