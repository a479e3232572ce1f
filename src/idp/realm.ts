// Realm files of the embedded identity provider: the subset of a Keycloak realm export that
// matters (realm, clients, users, groups, roles), in JSON or YAML. Passwords are hashed with scrypt
// as they are read; Keycloak's exported pbkdf2 hashes are kept in a self-describing string.
import { pbkdf2Sync, randomBytes, scryptSync, timingSafeEqual } from "node:crypto"
import { parse as parseYaml } from "yaml"

export interface RealmClient {
  readonly clientId: string
  readonly name: string
  readonly publicClient: boolean
  readonly secret: string | undefined
  readonly redirectUris: ReadonlyArray<string>
  readonly webOrigins: ReadonlyArray<string>
  readonly audiences: ReadonlyArray<string>
  readonly groupsClaim: { readonly claim: string; readonly fullPath: boolean; readonly idToken: boolean; readonly accessToken: boolean; readonly userinfo: boolean } | undefined
  readonly enabled: boolean
}

export interface RealmUser {
  readonly username: string
  readonly email: string | undefined
  readonly emailVerified: boolean
  readonly firstName: string | undefined
  readonly lastName: string | undefined
  readonly enabled: boolean
  readonly passwordHash: string | undefined
  readonly groups: ReadonlyArray<string>
  readonly realmRoles: ReadonlyArray<string>
  readonly clientRoles: Readonly<Record<string, ReadonlyArray<string>>>
}

export interface Realm {
  readonly realm: string
  readonly displayName: string
  readonly enabled: boolean
  readonly clients: ReadonlyArray<RealmClient>
  readonly users: ReadonlyArray<RealmUser>
  readonly groups: ReadonlyArray<string>
}

export class RealmError extends Error {}

// scrypt: about 50 ms per check on these machines
const scryptParams = { N: 16384, r: 8, p: 1 }
const scryptKeyLength = 32

export const hashPassword = (password: string): string => {
  const salt = randomBytes(16)
  const hash = scryptSync(password, salt, scryptKeyLength, { ...scryptParams, maxmem: 64 * 1024 * 1024 })
  return `scrypt$N=${scryptParams.N},r=${scryptParams.r},p=${scryptParams.p}$${salt.toString("base64")}$${hash.toString("base64")}`
}

const same = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b)

export const verifyPassword = (password: string, stored: string): boolean => {
  const parts = stored.split("$")
  if (parts[0] === "scrypt" && parts.length === 4) {
    const params = Object.fromEntries(parts[1].split(",").map((pair) => pair.split("=")).map(([k, v]) => [k, Number(v)]))
    const expected = Buffer.from(parts[3], "base64")
    const hash = scryptSync(password, Buffer.from(parts[2], "base64"), expected.length, { N: params.N, r: params.r, p: params.p, maxmem: 256 * 1024 * 1024 })
    return same(hash, expected)
  }
  const pbkdf2 = /^pbkdf2(?:-(sha256|sha512))?$/.exec(parts[0])
  if (pbkdf2 !== null && parts.length === 4) {
    const expected = Buffer.from(parts[3], "base64")
    const hash = pbkdf2Sync(password, Buffer.from(parts[2], "base64"), Number(parts[1]), expected.length, pbkdf2[1] ?? "sha1")
    return same(hash, expected)
  }
  return false
}

const dummyHash = hashPassword(randomBytes(12).toString("hex"))
/** the same work as a real check, for unknown users: timing does not tell which names exist */
export const dummyPasswordCheck = (): void => {
  verifyPassword("not-a-password", dummyHash)
}

type Json = Record<string, unknown>

export const parseRealm = (text: string, source: string): Realm => {
  const fail = (path: string, message: string): never => {
    throw new RealmError(`realm file ${source}: ${path === "" ? "" : `${path}: `}${message}`)
  }
  let document: unknown
  try {
    document = source.endsWith(".json") || text.trimStart().startsWith("{") ? JSON.parse(text) : parseYaml(text)
  } catch (error) {
    return fail("", `not valid ${source.endsWith(".json") ? "JSON" : "JSON or YAML"}: ${(error as Error).message}`)
  }
  const object = (value: unknown, path: string): Json =>
    value !== null && typeof value === "object" && !Array.isArray(value) ? value as Json : fail(path, "expected an object")
  const list = (value: unknown, path: string): Array<unknown> => value === undefined ? [] : Array.isArray(value) ? value : fail(path, "expected a list")
  const string = (value: unknown, path: string): string => typeof value === "string" ? value : fail(path, "expected a string")
  const optionalString = (value: unknown, path: string): string | undefined => value === undefined || value === null ? undefined : string(value, path)
  const bool = (value: unknown, path: string, fallback: boolean): boolean =>
    value === undefined ? fallback : typeof value === "boolean" ? value : value === "true" ? true : value === "false" ? false : fail(path, "expected true or false")
  const strings = (value: unknown, path: string): Array<string> => list(value, path).map((item, i) => string(item, `${path}[${i}]`))

  const root = object(document, "")
  const realm = string(root.realm, "realm")
  if (!/^[A-Za-z0-9._-]+$/.test(realm)) fail("realm", `"${realm}" may hold only letters, digits, ".", "_" and "-"`)

  // roles, with composites expanded
  const rolesRoot = root.roles === undefined ? {} : object(root.roles, "roles")
  const realmRoleDefs = new Map<string, Json>()
  list(rolesRoot.realm, "roles.realm").forEach((item, i) => {
    const role = object(item, `roles.realm[${i}]`)
    realmRoleDefs.set(string(role.name, `roles.realm[${i}].name`), role)
  })
  const clientRoleDefs = new Map<string, Map<string, Json>>()
  for (const [clientId, roles] of Object.entries(rolesRoot.client === undefined ? {} : object(rolesRoot.client, "roles.client"))) {
    const defs = new Map<string, Json>()
    list(roles, `roles.client.${clientId}`).forEach((item, i) => {
      const role = object(item, `roles.client.${clientId}[${i}]`)
      defs.set(string(role.name, `roles.client.${clientId}[${i}].name`), role)
    })
    clientRoleDefs.set(clientId, defs)
  }
  // Keycloak's built-in realm roles exist in every realm
  for (const builtIn of ["offline_access", "uma_authorization", `default-roles-${realm.toLowerCase()}`]) {
    if (!realmRoleDefs.has(builtIn)) realmRoleDefs.set(builtIn, { name: builtIn })
  }

  interface Roles { realm: Set<string>; client: Map<string, Set<string>> }
  const emptyRoles = (): Roles => ({ realm: new Set(), client: new Map() })
  const addRealmRole = (into: Roles, name: string, path: string, seen = new Set<string>()) => {
    const def = realmRoleDefs.get(name)
    if (def === undefined) fail(path, `unknown realm role "${name}"`)
    into.realm.add(name)
    if (seen.has(`r:${name}`)) return
    seen.add(`r:${name}`)
    expandComposites(into, def!, path, seen)
  }
  const addClientRole = (into: Roles, clientId: string, name: string, path: string, seen = new Set<string>()) => {
    const def = clientRoleDefs.get(clientId)?.get(name)
    if (def === undefined) fail(path, `unknown role "${name}" of client ${clientId}`)
    const set = into.client.get(clientId) ?? new Set<string>()
    set.add(name)
    into.client.set(clientId, set)
    if (seen.has(`c:${clientId}:${name}`)) return
    seen.add(`c:${clientId}:${name}`)
    expandComposites(into, def!, path, seen)
  }
  function expandComposites(into: Roles, def: Json, path: string, seen: Set<string>) {
    if (def.composites === undefined) return
    const composites = object(def.composites, `${path} (composites of ${String(def.name)})`)
    for (const name of strings(composites.realm, `${path} (composites.realm)`)) addRealmRole(into, name, path, seen)
    for (const [clientId, names] of Object.entries(composites.client === undefined ? {} : object(composites.client, `${path} (composites.client)`))) {
      for (const name of strings(names, `${path} (composites.client.${clientId})`)) addClientRole(into, clientId, name, path, seen)
    }
  }
  const addAll = (into: Roles, realmRoles: unknown, clientRoles: unknown, path: string) => {
    strings(realmRoles, `${path}.realmRoles`).forEach((name, i) => addRealmRole(into, name, `${path}.realmRoles[${i}]`))
    for (const [clientId, names] of Object.entries(clientRoles === undefined ? {} : object(clientRoles, `${path}.clientRoles`))) {
      strings(names, `${path}.clientRoles.${clientId}`).forEach((name, i) => addClientRole(into, clientId, name, `${path}.clientRoles.${clientId}[${i}]`))
    }
  }

  // groups by full path, each with its own roles and its parent's
  const groupRoles = new Map<string, Roles>()
  const walkGroups = (items: unknown, parent: string, parentRoles: Roles | undefined, path: string) => {
    list(items, path).forEach((item, i) => {
      const here = `${path}[${i}]`
      const group = object(item, here)
      const name = string(group.name, `${here}.name`)
      const full = `${parent}/${name}`
      if (groupRoles.has(full)) fail(`${here}.name`, `group ${full} is defined twice`)
      const roles = emptyRoles()
      if (parentRoles !== undefined) {
        for (const role of parentRoles.realm) roles.realm.add(role)
        for (const [clientId, names] of parentRoles.client) roles.client.set(clientId, new Set(names))
      }
      addAll(roles, group.realmRoles, group.clientRoles, here)
      groupRoles.set(full, roles)
      walkGroups(group.subGroups, full, roles, `${here}.subGroups`)
    })
  }
  walkGroups(root.groups, "", undefined, "groups")

  const clients: Array<RealmClient> = []
  list(root.clients, "clients").forEach((item, i) => {
    const here = `clients[${i}]`
    const client = object(item, here)
    const clientId = string(client.clientId, `${here}.clientId`)
    if (clients.some((other) => other.clientId === clientId)) fail(`${here}.clientId`, `client ${clientId} is defined twice`)
    const publicClient = bool(client.publicClient, `${here}.publicClient`, false)
    const secret = optionalString(client.secret, `${here}.secret`)
    if (!publicClient && (secret === undefined || secret === "")) fail(`${here}.secret`, `confidential client ${clientId} needs a secret (or set publicClient: true)`)
    const redirectUris = strings(client.redirectUris, `${here}.redirectUris`)
    redirectUris.forEach((uri, j) => {
      const parsed = URL.parse(uri.replace(/\*$/, ""))
      if (parsed === null || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
        fail(`${here}.redirectUris[${j}]`, `expected an absolute http(s) URL, optionally ending in *, got "${uri}"`)
      }
    })
    const webOrigins = strings(client.webOrigins, `${here}.webOrigins`)
    const audiences: Array<string> = []
    let groupsClaim: RealmClient["groupsClaim"]
    list(client.protocolMappers, `${here}.protocolMappers`).forEach((entry, j) => {
      const mapperPath = `${here}.protocolMappers[${j}]`
      const mapper = object(entry, mapperPath)
      const type = string(mapper.protocolMapper, `${mapperPath}.protocolMapper`)
      const config = mapper.config === undefined ? {} : object(mapper.config, `${mapperPath}.config`)
      const flag = (name: string, fallback: boolean) => bool(config[name], `${mapperPath}.config["${name}"]`, fallback)
      if (type === "oidc-audience-mapper") {
        const audience = optionalString(config["included.client.audience"], `${mapperPath}.config["included.client.audience"]`) ??
          optionalString(config["included.custom.audience"], `${mapperPath}.config["included.custom.audience"]`)
        if (audience === undefined) fail(`${mapperPath}.config`, "an audience mapper needs included.client.audience or included.custom.audience")
        if (flag("access.token.claim", true)) audiences.push(audience!)
      } else if (type === "oidc-group-membership-mapper") {
        groupsClaim = {
          claim: optionalString(config["claim.name"], `${mapperPath}.config["claim.name"]`) ?? "groups",
          fullPath: flag("full.path", true),
          idToken: flag("id.token.claim", true),
          accessToken: flag("access.token.claim", true),
          userinfo: flag("userinfo.token.claim", true)
        }
      }
    })
    clients.push({
      clientId,
      name: optionalString(client.name, `${here}.name`) ?? clientId,
      publicClient,
      secret: publicClient ? undefined : secret,
      redirectUris,
      webOrigins,
      audiences,
      groupsClaim,
      enabled: bool(client.enabled, `${here}.enabled`, true)
    })
  })

  const users: Array<RealmUser> = []
  list(root.users, "users").forEach((item, i) => {
    const here = `users[${i}]`
    const user = object(item, here)
    const username = string(user.username, `${here}.username`).toLowerCase()
    if (users.some((other) => other.username === username)) fail(`${here}.username`, `user ${username} is defined twice`)
    let passwordHash: string | undefined
    list(user.credentials, `${here}.credentials`).forEach((entry, j) => {
      const credPath = `${here}.credentials[${j}]`
      const credential = object(entry, credPath)
      if ((credential.type ?? "password") !== "password") return
      if (credential.value !== undefined) passwordHash = hashPassword(string(credential.value, `${credPath}.value`))
      else if (credential.hashedValue !== undefined) {
        passwordHash = string(credential.hashedValue, `${credPath}.hashedValue`)
        if (!passwordHash.startsWith("scrypt$")) fail(`${credPath}.hashedValue`, "expected a hash made by larder (scrypt$...)")
      } else if (credential.secretData !== undefined) {
        let secretData: Json, credentialData: Json
        try {
          secretData = JSON.parse(string(credential.secretData, `${credPath}.secretData`)) as Json
          credentialData = JSON.parse(string(credential.credentialData ?? "{}", `${credPath}.credentialData`)) as Json
        } catch {
          return fail(credPath, "secretData and credentialData must be JSON strings (as Keycloak exports them)")
        }
        const algorithm = String(credentialData.algorithm ?? "pbkdf2-sha256")
        if (!["pbkdf2", "pbkdf2-sha256", "pbkdf2-sha512"].includes(algorithm)) {
          fail(`${credPath}.credentialData`, `password hash algorithm "${algorithm}" is not supported (pbkdf2, pbkdf2-sha256, pbkdf2-sha512 are)`)
        }
        passwordHash = `${algorithm}$${Number(credentialData.hashIterations ?? 27500)}$${string(secretData.salt, `${credPath}.secretData.salt`)}$${string(secretData.value, `${credPath}.secretData.value`)}`
      } else {
        fail(credPath, "a password credential needs value, hashedValue, or Keycloak's secretData/credentialData")
      }
    })
    const roles = emptyRoles()
    addAll(roles, user.realmRoles, user.clientRoles, here)
    const groups = strings(user.groups, `${here}.groups`).map((group, j) => {
      const full = group.startsWith("/") ? group : `/${group}`
      const inherited = groupRoles.get(full)
      if (inherited === undefined) fail(`${here}.groups[${j}]`, `unknown group "${group}"`)
      for (const role of inherited!.realm) roles.realm.add(role)
      for (const [clientId, names] of inherited!.client) {
        const set = roles.client.get(clientId) ?? new Set<string>()
        for (const name of names) set.add(name)
        roles.client.set(clientId, set)
      }
      return full
    })
    users.push({
      username,
      email: optionalString(user.email, `${here}.email`),
      emailVerified: bool(user.emailVerified, `${here}.emailVerified`, false),
      firstName: optionalString(user.firstName, `${here}.firstName`),
      lastName: optionalString(user.lastName, `${here}.lastName`),
      enabled: bool(user.enabled, `${here}.enabled`, true),
      passwordHash,
      groups,
      realmRoles: [...roles.realm],
      clientRoles: Object.fromEntries([...roles.client].map(([clientId, names]) => [clientId, [...names]]))
    })
  })

  return {
    realm,
    displayName: optionalString(root.displayName, "displayName") ?? realm,
    enabled: bool(root.enabled, "enabled", true),
    clients,
    users,
    groups: [...groupRoles.keys()]
  }
}
