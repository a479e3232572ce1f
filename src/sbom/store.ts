// The SBOM intake's state, in named databases of the index: projects and their components, upload
// tokens, teams with permissions and API keys (stored hashed), users (managed or OIDC) and the OIDC
// group mappings that put OIDC users in teams.
import { createHash, randomBytes, randomUUID } from "node:crypto"
import type { Database } from "lmdb"
import type { BomComponent } from "./bom.ts"

export const permissions = [
  "BOM_UPLOAD",
  "PROJECT_CREATION_UPLOAD",
  "VIEW_PORTFOLIO",
  "PORTFOLIO_MANAGEMENT",
  "ACCESS_MANAGEMENT",
  "VIEW_VULNERABILITY",
  "VULNERABILITY_ANALYSIS",
  "POLICY_MANAGEMENT",
  "SYSTEM_CONFIGURATION"
] as const
export type Permission = (typeof permissions)[number]

export interface Project {
  readonly uuid: string
  readonly name: string
  readonly version: string | undefined
  readonly active: boolean
  readonly created: number
  readonly lastBomImport: number | undefined
  readonly lastBomImportFormat: string | undefined
}

export interface ApiKey {
  /** sha256 of the key; the key itself is shown once, when made */
  readonly hash: string
  /** the key's first characters, so an administrator can tell keys apart */
  readonly prefix: string
  readonly created: number
}

export interface Team {
  readonly uuid: string
  readonly name: string
  readonly permissions: ReadonlyArray<Permission>
  readonly apiKeys: ReadonlyArray<ApiKey>
  /** OIDC group uuids mapped to this team */
  readonly mappedOidcGroups: ReadonlyArray<string>
}

export interface User {
  readonly username: string
  readonly kind: "managed" | "oidc"
  readonly email: string | undefined
  /** managed users only: scrypt hash */
  readonly passwordHash: string | undefined
  /** OIDC users: the subject at the provider */
  readonly subjectIdentifier: string | undefined
  readonly teams: ReadonlyArray<string>
}

export interface OidcGroup {
  readonly uuid: string
  readonly name: string
}

export interface UploadToken {
  readonly processing: boolean
  readonly project: string
  readonly at: number
}

export const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex")

const nameKey = (name: string, version: string | undefined) => `${name}\u0001${version ?? ""}`

export const makeSbomStore = (open: <V>(name: string) => Database<V, string>) => {
  const projects = open<Project>("sbom-project")
  const projectNames = open<string>("sbom-project-name")
  const components = open<ReadonlyArray<BomComponent>>("sbom-components")
  const boms = open<string>("sbom-bom")
  const tokens = open<UploadToken>("sbom-token")
  const teams = open<Team>("sbom-team")
  const apiKeys = open<string>("sbom-apikey")
  const users = open<User>("sbom-user")
  const groups = open<OidcGroup>("sbom-oidc-group")

  const putTeam = (team: Team) => teams.put(team.uuid, team)

  return {
    projects: (): Array<Project> => [...projects.getRange()].map(({ value }) => value).sort((a, b) => a.name.localeCompare(b.name) || (a.version ?? "").localeCompare(b.version ?? "")),
    project: (uuid: string): Project | undefined => projects.get(uuid),
    projectByName: (name: string, version: string | undefined): Project | undefined => {
      const uuid = projectNames.get(nameKey(name, version))
      return uuid === undefined ? undefined : projects.get(uuid)
    },
    createProject: async (name: string, version: string | undefined): Promise<Project> => {
      const project: Project = { uuid: randomUUID(), name, version, active: true, created: Date.now(), lastBomImport: undefined, lastBomImportFormat: undefined }
      await projects.transaction(() => {
        projects.put(project.uuid, project)
        projectNames.put(nameKey(name, version), project.uuid)
      })
      return project
    },
    /** the BOM's components replace the project's, with the BOM itself, in one transaction */
    importBom: async (project: Project, json: string, specVersion: string, list: ReadonlyArray<Omit<BomComponent, "uuid">>, token: string) => {
      await projects.transaction(() => {
        projects.put(project.uuid, { ...project, lastBomImport: Date.now(), lastBomImportFormat: `CycloneDX ${specVersion}` })
        components.put(project.uuid, list.map((component) => ({ ...component, uuid: randomUUID() })))
        boms.put(project.uuid, json)
        tokens.put(token, { processing: false, project: project.uuid, at: Date.now() })
      })
    },
    components: (project: string): ReadonlyArray<BomComponent> => components.get(project) ?? [],
    token: (uuid: string): UploadToken | undefined => tokens.get(uuid),

    teams: (): Array<Team> => [...teams.getRange()].map(({ value }) => value).sort((a, b) => a.name.localeCompare(b.name)),
    team: (uuid: string): Team | undefined => teams.get(uuid),
    teamByName: (name: string): Team | undefined => [...teams.getRange()].map(({ value }) => value).find((team) => team.name === name),
    createTeam: async (name: string, granted: ReadonlyArray<Permission> = []): Promise<Team> => {
      const team: Team = { uuid: randomUUID(), name, permissions: [...granted], apiKeys: [], mappedOidcGroups: [] }
      await putTeam(team)
      return team
    },
    putTeam,
    deleteTeam: async (uuid: string) => {
      const team = teams.get(uuid)
      await teams.transaction(() => {
        for (const key of team?.apiKeys ?? []) apiKeys.remove(key.hash)
        teams.remove(uuid)
        for (const { key, value } of users.getRange()) {
          if (value.teams.includes(uuid)) users.put(key as string, { ...value, teams: value.teams.filter((t) => t !== uuid) })
        }
      })
    },
    /** a new API key for the team: returned once, stored only as its hash */
    newApiKey: async (uuid: string): Promise<string | undefined> => {
      const team = teams.get(uuid)
      if (team === undefined) return undefined
      const key = `odt_${randomBytes(24).toString("base64url")}`
      const record: ApiKey = { hash: hashKey(key), prefix: key.slice(0, 8), created: Date.now() }
      await teams.transaction(() => {
        teams.put(uuid, { ...team, apiKeys: [...team.apiKeys, record] })
        apiKeys.put(record.hash, uuid)
      })
      return key
    },
    teamByApiKey: (key: string): Team | undefined => {
      const uuid = apiKeys.get(hashKey(key))
      return uuid === undefined ? undefined : teams.get(uuid)
    },

    user: (username: string): User | undefined => users.get(username),
    users: (): Array<User> => [...users.getRange()].map(({ value }) => value),
    putUser: (user: User) => users.put(user.username, user),
    /** the union of the user's teams' permissions */
    permissionsOf: (user: User): Set<Permission> =>
      new Set(user.teams.flatMap((uuid) => teams.get(uuid)?.permissions ?? [])),

    oidcGroups: (): Array<OidcGroup> => [...groups.getRange()].map(({ value }) => value),
    oidcGroup: (uuid: string): OidcGroup | undefined => groups.get(uuid),
    oidcGroupByName: (name: string): OidcGroup | undefined => [...groups.getRange()].map(({ value }) => value).find((group) => group.name === name),
    createOidcGroup: async (name: string): Promise<OidcGroup> => {
      const group = { uuid: randomUUID(), name }
      await groups.put(group.uuid, group)
      return group
    }
  }
}

export type SbomStore = ReturnType<typeof makeSbomStore>
