// Repositories on the wire of Nexus's REST API: the summary list entry, the full object (without
// credentials), and request bodies decoded with the same Schema as the configuration file, with
// failures in Nexus's validation shape (`[{id, message}]`).
import { Exit, Schema } from "effect"
import { formats, Repository, type Format } from "../../appliance/config/Repository.ts"

export interface ValidationError {
  readonly id: string
  readonly message: string
}

export const isFormat = (format: string): format is Format => (formats as ReadonlyArray<string>).includes(format)

/** GET /repositories: one entry per repository */
export const toSummary = (repository: Repository, publicBase: string) => ({
  name: repository.name,
  format: repository.format,
  type: "proxy" as const,
  url: `${publicBase}/repository/${repository.name}`,
  attributes: { proxy: { remoteUrl: repository.proxy.remoteUrl } }
})

/** the format's own block, with Nexus's defaults for what larder does not use */
const formatBlock = (repository: Repository): Record<string, unknown> => {
  switch (repository.format) {
    case "docker":
      return {
        docker: { v1Enabled: false, forceBasicAuth: false, httpPort: null, httpsPort: null, subdomain: null },
        dockerProxy: { indexType: "REGISTRY", indexUrl: null, cacheForeignLayers: false, foreignLayerUrlWhitelist: [] }
      }
    case "apt":
      return { apt: { distribution: "", flat: false } }
    case "raw":
      return { raw: { contentDisposition: "ATTACHMENT" } }
    default:
      return {}
  }
}

/** GET /repositories/{name}: the full object; the upstream password is never included */
export const toNexus = (repository: Repository, publicBase: string) => {
  const authentication = repository.httpClient?.authentication
  return {
    name: repository.name,
    format: repository.format,
    type: "proxy" as const,
    url: `${publicBase}/repository/${repository.name}`,
    online: repository.online,
    storage: { blobStoreName: "default", strictContentTypeValidation: true },
    cleanup: null,
    proxy: { ...repository.proxy },
    negativeCache: { ...repository.negativeCache },
    httpClient: {
      blocked: false,
      autoBlock: false,
      connection: null,
      authentication: authentication === undefined ? null : { type: authentication.type ?? "username", username: authentication.username }
    },
    routingRuleName: null,
    ...formatBlock(repository)
  }
}

const decode = Schema.decodeUnknownExit(Repository)

/**
 * A create or update body for `format`, decoded; the format comes from the URL. Errors are
 * Nexus's validation list.
 */
export const fromNexus = (body: unknown, format: string): { ok: true; repository: Repository } | { ok: false; errors: Array<ValidationError> } => {
  if (!isFormat(format)) return { ok: false, errors: [{ id: "PARAMETER format", message: `unknown format "${format}"; larder proxies ${formats.join(", ")}` }] }
  if (body === null || typeof body !== "object" || Array.isArray(body)) return { ok: false, errors: [{ id: "*", message: "expected a JSON object" }] }
  const given = body as Record<string, unknown>
  if (given.format !== undefined && given.format !== format) {
    return { ok: false, errors: [{ id: "PARAMETER format", message: `the body says format "${String(given.format)}" but the URL says "${format}"` }] }
  }
  // Nexus sends `httpClient.authentication: null` and other nulls for "not set"
  const httpClient = given.httpClient as { authentication?: unknown } | null | undefined
  const cleaned: Record<string, unknown> = { ...given, format, type: "proxy" }
  if (httpClient === null || httpClient === undefined || httpClient.authentication === null || httpClient.authentication === undefined) delete cleaned.httpClient
  const exit = decode(cleaned, { errors: "all" })
  if (Exit.isSuccess(exit)) return { ok: true, repository: exit.value }
  const messages = exit.cause.reasons.flatMap((reason) => (reason._tag === "Fail" ? reason.error.message.split("\n") : []))
  return { ok: false, errors: messages.filter((line) => line.trim() !== "").map((message) => ({ id: "PARAMETER", message: message.trim() })) }
}
