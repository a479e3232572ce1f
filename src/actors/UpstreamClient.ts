// The HTTP client larder uses for upstreams: keep-alive agents, redirects followed (credentials
// dropped when the host changes), connect/idle timeouts, retries with jittered backoff only before
// the first byte, and a concurrency limit per upstream origin.
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import { Context, Effect, Layer, Schedule, Schema, Semaphore } from "effect"

export class UpstreamUnreachable extends Schema.TaggedError<UpstreamUnreachable>()("UpstreamUnreachable", {
  url: Schema.String,
  message: Schema.String
}) {}

export interface UpstreamResponse {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: IncomingMessage
  /** the URL that answered, after redirects */
  readonly url: string
}

export interface UpstreamRequest {
  readonly url: string
  readonly method?: "GET" | "HEAD"
  readonly headers?: Record<string, string>
}

export interface UpstreamClientOptions {
  readonly connectTimeoutMs: number
  readonly idleTimeoutMs: number
  readonly concurrencyPerUpstream: number
  readonly retries: number
}

export const defaultUpstreamClientOptions: UpstreamClientOptions = {
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 30_000,
  concurrencyPerUpstream: 32,
  retries: 2
}

const redirectStatuses = new Set([301, 302, 303, 307, 308])
const maxRedirects = 5
// Headers that carry credentials: never sent to a host the request was redirected to.
const credentialHeaders = ["authorization", "cookie", "proxy-authorization"]

class RetryableError extends Error {}

export class UpstreamClient extends Context.Service<UpstreamClient, {
  /**
   * Sends the request and resolves once response headers arrive; the caller must consume or
   * destroy `body`. The per-upstream permit is held until the body ends or is destroyed.
   */
  readonly request: (request: UpstreamRequest) => Effect.Effect<UpstreamResponse, UpstreamUnreachable>
}>()("larder/actors/UpstreamClient") {
  static readonly make = (options: UpstreamClientOptions = defaultUpstreamClientOptions) =>
    Effect.gen(function*() {
      const agentOptions = { keepAlive: true, maxSockets: options.concurrencyPerUpstream, scheduling: "lifo" as const }
      const httpAgent = new HttpAgent(agentOptions)
      const httpsAgent = new HttpsAgent(agentOptions)
      yield* Effect.addFinalizer(() => Effect.sync(() => (httpAgent.destroy(), httpsAgent.destroy())))
      const semaphores = new Map<string, Semaphore.Semaphore>()
      const semaphoreFor = (origin: string) => {
        let semaphore = semaphores.get(origin)
        if (semaphore === undefined) {
          semaphore = Semaphore.makeUnsafe(options.concurrencyPerUpstream)
          semaphores.set(origin, semaphore)
        }
        return semaphore
      }

      const once = (url: URL, method: string, headers: Record<string, string>) =>
        new Promise<IncomingMessage>((resolve, reject) => {
          const send = url.protocol === "https:" ? httpsRequest : httpRequest
          const req = send(url, {
            method,
            headers: { "user-agent": "larder", ...headers },
            agent: url.protocol === "https:" ? httpsAgent : httpAgent
          })
          const connectTimer = setTimeout(
            () => req.destroy(new RetryableError(`no response within ${options.connectTimeoutMs} ms`)),
            options.connectTimeoutMs
          )
          // Idle: no byte in either direction for this long ends the exchange, before or after headers.
          req.setTimeout(options.idleTimeoutMs, () => req.destroy(new Error(`idle for ${options.idleTimeoutMs} ms`)))
          req.once("response", (res) => {
            clearTimeout(connectTimer)
            resolve(res)
          })
          req.once("error", (error) => {
            clearTimeout(connectTimer)
            reject(error instanceof RetryableError ? error : new RetryableError(error.message))
          })
          req.end()
        })

      const follow = async (request: UpstreamRequest): Promise<UpstreamResponse> => {
        let url = new URL(request.url)
        const originalHost = url.host
        let headers = { ...request.headers }
        for (let hop = 0; ; hop++) {
          const res = await once(url, request.method ?? "GET", headers)
          const location = res.headers.location
          if (!redirectStatuses.has(res.statusCode ?? 0) || location === undefined || hop >= maxRedirects) {
            return { status: res.statusCode ?? 502, headers: res.headers, body: res, url: url.href }
          }
          res.resume()
          url = new URL(location, url)
          if (url.host !== originalHost) {
            headers = Object.fromEntries(
              Object.entries(headers).filter(([name]) => !credentialHeaders.includes(name.toLowerCase()))
            )
          }
        }
      }

      const request = (upstream: UpstreamRequest) =>
        Effect.gen(function*() {
          const semaphore = semaphoreFor(new URL(upstream.url).origin)
          yield* semaphore.take(1)
          const response = yield* Effect.tryPromise({
            try: () => follow(upstream),
            catch: (error) => error as Error
          }).pipe(
            Effect.retry({
              schedule: Schedule.exponential("100 millis").pipe(Schedule.jittered),
              times: options.retries,
              while: (error) => error instanceof RetryableError
            }),
            Effect.mapError((error) => new UpstreamUnreachable({ url: upstream.url, message: error.message })),
            Effect.onError(() => semaphore.release(1))
          )
          let released = false
          const release = () => {
            if (released) return
            released = true
            Effect.runFork(semaphore.release(1))
          }
          response.body.once("end", release)
          response.body.once("close", release)
          response.body.once("error", release)
          return response
        })

      return UpstreamClient.of({ request })
    })

  static readonly layer = (options?: UpstreamClientOptions) => Layer.effect(UpstreamClient, UpstreamClient.make(options))
}
