// Who a token set says the user is, and whether the gate lets them in: Keycloak's groups,
// realm_access.roles and resource_access.<client>.roles, read the way oauth2-proxy's keycloak-oidc
// provider reads them, then --email-domain, --allowed-group and --allowed-role.
import type { GateOptions } from "./options.ts"
import type { GateIdentity } from "./sessions.ts"

const strings = (value: unknown): Array<string> =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : typeof value === "string" ? [value] : []

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? value as Record<string, unknown> : {}

/** claims merged from the ID token, the access token (roles) and userinfo, first one wins */
export const identityOf = (options: GateOptions, ...sources: ReadonlyArray<Record<string, unknown>>): GateIdentity => {
  const first = (name: string): unknown => sources.find((claims) => claims[name] !== undefined)?.[name]
  const groups = new Set<string>()
  for (const claims of sources) for (const group of strings(claims.groups)) groups.add(group)
  for (const claims of sources) {
    for (const role of strings(record(claims.realm_access).roles)) groups.add(`role:${role}`)
    for (const [client, access] of Object.entries(record(claims.resource_access))) {
      for (const role of strings(record(access).roles)) groups.add(`role:${client}:${role}`)
    }
  }
  const email = first("email")
  const preferred = first("preferred_username")
  const user = first(options.userIdClaim) ?? first("sub")
  return {
    user: String(user ?? ""),
    email: typeof email === "string" ? email : undefined,
    preferredUsername: typeof preferred === "string" ? preferred : undefined,
    groups: [...groups]
  }
}

/** the claims keycloak-oidc needs that the ID token may leave out; missing ones are asked of userinfo */
export const missingProfileClaims = (claims: Record<string, unknown>): ReadonlyArray<string> =>
  ["email", "groups", "preferred_username"].filter((name) => claims[name] === undefined)

/** undefined when allowed, else the reason (shown on the 403 page and logged) */
export const refusal = (options: GateOptions, identity: GateIdentity): string | undefined => {
  if (!options.emailDomains.includes("*")) {
    const domain = identity.email?.split("@").pop()?.toLowerCase()
    if (domain === undefined || !options.emailDomains.some((allowed) => allowed.toLowerCase() === domain)) {
      return `email ${identity.email ?? "(none)"} is not in --email-domain ${options.emailDomains.join(",")}`
    }
  }
  if (options.allowedGroups.length > 0 && !options.allowedGroups.some((group) => identity.groups.includes(group))) {
    return `user ${identity.preferredUsername ?? identity.user} is in none of --allowed-group ${options.allowedGroups.join(",")}`
  }
  if (options.allowedRoles.length > 0 && !options.allowedRoles.some((role) => identity.groups.includes(`role:${role}`))) {
    return `user ${identity.preferredUsername ?? identity.user} has none of --allowed-role ${options.allowedRoles.join(",")}`
  }
  return undefined
}
