// The base URL a client reached larder at, for metadata that must point back at larder: the Host
// header and the connection's scheme, or X-Forwarded-Host/-Proto when the request comes from a
// trusted proxy (an ingress or nginx in front). Untrusted clients cannot choose what others see:
// rewritten metadata is cached per base URL.
import type { IncomingHttpHeaders } from "node:http"
import type { SourceRanges } from "./SourceRanges.ts"

// host, IPv4, [IPv6] with an optional port; anything else is not used in URLs
const validHost = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

const first = (value: string | Array<string> | undefined): string | undefined =>
  (Array.isArray(value) ? value[0] : value)?.split(",")[0]?.trim()

export interface ClientSocket {
  readonly remoteAddress?: string | undefined
  readonly localAddress?: string | undefined
  readonly localPort?: number | undefined
}

export const publicOrigin = (headers: IncomingHttpHeaders, socket: ClientSocket, trustedProxies: SourceRanges | undefined): string => {
  const trusted = trustedProxies !== undefined && trustedProxies.allows(socket.remoteAddress)
  const encrypted = "encrypted" in socket
  const local = socket.localAddress ?? "localhost"
  const fallbackHost = `${local.includes(":") ? `[${local}]` : local}:${socket.localPort ?? 80}`
  const forwardedHost = trusted ? first(headers["x-forwarded-host"]) : undefined
  const forwardedProto = trusted ? first(headers["x-forwarded-proto"])?.toLowerCase() : undefined
  const host = [forwardedHost, first(headers.host)].find((candidate) => candidate !== undefined && validHost.test(candidate)) ?? fallbackHost
  const scheme = forwardedProto === "https" || forwardedProto === "http" ? forwardedProto : encrypted ? "https" : "http"
  return `${scheme}://${host}`
}

/** the public base URL of a repository: origin + /repository/<name> */
export const repositoryBase = (origin: string, repository: string) => `${origin}/repository/${encodeURIComponent(repository)}`
