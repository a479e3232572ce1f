// WWW-Authenticate challenges of registries (RFC 6750 style, as Docker Hub and distribution send
// them): Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull"

export interface BearerChallenge {
  readonly realm: string
  readonly service: string | undefined
  readonly scope: string | undefined
}

export const parseBearerChallenge = (header: string | undefined): BearerChallenge | undefined => {
  if (header === undefined) return undefined
  const match = /^\s*Bearer\s+(.*)$/i.exec(header)
  if (match === null) return undefined
  const params = new Map<string, string>()
  for (const [, key, quoted, bare] of match[1].matchAll(/([A-Za-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    params.set(key.toLowerCase(), (quoted ?? bare ?? "").replace(/\\(.)/g, "$1"))
  }
  const realm = params.get("realm")
  if (realm === undefined || !/^https?:\/\//.test(realm)) return undefined
  return { realm, service: params.get("service"), scope: params.get("scope") }
}

/** the pull scope for an upstream path v2/<name>/(manifests|blobs|tags)/... */
export const pullScope = (upstreamPath: string): string | undefined => {
  const match = /^v2\/(.+)\/(?:manifests|blobs|tags)\//.exec(upstreamPath)
  return match === null ? undefined : `repository:${match[1]}:pull`
}

/** the token endpoint URL for a challenge */
export const tokenUrl = (challenge: BearerChallenge, scope: string | undefined): string => {
  const url = new URL(challenge.realm)
  if (challenge.service !== undefined) url.searchParams.set("service", challenge.service)
  const wanted = challenge.scope ?? scope
  if (wanted !== undefined) url.searchParams.set("scope", wanted)
  return url.href
}
