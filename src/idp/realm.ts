// Realm files of the embedded identity provider: the part of a Keycloak realm export that larder
// serves (realm, OIDC clients with their audience and group mappers, users, groups, roles), as JSON
// or as the same structure in YAML. Plain passwords are hashed with scrypt while the file is read;
// Keycloak's exported pbkdf2 and argon2 hashes are kept, re-encoded as self-describing strings.
import { parse as parseYaml } from "yaml"
import { hashPassword, pbkdf2Digests, storedHashProblem } from "./passwords.ts"

export interface RealmClient {
  readonly clientId: string
  /** Keycloak's "name", or the clientId */
  readonly name: string
  readonly publicClient: boolean
  /** set for confidential clients, undefined for public ones */
  readonly secret: string | undefined
  /** absolute http(s) URLs; a trailing `*` matches by prefix, as in Keycloak */
  readonly redirectUris: ReadonlyArray<string>
  /** origins, `+` (the redirect URIs' origins) or `*` */
  readonly webOrigins: ReadonlyArray<string>
  /** from the client's oidc-audience-mapper protocol mappers that add to the access token */
  readonly audiences: ReadonlyArray<string>
  /** from the client's oidc-group-membership-mapper */
  readonly groupsClaim: {
    readonly claim: string
    readonly fullPath: boolean
    readonly idToken: boolean
    readonly accessToken: boolean
    readonly userinfo: boolean
  } | undefined
  readonly enabled: boolean
}

export interface RealmUser {
  /** lower-cased, as Keycloak stores it */
  readonly username: string
  /** lower-cased, as Keycloak stores it */
  readonly email: string | undefined
  readonly emailVerified: boolean
  readonly firstName: string | undefined
  readonly lastName: string | undefined
  readonly enabled: boolean
  /** for verifyPassword; never the plain password */
  readonly passwordHash: string | undefined
  /** full group paths, "/parent/child" */
  readonly groups: ReadonlyArray<string>
  /** effective: direct, from the groups and their parents, and composites expanded */
  readonly realmRoles: ReadonlyArray<string>
  /** effective, per clientId */
  readonly clientRoles: Readonly<Record<string, ReadonlyArray<string>>>
}

export interface Realm {
  readonly realm: string
  readonly displayName: string
  readonly enabled: boolean
  /** the OpenID Connect clients that can sign users in (no bearer-only or SAML clients) */
  readonly clients: ReadonlyArray<RealmClient>
  readonly users: ReadonlyArray<RealmUser>
  /** full paths of all groups */
  readonly groups: ReadonlyArray<string>
  /** Keycloak's realm settings, in seconds: accessTokenLifespan, ssoSessionIdleTimeout (refresh tokens), ssoSessionMaxLifespan */
  readonly lifespans: { readonly accessToken: number; readonly sessionIdle: number; readonly sessionMax: number }
}

export class RealmError extends Error {
  constructor(message: string) {
    super(message)
    this.name = "RealmError"
  }
}

// ---- reading the file -------------------------------------------------------------------------

const between = (value: number, low: number, high: number) => Number.isSafeInteger(value) && value >= low && value <= high

/** a problem at a path in the document; parseRealm adds the file name */
class Invalid extends Error {
  readonly path: string
  constructor(path: string, message: string) {
    super(message)
    this.path = path
  }
}

const fail = (path: string, message: string): never => {
  throw new Invalid(path, message)
}

type Fields = Readonly<Record<string, unknown>>

/** `users[2].credentials`, `config["claim.name"]` */
const child = (path: string, key: string | number): string =>
  typeof key === "number"
    ? `${path}[${key}]`
    : /^[A-Za-z_$][\w$-]*$/.test(key)
    ? path === "" ? key : `${path}.${key}`
    : `${path}[${JSON.stringify(key)}]`

const describe = (value: unknown): string =>
  value === null
    ? "nothing"
    : Array.isArray(value)
    ? "a list"
    : typeof value === "object"
    ? "an object"
    : typeof value === "string"
    ? `the string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value)}`
    : `${typeof value} ${String(value)}`

const isFields = (value: unknown): value is Fields => typeof value === "object" && value !== null && !Array.isArray(value)

// an absent key and an explicit null (YAML's `key:` with nothing after it) both mean "not given"
const get = (fields: Fields, key: string): unknown => Object.hasOwn(fields, key) && fields[key] !== null ? fields[key] : undefined

const object = (value: unknown, path: string, what: string): Fields => isFields(value) ? value : fail(path, `expected ${what}, got ${describe(value)}`)

const optionalObject = (fields: Fields, key: string, path: string, what: string): Fields | undefined => {
  const value = get(fields, key)
  return value === undefined ? undefined : object(value, child(path, key), what)
}

const optionalString = (fields: Fields, key: string, path: string): string | undefined => {
  const value = get(fields, key)
  return value === undefined || typeof value === "string" ? value : fail(child(path, key), `expected a string, got ${describe(value)}`)
}

const requiredString = (fields: Fields, key: string, path: string, what: string): string => {
  const value = optionalString(fields, key, path)
  return value === undefined || value === "" ? fail(child(path, key), `expected ${what}`) : value
}

const optionalBoolean = (fields: Fields, key: string, path: string): boolean | undefined => {
  const value = get(fields, key)
  return value === undefined || typeof value === "boolean" ? value : fail(child(path, key), `expected true or false, got ${describe(value)}`)
}

const list = (fields: Fields, key: string, path: string, what: string): ReadonlyArray<unknown> => {
  const value = get(fields, key)
  return value === undefined ? [] : Array.isArray(value) ? value : fail(child(path, key), `expected a list of ${what}, got ${describe(value)}`)
}

const strings = (fields: Fields, key: string, path: string, what: string): ReadonlyArray<string> =>
  list(fields, key, path, what).map((item, i) =>
    typeof item === "string" ? item : fail(child(child(path, key), i), `expected a string, got ${describe(item)}`)
  )

const emptyToUndefined = (value: string | undefined) => value === "" ? undefined : value

// ---- roles --------------------------------------------------------------------------------------

// a role as one string: "realm\0name" or "client\0clientId\0name"
const realmRoleKey = (name: string) => `realm\0${name}`
const clientRoleKey = (clientId: string, name: string) => `client\0${clientId}\0${name}`

/** every defined role, with the roles its composite includes */
type RoleTable = ReadonlyMap<string, ReadonlyArray<string>>

/** realm and client role references (`realmRoles` and `clientRoles`, or a composite's `realm` and `client`) */
const roleReferences = (fields: Fields, path: string, roles: RoleTable, realmKey: string, clientKey: string): Array<string> => {
  const found: Array<string> = []
  strings(fields, realmKey, path, "role names").forEach((name, i) => {
    if (!roles.has(realmRoleKey(name))) fail(child(child(path, realmKey), i), `unknown realm role "${name}"`)
    found.push(realmRoleKey(name))
  })
  const byClient = optionalObject(fields, clientKey, path, "an object of clientIds to lists of role names") ?? {}
  for (const clientId of Object.keys(byClient)) {
    const clientPath = child(path, clientKey)
    strings(byClient, clientId, clientPath, "role names").forEach((name, i) => {
      if (!roles.has(clientRoleKey(clientId, name))) fail(child(child(clientPath, clientId), i), `unknown role "${name}" of client ${clientId}`)
      found.push(clientRoleKey(clientId, name))
    })
  }
  return found
}

const readRoles = (root: Fields, realm: string): RoleTable => {
  const rolesField = optionalObject(root, "roles", "", `an object with "realm" and "client" roles`) ?? {}
  // composites are resolved once every role is known: they may point forward
  const definitions: Array<{ readonly key: string; readonly fields: Fields; readonly path: string }> = []
  const define = (key: string, items: ReadonlyArray<unknown>, path: string, owner: string) =>
    items.forEach((item, i) => {
      const here = child(path, i)
      const role = object(item, here, "a role")
      const name = requiredString(role, "name", here, "the role's name")
      const roleKey = key === "" ? realmRoleKey(name) : clientRoleKey(key, name)
      if (definitions.some((other) => other.key === roleKey)) fail(child(here, "name"), `${owner} role "${name}" is defined twice`)
      definitions.push({ key: roleKey, fields: role, path: here })
    })
  define("", list(rolesField, "realm", "roles", "roles"), "roles.realm", "realm")
  const clientRoles = optionalObject(rolesField, "client", "roles", "an object of clientIds to lists of roles") ?? {}
  for (const clientId of Object.keys(clientRoles)) {
    define(clientId, list(clientRoles, clientId, "roles.client", "roles"), child("roles.client", clientId), `client ${clientId}`)
  }
  const table = new Map<string, ReadonlyArray<string>>(definitions.map(({ key }) => [key, []]))
  // Keycloak creates these in every realm; hand-written files use them without defining them
  const builtIn = [realmRoleKey("offline_access"), realmRoleKey("uma_authorization")]
  for (const key of builtIn) if (!table.has(key)) table.set(key, [])
  if (!table.has(realmRoleKey(`default-roles-${realm.toLowerCase()}`))) table.set(realmRoleKey(`default-roles-${realm.toLowerCase()}`), builtIn)
  for (const { key, fields, path } of definitions) {
    const composites = optionalObject(fields, "composites", path, `an object with "realm" and "client" roles`)
    if (composites !== undefined) table.set(key, roleReferences(composites, child(path, "composites"), table, "realm", "client"))
  }
  return table
}

/** the roles and every role their composites include, depth first; a role is visited once, which also ends cycles */
const effectiveRoles = (seeds: Iterable<string>, roles: RoleTable): Set<string> => {
  const found = new Set<string>()
  const visit = (key: string) => {
    if (found.has(key)) return
    found.add(key)
    for (const included of roles.get(key) ?? []) visit(included)
  }
  for (const seed of seeds) visit(seed)
  return found
}

// ---- groups -------------------------------------------------------------------------------------

interface GroupEntry {
  readonly parent: string | undefined
  readonly roles: ReadonlyArray<string>
}

/** groups by full path, in the file's order */
const readGroups = (root: Fields, roles: RoleTable): ReadonlyMap<string, GroupEntry> => {
  const groups = new Map<string, GroupEntry>()
  const walk = (items: ReadonlyArray<unknown>, path: string, parent: string | undefined) =>
    items.forEach((item, i) => {
      const here = child(path, i)
      const group = object(item, here, "a group")
      const name = requiredString(group, "name", here, "the group's name")
      // Keycloak 23+ allows "/" in names and escapes it in paths; larder keeps paths unambiguous instead
      if (name.includes("/")) fail(child(here, "name"), `group name "${name}" contains "/"`)
      const full = `${parent ?? ""}/${name}`
      const declared = optionalString(group, "path", here)
      if (declared !== undefined && declared !== full) fail(child(here, "path"), `"${declared}" does not match the group's place, ${full}`)
      if (groups.has(full)) fail(child(here, "name"), `group ${full} is defined twice`)
      groups.set(full, { parent, roles: roleReferences(group, here, roles, "realmRoles", "clientRoles") })
      walk(list(group, "subGroups", here, "groups"), child(here, "subGroups"), full)
    })
  walk(list(root, "groups", "", "groups"), "groups", undefined)
  return groups
}

// ---- clients ------------------------------------------------------------------------------------

// Keycloak's placeholders for its own URLs, as in the rootUrl of its built-in account and admin consoles
const keycloakPlaceholder = /^\$\{[\w.-]+\}/

/** the redirect URI as larder matches it, or undefined for one relative to Keycloak's own pages */
const readRedirectUri = (uri: string, path: string, rootUrl: string | undefined): string | undefined => {
  if (/\s/.test(uri)) fail(path, `${JSON.stringify(uri)} contains white space`)
  let absolute = uri
  if (uri.startsWith("/") && !uri.startsWith("//")) {
    // Keycloak resolves relative redirect URIs against the client's rootUrl, or its own base URL
    if (rootUrl !== undefined && keycloakPlaceholder.test(rootUrl)) return undefined
    if (rootUrl === undefined) fail(path, `"${uri}" is relative and the client has no rootUrl; write the absolute URL (or set rootUrl)`)
    absolute = rootUrl!.replace(/\/+$/, "") + uri
  }
  const shown = absolute === uri ? `"${uri}"` : `"${uri}" (resolved against rootUrl: "${absolute}")`
  const wildcard = absolute.endsWith("*")
  const prefix = wildcard ? absolute.slice(0, -1) : absolute
  if (prefix.includes("*")) fail(path, `${shown}: only a trailing "*" is a wildcard`)
  const url = URL.parse(prefix)
  if (url === null || (url.protocol !== "http:" && url.protocol !== "https:") || !/^https?:\/\/[^/]/i.test(prefix)) {
    fail(path, `${shown} is not an absolute http(s) URL (optionally ending in "*")`)
  }
  if (url!.hash !== "" || prefix.includes("#")) fail(path, `${shown}: redirect URIs cannot have a fragment`)
  // "https://app.example*" would also match https://app.example.attacker.test
  if (wildcard && !/^https?:\/\/[^/?#]+[/?]/i.test(prefix)) fail(path, `${shown}: the "*" must come after the host's "/"`)
  return absolute
}

const readWebOrigin = (entry: string, path: string): string => {
  if (entry === "+" || entry === "*") return entry
  const url = URL.parse(entry)
  if (
    url === null || (url.protocol !== "http:" && url.protocol !== "https:") || url.pathname !== "/" || url.search !== "" ||
    url.hash !== "" || url.username !== "" || url.password !== "" || /[?#]/.test(entry)
  ) {
    return fail(path, `"${entry}" is not an origin (scheme://host[:port]), "+" or "*"`)
  }
  // browsers send origins lower-cased and without a default port
  return url.origin
}

// claims the token code sets itself: a group claim by one of these names would replace them
const reservedClaims = new Set(["sub", "iss", "aud", "exp", "iat", "nbf", "jti", "azp", "typ", "sid", "nonce", "auth_time", "realm_access", "resource_access", "scope"])

/** mapper config values are strings in Keycloak exports; YAML may give booleans */
const configFlag = (config: Fields, key: string, path: string): boolean | undefined => {
  const value = get(config, key)
  if (value === undefined) return undefined
  if (value === true || value === "true") return true
  if (value === false || value === "false") return false
  return fail(child(path, key), `expected "true" or "false", got ${describe(value)}`)
}

const readMappers = (client: Fields, path: string) => {
  const audiences: Array<string> = []
  let groupsClaim: RealmClient["groupsClaim"]
  list(client, "protocolMappers", path, "protocol mappers").forEach((item, i) => {
    const here = child(child(path, "protocolMappers"), i)
    const mapper = object(item, here, "a protocol mapper")
    const protocol = optionalString(mapper, "protocol", here)
    if (protocol !== undefined && protocol !== "openid-connect") return
    const type = requiredString(mapper, "protocolMapper", here, `the mapper type, e.g. "oidc-audience-mapper"`)
    const config = optionalObject(mapper, "config", here, "an object of settings") ?? {}
    const configPath = child(here, "config")
    if (type === "oidc-audience-mapper") {
      const named = [optionalString(config, "included.client.audience", configPath), optionalString(config, "included.custom.audience", configPath)]
        .filter((audience): audience is string => audience !== undefined && audience !== "")
      if (named.length === 0) fail(configPath, `an audience mapper needs "included.client.audience" or "included.custom.audience"`)
      // Keycloak: a mapper without access.token.claim adds to the access token
      if (configFlag(config, "access.token.claim", configPath) ?? true) {
        for (const audience of named) if (!audiences.includes(audience)) audiences.push(audience)
      }
    } else if (type === "oidc-group-membership-mapper") {
      if (groupsClaim !== undefined) fail(here, "a second group membership mapper; larder supports one per client")
      const claim = requiredString(config, "claim.name", configPath, "the name of the token claim for the groups")
      if (reservedClaims.has(claim)) fail(child(configPath, "claim.name"), `"${claim}" is a claim of the token itself`)
      // Keycloak's defaults for a mapper config without these keys
      const idToken = configFlag(config, "id.token.claim", configPath) ?? false
      groupsClaim = {
        claim,
        fullPath: configFlag(config, "full.path", configPath) ?? false,
        idToken,
        accessToken: configFlag(config, "access.token.claim", configPath) ?? true,
        userinfo: configFlag(config, "userinfo.token.claim", configPath) ?? idToken
      }
    }
    // other mappers (user attributes, hard-coded claims, …) are not supported and are passed over
  })
  return { audiences, groupsClaim }
}

const readClients = (root: Fields): Array<RealmClient> => {
  const clients: Array<RealmClient> = []
  const seen = new Set<string>()
  list(root, "clients", "", "clients").forEach((item, i) => {
    const here = child("clients", i)
    const client = object(item, here, "a client")
    const clientId = requiredString(client, "clientId", here, "the clientId")
    if (seen.has(clientId)) fail(child(here, "clientId"), `client ${clientId} is defined twice`)
    seen.add(clientId)
    // bearer-only clients (broker, realm-management, APIs) never sign anyone in; SAML is not served
    const protocol = optionalString(client, "protocol", here) ?? "openid-connect"
    if (optionalBoolean(client, "bearerOnly", here) === true || protocol !== "openid-connect") return
    const publicClient = optionalBoolean(client, "publicClient", here) ?? false
    let secret: string | undefined
    if (!publicClient) {
      secret = optionalString(client, "secret", here)
      if (secret === undefined || secret === "") fail(child(here, "secret"), `confidential client ${clientId} needs a secret (or set "publicClient": true)`)
      // the admin console's partial export masks secrets
      if (/^\*+$/.test(secret!)) {
        fail(child(here, "secret"), `the secret of ${clientId} is masked ("${secret}"), as the admin console exports it; put the real secret here`)
      }
      const authenticator = optionalString(client, "clientAuthenticatorType", here) ?? "client-secret"
      if (authenticator !== "client-secret") {
        fail(child(here, "clientAuthenticatorType"), `"${authenticator}" is not supported; confidential clients authenticate with their secret ("client-secret")`)
      }
    }
    const rootUrl = emptyToUndefined(optionalString(client, "rootUrl", here))
    const redirectPath = child(here, "redirectUris")
    const redirectUris = strings(client, "redirectUris", here, "URLs")
      .map((uri, j) => readRedirectUri(uri, child(redirectPath, j), rootUrl))
      .filter((uri) => uri !== undefined)
    const webOrigins = strings(client, "webOrigins", here, "origins").map((entry, j) => readWebOrigin(entry, child(child(here, "webOrigins"), j)))
    const name = optionalString(client, "name", here)
    clients.push({
      clientId,
      // "${client_account}" and the like are message keys of Keycloak's own clients
      name: name === undefined || name === "" || keycloakPlaceholder.test(name) ? clientId : name,
      publicClient,
      secret,
      redirectUris,
      webOrigins: [...new Set(webOrigins)],
      ...readMappers(client, here),
      enabled: optionalBoolean(client, "enabled", here) ?? true
    })
  })
  return clients
}

// ---- users --------------------------------------------------------------------------------------

/** a JSON string as Keycloak exports secretData and credentialData, or the object itself (handy in YAML) */
const embeddedJson = (fields: Fields, key: string, path: string): Fields => {
  const value = get(fields, key)
  if (value === undefined) return fail(child(path, key), "expected it next to secretData/credentialData")
  if (typeof value !== "string") return object(value, child(path, key), "a JSON string or an object")
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    return fail(child(path, key), "not valid JSON")
  }
  return object(parsed, child(path, key), "a JSON object")
}

/** Keycloak's additionalParameters hold lists of strings: {"memory": ["7168"]} */
const additional = (parameters: Fields, key: string, fallback: string): string => {
  const value = get(parameters, key)
  const first = Array.isArray(value) ? value[0] : value
  return typeof first === "string" || typeof first === "number" ? String(first) : fallback
}

/** Keycloak's stored hash in our string form */
const keycloakHash = (
  algorithm: string,
  iterations: unknown,
  salt: string,
  value: string,
  parameters: Fields,
  paths: { readonly algorithm: string; readonly iterations: string; readonly credential: string }
): string => {
  const count = typeof iterations === "string" && /^\d+$/.test(iterations) ? Number(iterations) : iterations
  if (typeof count !== "number" || !Number.isSafeInteger(count) || count < 1) fail(paths.iterations, `expected a positive whole number, got ${describe(iterations)}`)
  let stored: string
  if (Object.hasOwn(pbkdf2Digests, algorithm)) {
    stored = `${algorithm}$${count}$${salt}$${value}`
  } else if (algorithm === "argon2") {
    const variant = additional(parameters, "type", "id")
    const version = additional(parameters, "version", "1.3")
    if (!["id", "i", "d"].includes(variant)) fail(paths.algorithm, `argon2 type "${variant}" is not supported`)
    if (version !== "1.3") fail(paths.algorithm, `argon2 version ${version} is not supported (1.3 is)`)
    stored = `argon2${variant}$m=${additional(parameters, "memory", "7168")},t=${count},p=${additional(parameters, "parallelism", "1")}$${salt}$${value}`
  } else {
    return fail(paths.algorithm, `password hash algorithm "${algorithm}" is not supported (pbkdf2-sha256, pbkdf2-sha512, pbkdf2 and argon2 are)`)
  }
  const problem = storedHashProblem(stored)
  return problem !== undefined ? fail(paths.credential, `unusable ${algorithm} hash: ${problem}`) : stored
}

// credential types that are harmless to pass over; any other (otp, webauthn, …) is a sign-in factor larder cannot check
const ignoredCredentialTypes = new Set(["password-history"])

/** the user's stored password hash; a plain password is hashed here */
const readPassword = (user: Fields, path: string): string | undefined => {
  let stored: string | undefined
  list(user, "credentials", path, "credentials").forEach((item, i) => {
    const here = child(child(path, "credentials"), i)
    const credential = object(item, here, "a credential")
    const type = requiredString(credential, "type", here, `the credential type ("password")`)
    if (ignoredCredentialTypes.has(type)) return
    if (type !== "password") {
      fail(child(here, "type"), `credential type "${type}" is not supported: larder signs in with a password alone, which would drop this factor; remove the credential`)
    }
    if (stored !== undefined) fail(here, "a second password credential")
    const plain = optionalString(credential, "value", here)
    const hashed = optionalString(credential, "hashedValue", here)
    if (plain !== undefined) {
      if (plain === "") fail(child(here, "value"), "the password is empty")
      stored = hashPassword(plain)
    } else if (hashed !== undefined) {
      const problem = storedHashProblem(hashed)
      if (problem !== undefined) {
        fail(child(here, "hashedValue"), `not a password hash larder can check (such as hashPassword's "scrypt$N=…,r=…,p=…$salt$hash"): ${problem}`)
      }
      stored = hashed
    } else if (get(credential, "secretData") !== undefined || get(credential, "credentialData") !== undefined) {
      // Keycloak 11 and later: {"type":"password","secretData":"{\"value\":…,\"salt\":…}","credentialData":"{\"hashIterations\":…,\"algorithm\":…}"}
      const secretData = embeddedJson(credential, "secretData", here)
      const credentialData = embeddedJson(credential, "credentialData", here)
      const secretPath = child(here, "secretData")
      const dataPath = child(here, "credentialData")
      stored = keycloakHash(
        requiredString(credentialData, "algorithm", dataPath, "the hash algorithm"),
        get(credentialData, "hashIterations"),
        requiredString(secretData, "salt", secretPath, "the salt (base64)"),
        requiredString(secretData, "value", secretPath, "the hash (base64)"),
        optionalObject(credentialData, "additionalParameters", dataPath, "an object") ?? {},
        { algorithm: child(dataPath, "algorithm"), iterations: child(dataPath, "hashIterations"), credential: here }
      )
    } else if (get(credential, "hashedSaltedValue") !== undefined) {
      // exports of Keycloak 10 and earlier
      stored = keycloakHash(
        requiredString(credential, "algorithm", here, "the hash algorithm"),
        get(credential, "hashIterations"),
        requiredString(credential, "salt", here, "the salt (base64)"),
        requiredString(credential, "hashedSaltedValue", here, "the hash (base64)"),
        {},
        { algorithm: child(here, "algorithm"), iterations: child(here, "hashIterations"), credential: here }
      )
    } else {
      fail(here, `a password credential needs "value", "hashedValue", or Keycloak's "secretData" and "credentialData"`)
    }
  })
  return stored
}

const readUsers = (root: Fields, roles: RoleTable, groups: ReadonlyMap<string, GroupEntry>): Array<RealmUser> => {
  const users: Array<RealmUser> = []
  const usernames = new Set<string>()
  const emails = new Map<string, string>()
  // sign-in by e-mail needs e-mails to be unique, as Keycloak keeps them unless told otherwise
  const duplicateEmailsAllowed = optionalBoolean(root, "duplicateEmailsAllowed", "") ?? false
  list(root, "users", "", "users").forEach((item, i) => {
    const here = child("users", i)
    const user = object(item, here, "a user")
    const username = requiredString(user, "username", here, "the username").toLowerCase()
    if (username.trim() !== username) fail(child(here, "username"), `"${username}" starts or ends with white space`)
    if (usernames.has(username)) fail(child(here, "username"), `user ${username} is defined twice`)
    usernames.add(username)
    const email = emptyToUndefined(optionalString(user, "email", here))?.toLowerCase()
    if (email !== undefined && !duplicateEmailsAllowed) {
      const other = emails.get(email)
      if (other !== undefined) fail(child(here, "email"), `${email} is also the e-mail of user ${other} (set "duplicateEmailsAllowed": true to allow this)`)
      emails.set(email, username)
    }
    const groupPath = child(here, "groups")
    const memberOf = [
      ...new Set(strings(user, "groups", here, "group paths").map((entry, j) => {
        // Keycloak takes "/org/team", and also "devs" for a top-level group
        const full = entry.startsWith("/") ? entry : `/${entry}`
        if (!groups.has(full)) fail(child(groupPath, j), `unknown group "${entry}"`)
        return full
      }))
    ]
    const seeds = roleReferences(user, here, roles, "realmRoles", "clientRoles")
    for (const group of memberOf) {
      // a member of a group has the roles of the group's parents too
      for (let at: string | undefined = group; at !== undefined; at = groups.get(at)!.parent) seeds.push(...groups.get(at)!.roles)
    }
    const realmRoles: Array<string> = []
    const clientRoles = new Map<string, Array<string>>()
    for (const key of effectiveRoles(seeds, roles)) {
      const [kind, first, second] = key.split("\0")
      if (kind === "realm") realmRoles.push(first)
      else clientRoles.set(first, [...(clientRoles.get(first) ?? []), second])
    }
    users.push({
      username,
      email,
      emailVerified: optionalBoolean(user, "emailVerified", here) ?? false,
      firstName: emptyToUndefined(optionalString(user, "firstName", here)),
      lastName: emptyToUndefined(optionalString(user, "lastName", here)),
      enabled: optionalBoolean(user, "enabled", here) ?? true,
      passwordHash: readPassword(user, here),
      groups: memberOf,
      realmRoles,
      // fromEntries: a clientId such as "__proto__" stays an ordinary key
      clientRoles: Object.fromEntries(clientRoles)
    })
  })
  return users
}

// ---- the file -----------------------------------------------------------------------------------

const firstLine = (message: string) => message.split("\n")[0].replace(/:$/, "")

const parseText = (text: string, source: string, prefix: string): unknown => {
  const body = text.replace(/^\uFEFF/, "")
  // logLevel "error": YAML warnings are not printed, errors are thrown
  const yaml = () => parseYaml(body, { logLevel: "error" }) as unknown
  if (/\.json$/i.test(source)) {
    try {
      return JSON.parse(body)
    } catch (error) {
      throw new RealmError(`${prefix}: not valid JSON: ${firstLine((error as Error).message)}`)
    }
  }
  if (/^\s*[{[]/.test(body)) {
    try {
      return JSON.parse(body)
    } catch (jsonError) {
      // a YAML flow mapping also starts with "{"
      try {
        return yaml()
      } catch {
        throw new RealmError(`${prefix}: not valid JSON: ${firstLine((jsonError as Error).message)}`)
      }
    }
  }
  try {
    return yaml()
  } catch (error) {
    throw new RealmError(`${prefix}: not valid YAML: ${firstLine((error as Error).message)}`)
  }
}

const readRealm = (document: unknown): Realm => {
  if (Array.isArray(document)) fail("", "expected one realm (an object), got a list; export one realm per file (kc.sh export --realm NAME)")
  const root = object(document, "", "a realm (an object)")
  const realm = requiredString(root, "realm", "", "the realm's name")
  // the name is a URL path segment: /auth/realms/<realm>
  if (!/^[A-Za-z0-9._-]+$/.test(realm) || realm === "." || realm === "..") {
    fail("realm", `"${realm}" is not a usable realm name (letters, digits, ".", "_" and "-")`)
  }
  const roles = readRoles(root, realm)
  const groups = readGroups(root, roles)
  return {
    realm,
    displayName: emptyToUndefined(optionalString(root, "displayName", "")) ?? realm,
    enabled: optionalBoolean(root, "enabled", "") ?? true,
    clients: readClients(root),
    users: readUsers(root, roles, groups),
    groups: [...groups.keys()],
    lifespans: {
      accessToken: seconds(root, "accessTokenLifespan", 300),
      sessionIdle: seconds(root, "ssoSessionIdleTimeout", 1800),
      sessionMax: seconds(root, "ssoSessionMaxLifespan", 36000)
    }
  }
}

const seconds = (root: Fields, key: string, fallback: number): number => {
  const value = get(root, key)
  if (value === undefined) return fallback
  return typeof value === "number" && between(value, 1, 365 * 24 * 3600) ? value : fail(key, `expected a number of seconds, got ${describe(value)}`)
}

/** reads a realm file; `source` names it in error messages */
export const parseRealm = (text: string, source: string): Realm => {
  const prefix = `realm file ${source}`
  const document = parseText(text, source, prefix)
  try {
    return readRealm(document)
  } catch (error) {
    if (error instanceof Invalid) throw new RealmError(`${prefix}: ${error.path === "" ? "" : `${error.path}: `}${error.message}`)
    throw error
  }
}
