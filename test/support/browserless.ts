// A minimal cookie-keeping HTTP client for sign-in flows in tests that do not need a real browser:
// it follows redirects one hop at a time (so tests can look at each), keeps cookies per host with
// their Domain attribute, and submits the embedded provider's login form. Hosts under
// *.example.test are sent to 127.0.0.1 with their Host header kept, as chromium's resolver rule does.
import { request as httpRequest } from "node:http"

interface Cookie {
  readonly name: string
  readonly value: string
  /** host the cookie was set by, or the Domain attribute without its dot */
  readonly domain: string
  readonly hostOnly: boolean
}

export interface Hop {
  readonly url: string
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: string
}

const hostOf = (url: URL) => url.hostname.toLowerCase()

export const makeBrowserless = () => {
  const jar: Array<Cookie> = []

  const store = (url: URL, header: string | Array<string> | undefined) => {
    for (const line of header === undefined ? [] : Array.isArray(header) ? header : [header]) {
      const [pair, ...attributes] = line.split(";").map((part) => part.trim())
      const eq = pair.indexOf("=")
      const name = pair.slice(0, eq)
      const value = pair.slice(eq + 1)
      const domainAttribute = attributes.find((attribute) => attribute.toLowerCase().startsWith("domain="))
      const domain = domainAttribute === undefined ? hostOf(url) : domainAttribute.slice(7).replace(/^\./, "").toLowerCase()
      const expired = attributes.some((attribute) => /^max-age=0$/i.test(attribute)) || value === ""
      const existing = jar.findIndex((cookie) => cookie.name === name && cookie.domain === domain)
      if (existing !== -1) jar.splice(existing, 1)
      if (!expired) jar.push({ name, value, domain, hostOnly: domainAttribute === undefined })
    }
  }

  const cookieHeader = (url: URL): string | undefined => {
    const host = hostOf(url)
    const matching = jar.filter((cookie) => cookie.hostOnly ? cookie.domain === host : host === cookie.domain || host.endsWith(`.${cookie.domain}`))
    return matching.length === 0 ? undefined : matching.map((cookie) => `${cookie.name}=${cookie.value}`).join("; ")
  }

  const send = (target: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Hop> =>
    new Promise((resolve, reject) => {
      const url = new URL(target)
      const cookies = cookieHeader(url)
      const request = httpRequest({
        host: url.hostname.endsWith(".example.test") ? "127.0.0.1" : url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: init.method ?? "GET",
        headers: {
          host: url.host,
          ...(cookies === undefined ? {} : { cookie: cookies }),
          ...(init.body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded", "content-length": String(Buffer.byteLength(init.body)) }),
          ...init.headers
        },
        timeout: 10_000
      }, (response) => {
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (chunk) => (body += chunk))
        response.on("end", () => {
          store(url, response.headers["set-cookie"])
          resolve({ url: target, status: response.statusCode ?? 0, headers: response.headers, body })
        })
      })
      request.on("timeout", () => request.destroy(new Error(`${target}: no answer in 10 s`)))
      request.on("error", reject)
      request.end(init.body)
    })

  /**
   * follows redirects until a non-redirect answer, or until the next location is one `stopAt`
   * picks (an app that is not running); returns every hop
   */
  const follow = async (target: string, init: { method?: string; body?: string } = {}, stopAt?: (url: string) => boolean): Promise<Array<Hop>> => {
    const hops: Array<Hop> = []
    let hop = await send(target, init)
    hops.push(hop)
    while (hop.status >= 300 && hop.status < 400 && typeof hop.headers.location === "string" && hops.length < 12) {
      const next = new URL(hop.headers.location, hop.url).href
      if (stopAt?.(next) === true) break
      hop = await send(next)
      hops.push(hop)
    }
    return hops
  }

  /** submits the embedded provider's login form found in `page` and follows the redirects */
  const submitLogin = (page: Hop, username: string, password: string, stopAt?: (url: string) => boolean) => {
    const action = /<form method="post" action="([^"]+)"/.exec(page.body)?.[1]
    if (action === undefined) throw new Error(`no login form at ${page.url} (status ${page.status}):\n${page.body.slice(0, 500)}`)
    const body = new URLSearchParams({ username, password }).toString()
    return follow(new URL(action.replace(/&amp;/g, "&"), page.url).href, { method: "POST", body }, stopAt)
  }

  return { send, follow, submitLogin, cookies: () => [...jar], setCookie: (cookie: Cookie) => jar.push(cookie) }
}

export type Browserless = ReturnType<typeof makeBrowserless>
