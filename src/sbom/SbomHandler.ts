// The Dependency-Track-compatible API under /api on the web listener: version, OIDC availability
// and login, BOM upload (JSON with base64, or multipart) with schema validation, projects and
// components, teams, permissions, memberships and OIDC group mappings. Pipelines that upload with
// curl and an X-Api-Key work unchanged; people sign in with OIDC and get a session token (JWT).
import type { IncomingMessage, ServerResponse } from "node:http"
import { randomUUID } from "node:crypto"
import { jwtVerify, SignJWT } from "jose"
import type { NodeHandler } from "../http/Listeners.ts"
import { readBodyUpTo } from "../http/requestBody.ts"
import { dummyPasswordCheck, verifyPassword } from "../idp/passwords.ts"
import { describeWait, makeSignInThrottle } from "../idp/signInThrottle.ts"
import { checkBom } from "./bom.ts"
import { OidcLoginError, type SbomOidc } from "./oidc.ts"
import { permissions, type Permission, type Project, type SbomStore, type Team, type User } from "./store.ts"
import { sbomAssets } from "./ui.ts"

const maxBodyBytes = 64 * 1024 * 1024
const sessionHours = 12

class HttpError extends Error {
  readonly status: number
  readonly title: string
  constructor(status: number, title: string, detail: string) {
    super(detail)
    this.status = status
    this.title = title
  }
}

const problem = (response: ServerResponse, status: number, title: string, detail: string, extra: Record<string, unknown> = {}) => {
  const body = JSON.stringify({ status, title, detail, ...extra })
  response.writeHead(status, { "content-type": "application/problem+json", "cache-control": "no-store", "content-length": Buffer.byteLength(body) })
  response.end(body)
}

const json = (response: ServerResponse, status: number, value: unknown) => {
  const body = JSON.stringify(value)
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", "content-length": Buffer.byteLength(body) })
  response.end(body)
}

const plain = (response: ServerResponse, status: number, text: string) => {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const readBody = (request: IncomingMessage): Promise<Buffer> =>
  readBodyUpTo(request, maxBodyBytes, () => new HttpError(413, "Payload Too Large", `request bodies are limited to ${maxBodyBytes / 1024 / 1024} MiB`))

const readJson = async (request: IncomingMessage): Promise<Record<string, unknown>> => {
  const body = await readBody(request)
  try {
    const value = JSON.parse(body.toString("utf8")) as unknown
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw new Error("expected a JSON object")
    return value as Record<string, unknown>
  } catch (error) {
    throw new HttpError(400, "Bad Request", `the body is not a JSON object: ${(error as Error).message}`)
  }
}

/** urlencoded or multipart form fields (files as their text) */
const readForm = async (request: IncomingMessage): Promise<Map<string, string>> => {
  const body = await readBody(request)
  const type = request.headers["content-type"] ?? ""
  const fields = new Map<string, string>()
  if (type.startsWith("application/x-www-form-urlencoded")) {
    for (const [name, value] of new URLSearchParams(body.toString("utf8"))) fields.set(name, value)
    return fields
  }
  if (!type.startsWith("multipart/form-data")) throw new HttpError(415, "Unsupported Media Type", "send multipart/form-data or application/x-www-form-urlencoded")
  let form: FormData
  try {
    form = await new Response(body, { headers: { "content-type": type } }).formData()
  } catch (error) {
    throw new HttpError(400, "Bad Request", `the multipart body cannot be read: ${(error as Error).message}`)
  }
  for (const [name, value] of form) fields.set(name, typeof value === "string" ? value : await value.text())
  return fields
}

interface Principal {
  readonly kind: "team" | "user"
  readonly name: string
  readonly user: User | undefined
  readonly permissions: Set<Permission>
}

const projectJson = (project: Project) => ({
  uuid: project.uuid,
  name: project.name,
  ...(project.version === undefined ? {} : { version: project.version }),
  active: project.active,
  lastBomImport: project.lastBomImport,
  lastBomImportFormat: project.lastBomImportFormat
})

const teamJson = (team: Team, store: SbomStore) => ({
  uuid: team.uuid,
  name: team.name,
  permissions: team.permissions.map((name) => ({ name })),
  apiKeys: team.apiKeys.map((key) => ({ maskedKey: `${key.prefix}${"*".repeat(12)}`, created: key.created })),
  mappedOidcGroups: team.mappedOidcGroups.map((uuid) => ({ uuid, group: store.oidcGroup(uuid) })),
  oidcUsers: store.users().filter((user) => user.kind === "oidc" && user.teams.includes(team.uuid)).map((user) => ({ username: user.username })),
  managedUsers: store.users().filter((user) => user.kind === "managed" && user.teams.includes(team.uuid)).map((user) => ({ username: user.username }))
})

const userJson = (user: User, store: SbomStore) => ({
  username: user.username,
  email: user.email,
  ...(user.kind === "oidc" ? { subjectIdentifier: user.subjectIdentifier } : {}),
  teams: user.teams.map((uuid) => store.team(uuid)).filter((team) => team !== undefined).map((team) => ({ uuid: team.uuid, name: team.name })),
  permissions: [...store.permissionsOf(user)].map((name) => ({ name }))
})

export interface SbomHandlerOptions {
  readonly store: SbomStore
  readonly oidc: SbomOidc | undefined
  /** HMAC key of the session tokens */
  readonly sessionSecret: Uint8Array
  readonly version: string
  readonly log: (level: "info" | "warn", message: string) => void
}

export const makeSbomHandler = (options: SbomHandlerOptions): NodeHandler => {
  const { store, oidc, log } = options
  const assets = sbomAssets(oidc)
  // managed users' passwords: the same lockout as the identity provider's login page
  const throttle = makeSignInThrottle()

  const sessionToken = (user: User) =>
    new SignJWT({ kind: user.kind }).setProtectedHeader({ alg: "HS256" }).setSubject(user.username).setIssuer("larder-sbom")
      .setIssuedAt().setExpirationTime(`${sessionHours}h`).sign(options.sessionSecret)

  const authenticate = async (request: IncomingMessage): Promise<Principal | undefined> => {
    const apiKey = request.headers["x-api-key"]
    if (typeof apiKey === "string" && apiKey !== "") {
      const team = store.teamByApiKey(apiKey)
      if (team === undefined) return undefined
      return { kind: "team", name: team.name, user: undefined, permissions: new Set(team.permissions) }
    }
    const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1]
    if (bearer === undefined) return undefined
    try {
      const { payload } = await jwtVerify(bearer, options.sessionSecret, { issuer: "larder-sbom", algorithms: ["HS256"] })
      const user = store.user(String(payload.sub))
      return user === undefined ? undefined : { kind: "user", name: user.username, user, permissions: store.permissionsOf(user) }
    } catch {
      return undefined
    }
  }

  const require_ = async (request: IncomingMessage, ...needed: ReadonlyArray<Permission>): Promise<Principal> => {
    const principal = await authenticate(request)
    if (principal === undefined) throw new HttpError(401, "Unauthorized", "send X-Api-Key: <team API key> or Authorization: Bearer <session token from /api/v1/user/login or /api/v1/user/oidc/login>")
    const missing = needed.filter((permission) => !principal.permissions.has(permission))
    if (missing.length > 0) throw new HttpError(403, "Forbidden", `${principal.kind} ${principal.name} lacks the permission ${missing.join(", ")}`)
    return principal
  }

  const upload = async (principal: Principal, fields: { project?: unknown; projectName?: unknown; projectVersion?: unknown; autoCreate?: unknown; bom?: unknown }, bomIsBase64: boolean) => {
    if (typeof fields.bom !== "string" || fields.bom === "") throw new HttpError(400, "Bad Request", "the bom field is missing (the CycloneDX BOM, base64-encoded in JSON uploads)")
    const text = bomIsBase64 ? Buffer.from(fields.bom, "base64").toString("utf8") : fields.bom
    const checked = await checkBom(text)
    if (!checked.ok) throw Object.assign(new HttpError(400, checked.title, checked.detail), { errors: checked.errors })
    let project: Project | undefined
    if (typeof fields.project === "string" && fields.project !== "") {
      project = store.project(fields.project)
      if (project === undefined) throw new HttpError(404, "Not Found", `no project with uuid ${fields.project}`)
    } else {
      if (typeof fields.projectName !== "string" || fields.projectName === "") throw new HttpError(400, "Bad Request", "name the project: project (uuid), or projectName and projectVersion")
      const version = typeof fields.projectVersion === "string" && fields.projectVersion !== "" ? fields.projectVersion : undefined
      project = store.projectByName(fields.projectName, version)
      if (project === undefined) {
        const autoCreate = fields.autoCreate === true || fields.autoCreate === "true"
        if (!autoCreate) throw new HttpError(404, "Not Found", `no project ${fields.projectName} ${version ?? ""}; set autoCreate to create it`.replace(" ;", ";"))
        if (!principal.permissions.has("PROJECT_CREATION_UPLOAD") && !principal.permissions.has("PORTFOLIO_MANAGEMENT")) {
          throw new HttpError(403, "Forbidden", `${principal.kind} ${principal.name} lacks the permission PROJECT_CREATION_UPLOAD (needed for autoCreate)`)
        }
        project = await store.createProject(fields.projectName, version)
        log("info", `SBOM: project ${project.name} ${project.version ?? ""} created by ${principal.kind} ${principal.name}`)
      }
    }
    const token = randomUUID()
    await store.importBom(project, checked.json, checked.specVersion, checked.components, token)
    log("info", `SBOM: ${checked.components.length} components imported into ${project.name} ${project.version ?? ""} by ${principal.kind} ${principal.name}`)
    return { token }
  }

  const oidcLogin = async (request: IncomingMessage) => {
    if (oidc === undefined || !oidc.options.enabled) throw new HttpError(400, "Bad Request", "OIDC is not enabled (ALPINE_OIDC_ENABLED)")
    let idToken = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1]
    if (idToken === undefined && request.headers["content-type"] !== undefined) {
      const form = await readForm(request)
      idToken = form.get("idToken") ?? undefined
    }
    if (idToken === undefined) throw new HttpError(400, "Bad Request", "send the ID token as Authorization: Bearer <ID_TOKEN> (or the form field idToken)")
    let claims: Record<string, unknown>
    try {
      claims = await oidc.verifyIdToken(idToken)
    } catch (error) {
      if (error instanceof OidcLoginError) {
        log("warn", `SBOM OIDC login refused: ${error.message}`)
        throw new HttpError(401, "Unauthorized", error.message)
      }
      throw error
    }
    const o = oidc.options
    const username = claims[o.usernameClaim]
    if (typeof username !== "string" || username === "") throw new HttpError(401, "Unauthorized", `the ID token has no ${o.usernameClaim} claim (ALPINE_OIDC_USERNAME_CLAIM)`)
    let user = store.user(username)
    if (user === undefined) {
      if (!o.userProvisioning) throw new HttpError(401, "Unauthorized", `user ${username} does not exist and user provisioning is off (ALPINE_OIDC_USER_PROVISIONING)`)
      const defaults = o.teamsDefault.map((name) => store.teamByName(name)?.uuid).filter((uuid) => uuid !== undefined)
      user = { username, kind: "oidc", email: typeof claims.email === "string" ? claims.email : undefined, passwordHash: undefined, subjectIdentifier: String(claims.sub), teams: defaults }
      log("info", `SBOM: provisioned OIDC user ${username} (${defaults.length === 0 ? "no team, no permissions" : `teams ${o.teamsDefault.join(", ")}`})`)
    } else if (user.kind !== "oidc") {
      throw new HttpError(401, "Unauthorized", `user ${username} is a managed user; sign in with username and password`)
    }
    if (o.teamsProvisioning) {
      // teams follow the groups claim through the OIDC mappings
      if (!Array.isArray(claims[o.teamsClaim])) {
        log("warn", `SBOM OIDC: teams provisioning is on but the ID token of ${username} has no ${o.teamsClaim} claim; add a group membership mapper to client ${o.clientId} (or set ALPINE_OIDC_TEAMS_CLAIM)`)
      }
      const groupNames = new Set(Array.isArray(claims[o.teamsClaim]) ? (claims[o.teamsClaim] as Array<unknown>).map(String) : [])
      const mapped = store.teams().filter((team) => team.mappedOidcGroups.some((uuid) => groupNames.has(store.oidcGroup(uuid)?.name ?? "\u0000")))
      const defaults = o.teamsDefault.map((name) => store.teamByName(name)?.uuid).filter((uuid) => uuid !== undefined)
      user = { ...user, teams: [...new Set([...defaults, ...mapped.map((team) => team.uuid)])] }
    }
    await store.putUser(user)
    return sessionToken(user)
  }

  type Route = (request: IncomingMessage, response: ServerResponse, parts: ReadonlyArray<string>, query: URLSearchParams) => Promise<void>

  const routes: Array<{ method: string; pattern: RegExp; run: Route }> = [
    { method: "GET", pattern: /^\/api\/version$/, run: async (_q, response) => json(response, 200, { application: "larder", version: options.version, compatibleWith: "Dependency-Track API v1" }) },
    {
      method: "GET", pattern: /^\/api\/v1\/oidc\/available$/, run: async (request, response) => {
        const available = oidc?.options.enabled === true
        if (request.headers.accept === "text/plain") return plain(response, 200, String(available))
        const status = oidc?.status()
        json(response, 200, { available, discovery: !available ? "not configured" : status?.ok === true ? "ok" : status?.error ?? "not run" })
      }
    },
    {
      method: "GET", pattern: /^\/api\/v1\/oidc\/status$/, run: async (_q, response) => {
        if (oidc === undefined) return json(response, 200, { enabled: false })
        const status = oidc.status()
        const o = oidc.options
        json(response, 200, {
          enabled: o.enabled, issuer: o.issuer, clientId: o.clientId, usernameClaim: o.usernameClaim,
          userProvisioning: o.userProvisioning, teamsProvisioning: o.teamsProvisioning, teamsClaim: o.teamsClaim, teamsDefault: o.teamsDefault,
          discovery: { ok: status.ok, error: status.error, checkedAt: status.checkedAt === undefined ? undefined : new Date(status.checkedAt).toISOString() }
        })
      }
    },
    {
      method: "POST", pattern: /^\/api\/v1\/user\/login$/, run: async (request, response) => {
        const form = await readForm(request)
        const username = form.get("username") ?? ""
        const user = store.user(username)
        const wait = throttle.waitMs(username)
        if (wait > 0) {
          response.setHeader("retry-after", String(Math.ceil(wait / 1000)))
          throw new HttpError(429, "Too Many Requests", `too many failed sign-ins for this username; try again in ${describeWait(wait)}`)
        }
        const ok = user?.kind === "managed" && user.passwordHash !== undefined ? await verifyPassword(form.get("password") ?? "", user.passwordHash) : await dummyPasswordCheck()
        if (!ok) {
          throttle.failed(username)
          throw new HttpError(401, "Unauthorized", "invalid username or password")
        }
        throttle.succeeded(username)
        plain(response, 200, await sessionToken(user!))
      }
    },
    { method: "POST", pattern: /^\/api\/v1\/user\/oidc\/login$/, run: async (request, response) => plain(response, 200, await oidcLogin(request)) },
    {
      method: "GET", pattern: /^\/api\/v1\/user\/self$/, run: async (request, response) => {
        const principal = await require_(request)
        if (principal.user === undefined) throw new HttpError(400, "Bad Request", "an API key belongs to a team, not a user")
        json(response, 200, userJson(principal.user, store))
      }
    },
    {
      method: "PUT", pattern: /^\/api\/v1\/bom$/, run: async (request, response) => {
        const principal = await require_(request, "BOM_UPLOAD")
        json(response, 200, await upload(principal, await readJson(request), true))
      }
    },
    {
      method: "POST", pattern: /^\/api\/v1\/bom$/, run: async (request, response) => {
        const principal = await require_(request, "BOM_UPLOAD")
        const form = await readForm(request)
        json(response, 200, await upload(principal, Object.fromEntries(form), false))
      }
    },
    {
      method: "GET", pattern: /^\/api\/v1\/(?:bom|event)\/token\/([0-9a-f-]{36})$/, run: async (request, response, [uuid]) => {
        await require_(request)
        const token = store.token(uuid)
        // Dependency-Track answers processing: false for tokens it does not know (done and forgotten)
        json(response, 200, { processing: token?.processing ?? false })
      }
    },
    {
      method: "GET", pattern: /^\/api\/v1\/project$/, run: async (request, response, _p, query) => {
        await require_(request, "VIEW_PORTFOLIO")
        const name = query.get("name")
        json(response, 200, store.projects().filter((project) => name === null || project.name === name).map(projectJson))
      }
    },
    {
      method: "GET", pattern: /^\/api\/v1\/project\/lookup$/, run: async (request, response, _p, query) => {
        await require_(request, "VIEW_PORTFOLIO")
        const project = store.projectByName(query.get("name") ?? "", query.get("version") ?? undefined)
        if (project === undefined) throw new HttpError(404, "Not Found", "The project could not be found.")
        json(response, 200, projectJson(project))
      }
    },
    {
      method: "GET", pattern: /^\/api\/v1\/project\/([0-9a-f-]{36})$/, run: async (request, response, [uuid]) => {
        await require_(request, "VIEW_PORTFOLIO")
        const project = store.project(uuid)
        if (project === undefined) throw new HttpError(404, "Not Found", "The project could not be found.")
        json(response, 200, projectJson(project))
      }
    },
    {
      method: "GET", pattern: /^\/api\/v1\/component\/project\/([0-9a-f-]{36})$/, run: async (request, response, [uuid]) => {
        await require_(request, "VIEW_PORTFOLIO")
        const project = store.project(uuid)
        if (project === undefined) throw new HttpError(404, "Not Found", "The project could not be found.")
        response.setHeader("x-total-count", String(store.components(uuid).length))
        json(response, 200, store.components(uuid).map((component) => ({ ...component, project: { uuid, name: project.name, version: project.version } })))
      }
    },
    {
      method: "GET", pattern: /^\/api\/v1\/team$/, run: async (request, response) => {
        await require_(request, "ACCESS_MANAGEMENT")
        json(response, 200, store.teams().map((team) => teamJson(team, store)))
      }
    },
    {
      method: "PUT", pattern: /^\/api\/v1\/team$/, run: async (request, response) => {
        await require_(request, "ACCESS_MANAGEMENT")
        const body = await readJson(request)
        if (typeof body.name !== "string" || body.name.trim() === "") throw new HttpError(400, "Bad Request", "a team needs a name")
        if (store.teamByName(body.name) !== undefined) throw new HttpError(409, "Conflict", `a team named ${body.name} exists`)
        json(response, 201, teamJson(await store.createTeam(body.name.trim()), store))
      }
    },
    {
      method: "POST", pattern: /^\/api\/v1\/team$/, run: async (request, response) => {
        await require_(request, "ACCESS_MANAGEMENT")
        const body = await readJson(request)
        const team = store.team(String(body.uuid))
        if (team === undefined) throw new HttpError(404, "Not Found", "The team could not be found.")
        const updated = { ...team, name: typeof body.name === "string" && body.name.trim() !== "" ? body.name.trim() : team.name }
        await store.putTeam(updated)
        json(response, 200, teamJson(updated, store))
      }
    },
    {
      method: "DELETE", pattern: /^\/api\/v1\/team$/, run: async (request, response) => {
        await require_(request, "ACCESS_MANAGEMENT")
        const body = await readJson(request)
        if (store.team(String(body.uuid)) === undefined) throw new HttpError(404, "Not Found", "The team could not be found.")
        await store.deleteTeam(String(body.uuid))
        response.writeHead(204).end()
      }
    },
    {
      method: "PUT", pattern: /^\/api\/v1\/team\/([0-9a-f-]{36})\/key$/, run: async (request, response, [uuid]) => {
        await require_(request, "ACCESS_MANAGEMENT")
        const key = await store.newApiKey(uuid)
        if (key === undefined) throw new HttpError(404, "Not Found", "The team could not be found.")
        json(response, 201, { key })
      }
    },
    {
      method: "POST|DELETE", pattern: /^\/api\/v1\/permission\/([A-Z_]+)\/team\/([0-9a-f-]{36})$/, run: async (request, response, [permission, uuid]) => {
        await require_(request, "ACCESS_MANAGEMENT")
        if (!(permissions as ReadonlyArray<string>).includes(permission)) throw new HttpError(404, "Not Found", `no permission ${permission}; known: ${permissions.join(", ")}`)
        const team = store.team(uuid)
        if (team === undefined) throw new HttpError(404, "Not Found", "The team could not be found.")
        const granted = request.method === "POST"
        if (granted === team.permissions.includes(permission as Permission)) {
          response.writeHead(304).end()
          return
        }
        const updated = { ...team, permissions: granted ? [...team.permissions, permission as Permission] : team.permissions.filter((p) => p !== permission) }
        await store.putTeam(updated)
        json(response, 200, teamJson(updated, store))
      }
    },
    {
      method: "POST|DELETE", pattern: /^\/api\/v1\/user\/([^/]+)\/membership$/, run: async (request, response, [username]) => {
        await require_(request, "ACCESS_MANAGEMENT")
        const user = store.user(decodeURIComponent(username))
        if (user === undefined) throw new HttpError(404, "Not Found", "The user could not be found.")
        const body = await readJson(request)
        const team = store.team(String(body.uuid))
        if (team === undefined) throw new HttpError(404, "Not Found", "The team could not be found.")
        const member = user.teams.includes(team.uuid)
        if (request.method === "POST" ? member : !member) {
          response.writeHead(304).end()
          return
        }
        const updated = { ...user, teams: request.method === "POST" ? [...user.teams, team.uuid] : user.teams.filter((t) => t !== team.uuid) }
        await store.putUser(updated)
        json(response, 200, userJson(updated, store))
      }
    },
    {
      method: "GET", pattern: /^\/api\/v1\/user\/oidc$/, run: async (request, response) => {
        await require_(request, "ACCESS_MANAGEMENT")
        json(response, 200, store.users().filter((user) => user.kind === "oidc").map((user) => userJson(user, store)))
      }
    },
    {
      method: "PUT", pattern: /^\/api\/v1\/oidc\/group$/, run: async (request, response) => {
        await require_(request, "ACCESS_MANAGEMENT")
        const body = await readJson(request)
        if (typeof body.name !== "string" || body.name === "") throw new HttpError(400, "Bad Request", "an OIDC group needs a name (as it appears in the groups claim)")
        if (store.oidcGroupByName(body.name) !== undefined) throw new HttpError(409, "Conflict", `an OIDC group named ${body.name} exists`)
        json(response, 201, await store.createOidcGroup(body.name))
      }
    },
    {
      method: "GET", pattern: /^\/api\/v1\/oidc\/group$/, run: async (request, response) => {
        await require_(request, "ACCESS_MANAGEMENT")
        json(response, 200, store.oidcGroups())
      }
    },
    {
      method: "PUT", pattern: /^\/api\/v1\/oidc\/mapping$/, run: async (request, response) => {
        await require_(request, "ACCESS_MANAGEMENT")
        const body = await readJson(request)
        const team = store.team(String(body.team))
        const group = store.oidcGroup(String(body.group))
        if (team === undefined || group === undefined) throw new HttpError(404, "Not Found", team === undefined ? "The team could not be found." : "The OIDC group could not be found.")
        if (team.mappedOidcGroups.includes(group.uuid)) throw new HttpError(409, "Conflict", `group ${group.name} is already mapped to team ${team.name}`)
        await store.putTeam({ ...team, mappedOidcGroups: [...team.mappedOidcGroups, group.uuid] })
        json(response, 201, { uuid: randomUUID(), team: team.uuid, group })
      }
    }
  ]

  return (request, response) => {
    const url = request.url
    if (url === undefined) return false
    const queryAt = url.indexOf("?")
    const path = queryAt === -1 ? url : url.slice(0, queryAt)
    const asset = assets.get(path)
    if (asset !== undefined && (request.method === "GET" || request.method === "HEAD")) {
      asset(response)
      return true
    }
    if (!path.startsWith("/api/")) return false
    const query = new URLSearchParams(queryAt === -1 ? "" : url.slice(queryAt + 1))
    const matching = routes.filter((route) => route.pattern.test(path))
    if (matching.length === 0) {
      problem(response, 404, "Not Found", `no such endpoint: ${path}`)
      return true
    }
    const route = matching.find((candidate) => candidate.method.split("|").includes(request.method ?? ""))
    if (route === undefined) {
      response.setHeader("allow", matching.map((candidate) => candidate.method.replace("|", ", ")).join(", "))
      problem(response, 405, "Method Not Allowed", `${request.method} is not allowed on ${path}`)
      return true
    }
    const parts = route.pattern.exec(path)!.slice(1)
    route.run(request, response, parts, query).catch((error: Error) => {
      if (response.headersSent) {
        response.destroy(error)
        return
      }
      if (error instanceof HttpError) {
        const errors = (error as HttpError & { errors?: ReadonlyArray<string> }).errors
        return problem(response, error.status, error.title, error.message, errors === undefined ? {} : { errors })
      }
      log("warn", `SBOM API ${request.method} ${path} failed: ${error.message}`)
      problem(response, 500, "Internal Server Error", "internal error")
    })
    return true
  }
}
