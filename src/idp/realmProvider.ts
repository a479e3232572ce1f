// One oidc-provider instance per realm, configured to look like Keycloak from outside: realm paths,
// JWT access tokens that carry realm/client roles and the audience mapper's client ids, groups from
// the group-membership mapper, Web Origins for CORS, redirect URIs with Keycloak's trailing `*`.
// oidc-provider's own development login pages stay off; src/idp/loginPage.ts replaces them.
import { createHash } from "node:crypto"
import Provider, { type Configuration, type KoaContextWithOIDC } from "oidc-provider"
import type { JWK } from "jose"
import type { Realm, RealmClient, RealmUser } from "./realm.ts"
import { errorPage, logoutPage } from "./pages.ts"

export const realmPath = (realm: string): string => `/auth/realms/${realm}`
export const loginActionsPath = (realm: string): string => `${realmPath(realm)}/login-actions/authenticate`

/** Keycloak's openid-connect endpoint paths, relative to the realm */
const routes = {
  authorization: "/protocol/openid-connect/auth",
  token: "/protocol/openid-connect/token",
  userinfo: "/protocol/openid-connect/userinfo",
  jwks: "/protocol/openid-connect/certs",
  end_session: "/protocol/openid-connect/logout",
  revocation: "/protocol/openid-connect/revoke",
  introspection: "/protocol/openid-connect/token/introspect"
}
export const userinfoRoute = routes.userinfo

/** a stable subject per realm and username, shaped like Keycloak's user ids */
export const subjectOf = (realm: string, username: string): string => {
  const hex = createHash("sha256").update(`${realm}\0${username}`).digest("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`
}

/** Keycloak's matching: exact, or a prefix when the registered URI ends in `*` */
export const redirectUriMatches = (registered: ReadonlyArray<string>, uri: string): boolean =>
  registered.some((allowed) => allowed.endsWith("*") ? uri.startsWith(allowed.slice(0, -1)) : allowed === uri)

/** Web Origins: listed origins, `*`, or `+` for the origins of the redirect URIs */
export const originAllowed = (client: RealmClient, origin: string): boolean => {
  if (origin === "null") return false
  for (const entry of client.webOrigins) {
    if (entry === "*" || entry === origin) return true
    if (entry === "+" && client.redirectUris.some((uri) => URL.parse(uri.replace(/\*$/, ""))?.origin === origin)) return true
  }
  return false
}

export interface AccountClaimsInput {
  readonly realm: string
  readonly user: RealmUser
  readonly client: RealmClient | undefined
  readonly use: "id_token" | "userinfo" | "access_token"
}

/** the user's claims as Keycloak would put them in a token for this client */
export const accountClaims = ({ realm, user, client, use }: AccountClaimsInput): Record<string, unknown> => {
  const name = [user.firstName, user.lastName].filter((part) => part !== undefined && part !== "").join(" ")
  const claims: Record<string, unknown> = {
    sub: subjectOf(realm, user.username),
    preferred_username: user.username,
    ...(name === "" ? {} : { name }),
    ...(user.firstName === undefined ? {} : { given_name: user.firstName }),
    ...(user.lastName === undefined ? {} : { family_name: user.lastName }),
    ...(user.email === undefined ? {} : { email: user.email, email_verified: user.emailVerified })
  }
  const mapper = client?.groupsClaim
  if (mapper !== undefined && (use === "id_token" ? mapper.idToken : use === "userinfo" ? mapper.userinfo : mapper.accessToken)) {
    claims[mapper.claim] = mapper.fullPath ? [...user.groups] : user.groups.map((path) => path.slice(path.lastIndexOf("/") + 1))
  }
  if (use === "access_token") {
    claims.realm_access = { roles: [...user.realmRoles] }
    const resourceAccess: Record<string, { roles: Array<string> }> = {}
    for (const [clientId, roles] of Object.entries(user.clientRoles)) {
      if (roles.length > 0) resourceAccess[clientId] = { roles: [...roles] }
    }
    claims.resource_access = resourceAccess
  }
  return claims
}

export interface RealmProviderOptions {
  readonly realm: Realm
  /** the canonical issuer: external URL + /auth/realms/<realm> */
  readonly issuer: string
  readonly signingKeys: ReadonlyArray<JWK>
  readonly cookieKeys: ReadonlyArray<string>
  readonly adapter: NonNullable<Configuration["adapter"]>
  /** Koa's proxy mode: X-Forwarded-Proto/-Host decide the request URL (the handler strips them from untrusted sources) */
  readonly trustForwarded: boolean
}

export interface RealmRuntime {
  readonly realm: Realm
  readonly issuer: string
  readonly provider: Provider
  readonly users: ReadonlyMap<string, RealmUser>
  readonly clients: ReadonlyMap<string, RealmClient>
  readonly userBySubject: (sub: string) => RealmUser | undefined
}

const clientMetadata = (client: RealmClient) => {
  const concrete = client.redirectUris.filter((uri) => URL.canParse(uri))
  return {
    client_id: client.clientId,
    client_name: client.name,
    ...(client.publicClient
      ? { token_endpoint_auth_method: "none" as const }
      : { client_secret: client.secret!, token_endpoint_auth_method: "client_secret_basic" as const }),
    redirect_uris: concrete,
    post_logout_redirect_uris: concrete,
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code" as const]
  }
}

export const makeRealmProvider = (options: RealmProviderOptions): RealmRuntime => {
  const { realm, issuer } = options
  const lifespans = realm.lifespans
  const users = new Map(realm.users.map((user) => [user.username, user]))
  const bySubject = new Map(realm.users.map((user) => [subjectOf(realm.realm, user.username), user]))
  const clients = new Map(realm.clients.filter((client) => client.enabled).map((client) => [client.clientId, client]))
  const audienceOf = (clientId: string): string | Array<string> => {
    const audiences = clients.get(clientId)?.audiences ?? []
    // Keycloak's access tokens name "account" when no audience mapper adds the client
    return audiences.length === 0 ? "account" : audiences.length === 1 ? audiences[0] : [...audiences]
  }

  const configuration: Configuration = {
    adapter: options.adapter,
    clients: [...clients.values()].map(clientMetadata),
    jwks: { keys: options.signingKeys.map((key) => ({ ...key })) as Configuration["jwks"] extends { keys: infer K } ? K : never },
    cookies: {
      keys: [...options.cookieKeys],
      names: { session: "KEYCLOAK_SESSION", interaction: "_larder_interaction", resume: "_larder_interaction_resume" }
    },
    routes,
    claims: {
      openid: ["sub", "groups"],
      email: ["email", "email_verified"],
      profile: ["name", "given_name", "family_name", "preferred_username"]
    },
    scopes: ["openid", "offline_access", "profile", "email"],
    // claims asked for by scope go into the ID token too (Keycloak does this; the gate reads them there)
    conformIdTokenClaims: false,
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true },
      introspection: { enabled: true },
      rpInitiatedLogout: { enabled: true, logoutSource: logoutPage(realm.displayName) },
      resourceIndicators: {
        enabled: true,
        // every access token is a JWT for "this realm", audience chosen per client below
        defaultResource: () => issuer,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, _resource, client) => ({
          scope: "openid offline_access profile email",
          audience: audienceOf(client.clientId) as string,
          accessTokenTTL: lifespans.accessToken,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "RS256" } }
        })
      }
    },
    extraTokenClaims: (ctx, token) => {
      if (token.kind !== "AccessToken" || token.accountId === undefined) return undefined
      const user = bySubject.get(token.accountId)
      if (user === undefined) return undefined
      const client = clients.get(token.clientId ?? "")
      const { sub: _sub, ...claims } = accountClaims({ realm: realm.realm, user, client, use: "access_token" })
      return { ...claims, typ: "Bearer", azp: token.clientId }
    },
    findAccount: (ctx, sub) => {
      const user = bySubject.get(sub)
      if (user === undefined || !user.enabled) return undefined
      return {
        accountId: sub,
        claims: (use) => {
          const client = clients.get(ctx.oidc.client?.clientId ?? "")
          return accountClaims({ realm: realm.realm, user, client, use: use === "id_token" ? "id_token" : "userinfo" }) as { sub: string }
        }
      }
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    clientBasedCORS: (_ctx, origin, client) => {
      const known = clients.get(client.clientId)
      return known !== undefined && originAllowed(known, origin)
    },
    interactions: {
      url: (_ctx, interaction) => `${loginActionsPath(realm.realm)}/${interaction.uid}`
    },
    renderError: (ctx: KoaContextWithOIDC, out) => {
      ctx.type = "html"
      ctx.body = errorPage(realm.displayName, out as unknown as Record<string, unknown>)
    },
    ttl: {
      AccessToken: lifespans.accessToken,
      AuthorizationCode: 60,
      IdToken: lifespans.accessToken,
      RefreshToken: lifespans.sessionIdle,
      Interaction: 30 * 60,
      Session: lifespans.sessionMax,
      Grant: lifespans.sessionMax
    },
    // one realm, one canonical issuer: oidc-provider would otherwise print warnings for these defaults
    pkce: { required: (_ctx, client) => client.clientAuthMethod === "none" }
  }

  const provider = new Provider(issuer, configuration)
  provider.proxy = options.trustForwarded

  // Keycloak's trailing-`*` redirect URIs (oidc-provider matches exactly)
  const registered = (clientId: string) => clients.get(clientId)?.redirectUris ?? []
  const ClientClass = provider.Client as unknown as { prototype: Record<string, unknown> }
  const exactRedirect = ClientClass.prototype.redirectUriAllowed as (this: { clientId: string }, uri: string) => boolean
  const exactLogout = ClientClass.prototype.postLogoutRedirectUriAllowed as (this: { clientId: string }, uri: string) => boolean
  ClientClass.prototype.redirectUriAllowed = function(this: { clientId: string }, uri: string) {
    return exactRedirect.call(this, uri) || redirectUriMatches(registered(this.clientId), uri)
  }
  ClientClass.prototype.postLogoutRedirectUriAllowed = function(this: { clientId: string }, uri: string) {
    return exactLogout.call(this, uri) || redirectUriMatches(registered(this.clientId), uri)
  }

  return { realm, issuer, provider, users, clients, userBySubject: (sub) => bySubject.get(sub) }
}
