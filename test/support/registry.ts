// A real container registry for the image-proxy tests: Debian's docker-registry (distribution
// 2.8) on a free loopback port with filesystem storage in a temp dir, behind a small counting HTTP
// proxy. `url`/`host` are the proxy (what larder should be pointed at: every request it sees is
// recorded, and it can add auth or inject faults); `directUrl`/`directHost` are the registry
// itself, where `push` goes so that pushes never show up in the counts.
//
// skopeo runs with a private HOME, auth file, policy and registries configuration, so nothing on
// the host changes; always asynchronously (the fixtures share the event loop with the tests).
import { freePort } from "./ports.ts"
import { execFile, spawn, type ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from "node:fs"
import { readFile, rm, writeFile } from "node:fs/promises"
import { createServer, request, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

// ---------------------------------------------------------------------------------------------
// skopeo

export const skopeoBinary = "skopeo"
export const registryBinary = "docker-registry"

interface SkopeoContext {
  readonly globalArgs: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
  readonly authFile: string
}

let context: SkopeoContext | undefined

/** One private configuration per test process, removed when it exits. */
const skopeoContext = (): SkopeoContext => {
  if (context !== undefined) return context
  const home = mkdtempSync(join(tmpdir(), "larder-skopeo-"))
  process.once("exit", () => rmSync(home, { recursive: true, force: true }))
  for (const sub of ["config", "data", "cache", "run", "tmp", "registries.d", "docker"]) mkdirSync(join(home, sub), { mode: 0o700 })
  const authFile = join(home, "auth.json")
  writeFileSync(authFile, JSON.stringify({ auths: {} }), { mode: 0o600 })
  writeFileSync(join(home, "policy.json"), JSON.stringify({ default: [{ type: "insecureAcceptAnything" }] }))
  writeFileSync(join(home, "registries.conf"), "unqualified-search-registries = []\n")
  writeFileSync(join(home, "containers.conf"), "")
  const uid = process.getuid?.() ?? 1000
  context = {
    globalArgs: ["--policy", join(home, "policy.json"), "--registries.d", join(home, "registries.d"), "--tmpdir", join(home, "tmp")],
    env: {
      PATH: process.env.PATH,
      HOME: home,
      XDG_CONFIG_HOME: join(home, "config"),
      XDG_DATA_HOME: join(home, "data"),
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_RUNTIME_DIR: join(home, "run"),
      DOCKER_CONFIG: join(home, "docker"),
      REGISTRY_AUTH_FILE: authFile,
      CONTAINERS_REGISTRIES_CONF: join(home, "registries.conf"),
      CONTAINERS_CONF: join(home, "containers.conf"),
      // As root, containers/image keeps its blob-info cache in /var/lib/containers/cache whatever
      // HOME says; claiming a rootless uid moves it under XDG_DATA_HOME (our temp dir).
      ...(uid === 0 ? { _CONTAINERS_ROOTLESS_UID: "65534" } : {})
    },
    authFile
  }
  return context
}

export interface SkopeoResult {
  readonly stdout: Buffer
  readonly stderr: string
}

export interface SkopeoOptions {
  /** default 60 s; the process is killed after it */
  readonly timeoutMs?: number
}

/** Runs skopeo with the private configuration; rejects with its stderr on a non-zero exit. */
export const skopeo = (args: ReadonlyArray<string>, options: SkopeoOptions = {}): Promise<SkopeoResult> => {
  const ctx = skopeoContext()
  const argv = [...ctx.globalArgs, ...args]
  return new Promise((resolve, reject) => {
    execFile(
      skopeoBinary,
      argv,
      { env: ctx.env, encoding: "buffer", timeout: options.timeoutMs ?? 60_000, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error !== null) {
          const reason = error.killed ? `killed after ${options.timeoutMs ?? 60_000} ms` : `exit ${error.code}`
          reject(new Error(`skopeo ${argv.join(" ")}: ${reason}\n${stderr.toString()}`))
        } else resolve({ stdout, stderr: stderr.toString() })
      }
    )
  })
}

const transports = /^(docker|oci|oci-archive|dir|docker-archive|docker-daemon|containers-storage|ostree|sif|tarball):/
/** "127.0.0.1:5000/library/alpine:3.20" -> "docker://127.0.0.1:5000/library/alpine:3.20"; refs with a transport stay. */
export const imageRef = (ref: string): string => (transports.test(ref) ? ref : `docker://${ref}`)

/**
 * `skopeo copy` between two references (a bare "host/name:tag" means docker://), TLS verification off
 * on both sides and the private auth file. extraArgs go before the references, e.g. ["--multi-arch", "all"].
 */
export const skopeoCopy = (src: string, dest: string, extraArgs: ReadonlyArray<string> = [], options: SkopeoOptions = {}) =>
  skopeo(
    ["copy", "--quiet", "--src-tls-verify=false", "--dest-tls-verify=false", "--authfile", skopeoContext().authFile, ...extraArgs, imageRef(src), imageRef(dest)],
    options
  )

export interface SkopeoInspectResult {
  readonly Digest: string
  readonly Architecture: string
  readonly Os: string
  readonly Layers: ReadonlyArray<string>
  readonly [key: string]: unknown
}

/**
 * `skopeo inspect` (a bare "host/name:tag" means docker://). raw: the exact manifest bytes (their
 * sha256 is the manifest digest); otherwise the parsed summary (with --no-tags, so it does not list tags).
 */
export function skopeoInspect(ref: string, raw: true, extraArgs?: ReadonlyArray<string>): Promise<Buffer>
export function skopeoInspect(ref: string, raw?: false, extraArgs?: ReadonlyArray<string>): Promise<SkopeoInspectResult>
export async function skopeoInspect(ref: string, raw = false, extraArgs: ReadonlyArray<string> = []): Promise<Buffer | SkopeoInspectResult> {
  const args = ["inspect", "--tls-verify=false", "--authfile", skopeoContext().authFile, ...(raw ? ["--raw"] : ["--no-tags"]), ...extraArgs, imageRef(ref)]
  const { stdout } = await skopeo(args)
  return raw ? stdout : (JSON.parse(stdout.toString()) as SkopeoInspectResult)
}

// ---------------------------------------------------------------------------------------------
// the registry and its counting proxy

export type RegistryAuth =
  /** the proxy wants `Authorization: Basic` with these credentials on /v2/… */
  | { readonly type: "basic"; readonly username: string; readonly password: string }
  /**
   * Docker-Hub style: /v2/… answers 401 with a Bearer challenge whose realm is `<url>/token`; the
   * token endpoint wants Basic credentials when username/password are set (else anonymous) and
   * issues tokens for the requested `repository:<name>:<actions>` scopes, valid for expiresIn s.
   */
  | {
      readonly type: "bearer"
      readonly username?: string
      readonly password?: string
      readonly service?: string
      readonly expiresIn?: number
    }

export interface RegistryOptions {
  /** default: no auth */
  readonly auth?: RegistryAuth
  /** the registry's log level; default "warn" */
  readonly logLevel?: "error" | "warn" | "info" | "debug"
  /** edit the generated config (a plain object written as config.yml) before the start */
  readonly configure?: (config: Record<string, any>) => void
  /** keep the temp dir (config + storage) after stop(); default false */
  readonly keep?: boolean
  /** default 20 s */
  readonly startTimeoutMs?: number
}

export interface RecordedRequest {
  readonly method: string
  /** path without the query string */
  readonly path: string
  readonly query: string
  readonly headers: IncomingHttpHeaders
  /** the status the proxy answered with; 0 while unanswered or if the exchange failed */
  readonly status: number
  /** body bytes the proxy sent to the client */
  readonly bytes: number
}

/** Answer instead of forwarding ("drop" destroys the connection without an answer). */
export type InterceptReply =
  | "drop"
  | { readonly status: number; readonly headers?: Record<string, string>; readonly body?: Buffer | string }

export type RequestFilter = string | RegExp | ((request: RecordedRequest) => boolean)

export interface PushOptions {
  /** the source tag in an OCI layout given as a directory; default: the tag of `ref` */
  readonly tag?: string
  /** default ["--multi-arch", "all", "--preserve-digests"] */
  readonly args?: ReadonlyArray<string>
  /** more skopeo copy arguments, e.g. ["--format", "v2s2"] (then drop --preserve-digests via args) */
  readonly extraArgs?: ReadonlyArray<string>
}

export interface Registry {
  /** the counting proxy, e.g. http://127.0.0.1:41234 */
  readonly url: string
  /** "127.0.0.1:<proxy port>", for image references */
  readonly host: string
  /** the registry itself */
  readonly directUrl: string
  readonly directHost: string
  /** config.yml and storage/ */
  readonly dir: string
  readonly process: ChildProcess
  /** every request the proxy received, oldest first; clear with `requests.length = 0` */
  readonly requests: Array<RecordedRequest>
  /** requests whose path equals a string, matches a RegExp, or satisfies a predicate */
  readonly count: (filter: RequestFilter) => number
  /** set to answer some requests from the proxy (e.g. a 503 or a dropped connection); undefined forwards */
  intercept: ((request: RecordedRequest) => InterceptReply | undefined) | undefined
  /**
   * Pushes to the registry directly (not counted). source: a layout from ociImage.ts, a skopeo
   * reference ("oci:…", "dir:…"), or an OCI layout directory (tag: options.tag ?? ref's tag).
   * ref: "library/alpine:3.20". Resolves with the digest skopeo pushed (of the index for lists).
   */
  readonly push: (source: string | { readonly ref: string }, ref: string, options?: PushOptions) => Promise<string>
  /** the registry's stderr so far */
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const probe = (url: string): Promise<number> =>
  new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 1000 }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => resolve(0))
    req.end()
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const baseConfig = (dir: string, port: number, logLevel: string): Record<string, any> => ({
  version: 0.1,
  log: { level: logLevel, formatter: "text", accesslog: { disabled: true } },
  storage: {
    filesystem: { rootdirectory: join(dir, "storage") },
    delete: { enabled: true },
    maintenance: { uploadpurging: { enabled: false } }
  },
  http: { addr: `127.0.0.1:${port}`, headers: { "X-Content-Type-Options": ["nosniff"] } }
})

interface Running {
  readonly child: ChildProcess
  readonly port: number
  readonly exited: Promise<void>
  readonly output: () => string
}

/** Starts docker-registry on a free port; retries with another port if that one got taken. */
const startRegistryProcess = async (dir: string, options: RegistryOptions): Promise<Running> => {
  const deadline = Date.now() + (options.startTimeoutMs ?? 20_000)
  let lastOutput = ""
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    const config = baseConfig(dir, port, options.logLevel ?? "warn")
    options.configure?.(config)
    const configFile = join(dir, "config.yml")
    await writeFile(configFile, JSON.stringify(config, null, 2)) // JSON is YAML
    const child = spawn(registryBinary, ["serve", configFile], { stdio: ["ignore", "ignore", "pipe"] })
    let output = ""
    child.stderr!.on("data", (chunk: Buffer) => {
      if (output.length < 1_000_000) output += chunk
    })
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    child.once("error", (error) => (output += `\nspawn ${registryBinary}: ${error.message}`))
    let running = true
    void exited.then(() => (running = false))
    while (running && Date.now() < deadline) {
      if ((await probe(`http://127.0.0.1:${port}/v2/`)) === 200) return { child, port, exited, output: () => output }
      await sleep(50)
    }
    if (running) {
      child.kill("SIGKILL")
      await exited
      throw new Error(`docker-registry did not answer GET /v2/ in time:\n${output}`)
    }
    lastOutput = output
    if (!/address already in use/.test(output)) break
  }
  throw new Error(`docker-registry exited before it was ready:\n${lastOutput}`)
}

const unauthorized = (res: ServerResponse, challenge: string, message = "authentication required") => {
  const body = JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message, detail: null }] })
  res.writeHead(401, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "www-authenticate": challenge })
  res.end(body)
}

const basicCredentials = (header: string | undefined): { username: string; password: string } | undefined => {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? "")
  if (match === null) return undefined
  const decoded = Buffer.from(match[1], "base64").toString()
  const colon = decoded.indexOf(":")
  return colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

/** The repository a /v2/… path is about, or undefined for /v2/ and /v2/_catalog. */
const repositoryOf = (path: string): string | undefined => /^\/v2\/(.+?)\/(manifests|blobs|tags)\//.exec(path)?.[1]

/** Auth the proxy enforces; undefined when the request may pass (or has been answered). */
const makeAuth = (auth: RegistryAuth | undefined, baseUrl: () => string) => {
  if (auth === undefined) return { gate: () => true, token: undefined }
  if (auth.type === "basic") {
    const gate = (req: IncomingMessage, res: ServerResponse): boolean => {
      const creds = basicCredentials(req.headers.authorization)
      if (creds?.username === auth.username && creds.password === auth.password) return true
      unauthorized(res, `Basic realm="larder-test-registry"`)
      return false
    }
    return { gate, token: undefined }
  }
  const service = auth.service ?? "larder-test-registry"
  const tokens = new Map<string, { readonly expires: number; readonly scopes: Map<string, Set<string>> }>()
  const challenge = (repository: string | undefined, actions: string) =>
    `Bearer realm="${baseUrl()}/token",service="${service}"` + (repository === undefined ? "" : `,scope="repository:${repository}:${actions}"`)
  const gate = (req: IncomingMessage, res: ServerResponse, path: string): boolean => {
    const repository = repositoryOf(path)
    const actions = req.method === "GET" || req.method === "HEAD" ? "pull" : "pull,push"
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? "")?.[1]
    const grant = token === undefined ? undefined : tokens.get(token)
    if (grant === undefined || grant.expires < Date.now()) {
      unauthorized(res, challenge(repository, actions), grant === undefined ? "authentication required" : "token expired")
      return false
    }
    if (repository !== undefined && !actions.split(",").every((action) => grant.scopes.get(repository)?.has(action))) {
      unauthorized(res, challenge(repository, actions) + `,error="insufficient_scope"`, "insufficient scope")
      return false
    }
    return true
  }
  /** GET /token?service=…&scope=repository:name:pull[&scope=…] */
  const token = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => {
    if (auth.username !== undefined) {
      const creds = basicCredentials(req.headers.authorization)
      if (creds?.username !== auth.username || creds.password !== auth.password) {
        return unauthorized(res, `Basic realm="larder-test-token"`, "bad credentials")
      }
    }
    const scopes = new Map<string, Set<string>>()
    for (const scope of query.getAll("scope").flatMap((s) => s.split(" "))) {
      const match = /^repository:(.+):([a-z,*]+)$/.exec(scope)
      if (match === null) continue
      const set = scopes.get(match[1]) ?? new Set<string>()
      for (const action of match[2].split(",")) set.add(action)
      scopes.set(match[1], set)
    }
    const expiresIn = auth.expiresIn ?? 300
    const value = randomBytes(24).toString("base64url")
    tokens.set(value, { expires: Date.now() + expiresIn * 1000, scopes })
    const body = JSON.stringify({ token: value, access_token: value, expires_in: expiresIn, issued_at: new Date().toISOString() })
    res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) })
    res.end(body)
  }
  return { gate, token }
}

/** Starts the registry and its counting proxy. */
export const startRegistry = async (options: RegistryOptions = {}): Promise<Registry> => {
  const dir = mkdtempSync(join(tmpdir(), "larder-registry-"))
  let running: Running
  try {
    running = await startRegistryProcess(dir, options)
  } catch (error) {
    if (!options.keep) await rm(dir, { recursive: true, force: true })
    throw error
  }
  const directHost = `127.0.0.1:${running.port}`
  const requests: Array<RecordedRequest> = []
  let proxyUrl = ""
  const auth = makeAuth(options.auth, () => proxyUrl)

  const server: Server = createServer((req, res) => {
    const [path, query = ""] = (req.url ?? "/").split(/\?(.*)/s)
    const record = { method: req.method ?? "GET", path, query, headers: req.headers, status: 0, bytes: 0 }
    requests.push(record)
    const writeHead = res.writeHead.bind(res)
    res.writeHead = ((status: number, ...rest: Array<any>) => {
      record.status = status
      return writeHead(status, ...rest)
    }) as typeof res.writeHead
    const write = res.write.bind(res)
    res.write = ((chunk: any, ...rest: Array<any>) => {
      if (typeof chunk !== "function" && chunk != null) record.bytes += Buffer.byteLength(chunk)
      return write(chunk, ...rest)
    }) as typeof res.write
    const end = res.end.bind(res)
    res.end = ((chunk?: any, ...rest: Array<any>) => {
      if (typeof chunk !== "function" && chunk != null) record.bytes += Buffer.byteLength(chunk)
      return end(chunk, ...rest)
    }) as typeof res.end

    const reply = registry.intercept?.(record)
    if (reply === "drop") return void req.socket.destroy()
    if (reply !== undefined) {
      const body = typeof reply.body === "string" ? Buffer.from(reply.body) : reply.body ?? Buffer.alloc(0)
      res.writeHead(reply.status, { "content-length": String(body.length), ...reply.headers })
      return void res.end(req.method === "HEAD" ? undefined : body)
    }
    if (auth.token !== undefined && path === "/token") return auth.token(req, res, new URLSearchParams(query))
    if (path.startsWith("/v2") && !auth.gate(req, res, path)) return

    const headers = { ...req.headers }
    if (options.auth !== undefined) delete headers.authorization
    // the Host header stays the proxy's, so the registry's absolute Location URLs point back here
    const upstream = request({ host: "127.0.0.1", port: running.port, method: req.method, path: req.url, headers, agent: false })
    upstream.on("response", (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers)
      upstreamRes.pipe(res)
      upstreamRes.on("error", () => res.destroy())
    })
    upstream.on("error", () => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "text/plain" })
        res.end("registry unreachable\n")
      } else res.destroy()
    })
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy()
    })
    req.pipe(upstream)
  })
  server.keepAliveTimeout = 1000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`
  proxyUrl = `http://${host}`

  const registry: Registry = {
    url: proxyUrl,
    host,
    directUrl: `http://${directHost}`,
    directHost,
    dir,
    process: running.child,
    requests,
    count: (filter) =>
      requests.filter((r) => (typeof filter === "string" ? r.path === filter : filter instanceof RegExp ? filter.test(r.path) : filter(r))).length,
    intercept: undefined,
    push: async (source, ref, pushOptions = {}) => {
      const tag = pushOptions.tag ?? /:([^:/]+)$/.exec(ref)?.[1] ?? "latest"
      const src = typeof source !== "string" ? source.ref : transports.test(source) ? source : `oci:${source}:${tag}`
      const digestFile = join(dir, `digest-${randomBytes(6).toString("hex")}`)
      await skopeoCopy(src, `docker://${directHost}/${ref}`, [
        ...(pushOptions.args ?? ["--multi-arch", "all", "--preserve-digests"]),
        "--digestfile",
        digestFile,
        ...(pushOptions.extraArgs ?? [])
      ])
      const digest = (await readFile(digestFile, "utf8")).trim()
      await rm(digestFile, { force: true })
      return digest
    },
    output: running.output,
    stop: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      if (running.child.exitCode === null && running.child.signalCode === null) {
        running.child.kill("SIGTERM")
        const timer = setTimeout(() => running.child.kill("SIGKILL"), 5_000)
        await running.exited
        clearTimeout(timer)
      }
      if (!options.keep) await rm(dir, { recursive: true, force: true })
    }
  }
  return registry
}
