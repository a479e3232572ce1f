// Post-login redirect (`rd`) validation for the SSO gate, compatible with oauth2-proxy's
// IsValidRedirect and --whitelist-domain matching (pkg/app/redirect/validator.go, pkg/util/util.go)
// but stricter: control characters, whitespace, backslashes, userinfo, percent-encoded hosts,
// trailing-dot hosts and (also percent-encoded) `//` or dot segments in relative paths are refused.
// Absolute URLs are judged by the host the WHATWG parser (i.e. the browser) would go to.
import { domainToASCII } from "node:url"

export type RedirectCheck = { readonly ok: true; readonly target: string } | { readonly ok: false; readonly reason: string }

// C0/C1 controls, format characters (zero-width, bidi overrides) and every kind of whitespace
const invisible = /[\p{Cc}\p{Cf}\p{Z}\s]/u
const slashes = /\/[\s\p{Cc}]*\//u
// a "." or ".." path segment, which browsers resolve (also when spelled %2e)
const dotSegment = /\/[\s\p{Cc}]*\.{1,2}[\s\p{Cc}]*(?=$|[/?#])/u
const schemePrefix = /^([A-Za-z][A-Za-z0-9+.-]*):/
const dnsName = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/
const ipv6 = /^\[[0-9a-f:.]+\]$/
// relative paths are resolved against this to make sure they cannot leave the gate's origin
const sentinelBase = "http://larder.invalid"

// quoted for logs and pages: JSON escapes C0 controls; also escape what JSON leaves raw but
// would break or hide in a log line (U+2028, bidi overrides, NBSP, ...)
const shown = (rd: string) =>
  JSON.stringify(rd.length > 200 ? `${rd.slice(0, 200)}…` : rd)
    .replace(/[^\x20-\x7e\p{L}\p{M}\p{N}\p{P}\p{S}]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

const refuse = (rd: string, why: string): RedirectCheck => ({ ok: false, reason: `redirect to ${shown(rd)} refused: ${why}` })

/** decodes ASCII percent-escapes until nothing changes, so %252F is seen as "/" too */
const decodeAscii = (value: string): string => {
  let current = value
  for (;;) {
    const next = current.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    if (next === current) return current
    current = next
  }
}

interface AllowedDomain {
  readonly host: string
  readonly subdomains: boolean
  /** "" (no port given), "*" or the port digits exactly as written */
  readonly port: string
}

// oauth2-proxy's util.SplitHostPort: the port is what follows the last ":" when that is
// digits, empty or "*"; brackets around the host are dropped
const parseAllowed = (entry: string): AllowedDomain | undefined => {
  let host = entry.trim()
  let port = ""
  const colon = host.lastIndexOf(":")
  if (colon !== -1 && /^(?:\d*|\*)$/.test(host.slice(colon + 1))) {
    port = host.slice(colon + 1)
    host = host.slice(0, colon)
  }
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1)
  host = host.toLowerCase()
  const subdomains = host.startsWith(".") || host.startsWith("*.")
  host = host.slice(host.startsWith("*.") ? 2 : host.startsWith(".") ? 1 : 0)
  // "example.com." names the same zone; redirect hosts with a trailing dot are refused anyway
  if (host.endsWith(".")) host = host.slice(0, -1)
  // IDN entries are compared in the punycode form the WHATWG parser produces
  if (/[^\x00-\x7f]/.test(host)) host = domainToASCII(host)
  return host === "" ? undefined : { host, subdomains, port }
}

const hostAllowed = (hostname: string, allowed: AllowedDomain) =>
  hostname === allowed.host || (allowed.subdomains && hostname.endsWith(`.${allowed.host}`))

const checkRelative = (rd: string): RedirectCheck => {
  if (rd.startsWith("//")) return refuse(rd, "a path starting with \"//\" is a protocol-relative URL to another host")
  if (slashes.test(rd)) return refuse(rd, "\"//\" is not allowed in a relative path")
  if (dotSegment.test(rd)) return refuse(rd, "\".\" and \"..\" path segments are not allowed")
  // the same rules again on the decoded text, for anything that decodes the value once more
  const decoded = decodeAscii(rd)
  if (/\p{Cc}/u.test(decoded)) return refuse(rd, "percent-encoded control characters are not allowed")
  if (decoded.includes("\\")) return refuse(rd, "percent-encoded backslashes are not allowed")
  if (slashes.test(decoded)) return refuse(rd, "percent-encoded \"//\" is not allowed in a relative path")
  if (dotSegment.test(decoded)) return refuse(rd, "percent-encoded \".\" and \"..\" path segments are not allowed")
  // belt and braces: whatever got through must stay on the origin it is resolved against
  const resolved = new URL(rd, sentinelBase)
  if (resolved.origin !== sentinelBase) return refuse(rd, "the path resolves to another origin")
  return { ok: true, target: rd }
}

const checkAbsolute = (rd: string, whitelistDomains: ReadonlyArray<string>): RedirectCheck => {
  const rest = rd.slice(rd.indexOf("//") + 2)
  const authority = rest.slice(0, rest.search(/[/?#]|$/))
  if (authority === "") return refuse(rd, "the URL has no host")
  if (authority.includes("@")) return refuse(rd, "URLs with a user name or password are not allowed")
  if (authority.includes("%")) return refuse(rd, "percent-encoded characters are not allowed in the host")
  let url: URL
  try {
    url = new URL(rd)
  } catch {
    return refuse(rd, "it is not a valid URL")
  }
  if (url.username !== "" || url.password !== "") return refuse(rd, "URLs with a user name or password are not allowed")
  const hostname = url.hostname
  if (hostname.endsWith(".")) return refuse(rd, `host ${hostname} ends with a dot`)
  if (!dnsName.test(hostname) && !ipv6.test(hostname)) return refuse(rd, `host ${hostname} is not a plain DNS name or IP address`)
  const bareHost = hostname.replace(/^\[(.*)\]$/, "$1")
  // the port as written: oauth2-proxy (Go's url.Port) sees ":443" where WHATWG drops a default port
  const portMatch = /^(?:\[[^\]]*\]|[^:]*):(\d*)$/.exec(authority)
  const port = portMatch === null ? "" : portMatch[1]
  // the port as written and the port the browser will use must agree
  const effectivePort = url.port !== "" ? url.port : url.protocol === "https:" ? "443" : "80"
  if (port !== "" && Number(port) !== Number(effectivePort)) return refuse(rd, "its port cannot be read unambiguously")
  const allowed = whitelistDomains.map(parseAllowed).filter((domain) => domain !== undefined)
  const listed = whitelistDomains.length === 0 ? "none configured" : whitelistDomains.join(", ")
  const sameHost = allowed.filter((domain) => hostAllowed(bareHost, domain))
  if (sameHost.length === 0) return refuse(rd, `host ${hostname} is not under --whitelist-domain (${listed})`)
  if (!sameHost.some((domain) => domain.port === "*" || domain.port === port)) {
    return refuse(rd, port === ""
      ? `host ${hostname} needs one of the ports allowed by --whitelist-domain (${listed})`
      : `port ${port} on ${hostname} is not allowed by --whitelist-domain (${listed})`)
  }
  return { ok: true, target: url.href }
}

/** whitelistDomains as oauth2-proxy's --whitelist-domain values, e.g. ".example.com", "example.com", ".example.com:*", "app.example.com:8443" */
export const checkRedirect = (rd: string | undefined, whitelistDomains: ReadonlyArray<string>): RedirectCheck => {
  if (rd === undefined || rd === "") return { ok: true, target: "/" }
  if (invisible.test(rd)) return refuse(rd, "control characters and whitespace are not allowed")
  if (rd.includes("\\")) return refuse(rd, "backslashes are not allowed (browsers read them as \"/\")")
  if (rd.startsWith("/")) return checkRelative(rd)
  if (rd.startsWith("https://") || rd.startsWith("http://")) return checkAbsolute(rd, whitelistDomains)
  const scheme = schemePrefix.exec(rd)?.[1].toLowerCase()
  if (scheme === "http" || scheme === "https") return refuse(rd, `an ${scheme} URL must start with exactly "${scheme}://"`)
  if (scheme !== undefined) return refuse(rd, `only http:// and https:// URLs are allowed, not ${scheme}:`)
  return refuse(rd, "it is neither a path starting with \"/\" nor an http(s) URL")
}
