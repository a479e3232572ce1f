// The SBOM intake's OIDC settings under Dependency-Track's names (ALPINE_OIDC_*), its first-start
// teams and the managed admin user, and extra CAs for its HTTP client.
import { readFileSync } from "node:fs"
import { getCACertificates, setDefaultCACertificates } from "node:tls"
import { hashPassword, verifyPassword } from "../../src/idp/passwords.ts"
import type { SbomOidcOptions } from "../../src/sbom/oidc.ts"
import { permissions, type SbomStore } from "../../src/sbom/store.ts"
import { issuerOf } from "../../src/idp/Idp.ts"
import { defaultRealmName, defaultSbomClientId } from "./sso.ts"

export class SbomConfigError extends Error {}

const flag = (env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean => {
  const value = env[name]
  if (value === undefined || value === "") return fallback
  if (/^(true|1|yes)$/i.test(value)) return true
  if (/^(false|0|no)$/i.test(value)) return false
  throw new SbomConfigError(`${name}: expected true or false, got "${value}"`)
}

/**
 * Dependency-Track's settings; without any, OIDC points at the embedded realm (client
 * larder-sbom) when larder serves its built-in realm, and is off otherwise.
 */
export const sbomOidcOptions = (env: NodeJS.ProcessEnv, embedded: { readonly builtInRealm: boolean; readonly externalUrl: string }): SbomOidcOptions => {
  const builtIn = embedded.builtInRealm && env.ALPINE_OIDC_ISSUER === undefined
  const enabled = flag(env, "ALPINE_OIDC_ENABLED", builtIn)
  const issuer = env.ALPINE_OIDC_ISSUER ?? (builtIn ? issuerOf(embedded.externalUrl, defaultRealmName) : "")
  const clientId = env.ALPINE_OIDC_CLIENT_ID ?? (builtIn ? defaultSbomClientId : "")
  if (enabled && (issuer === "" || clientId === "")) {
    throw new SbomConfigError("ALPINE_OIDC_ENABLED is true: set ALPINE_OIDC_ISSUER and ALPINE_OIDC_CLIENT_ID (the public client the browser signs in with)")
  }
  if (enabled && !URL.canParse(issuer)) throw new SbomConfigError(`ALPINE_OIDC_ISSUER: "${issuer}" is not a URL`)
  const teamsProvisioning = env.ALPINE_OIDC_TEAMS_PROVISIONING !== undefined
    ? flag(env, "ALPINE_OIDC_TEAMS_PROVISIONING", false)
    // Dependency-Track's real name for the same switch
    : flag(env, "ALPINE_OIDC_TEAM_SYNCHRONIZATION", false)
  return {
    enabled,
    issuer,
    clientId,
    usernameClaim: env.ALPINE_OIDC_USERNAME_CLAIM || "preferred_username",
    userProvisioning: flag(env, "ALPINE_OIDC_USER_PROVISIONING", builtIn),
    teamsProvisioning,
    teamsDefault: (env.ALPINE_OIDC_TEAMS_DEFAULT ?? "").split(",").map((name) => name.trim()).filter((name) => name !== ""),
    teamsClaim: env.ALPINE_OIDC_TEAMS_CLAIM || "groups",
    displayName: env.LARDER_SBOM_OIDC_NAME || (builtIn ? "larder" : "single sign-on")
  }
}

/** adds the CAs in a PEM file to the ones every TLS connection of this process trusts (fetch included) */
export const trustExtraCa = (file: string): number => {
  let pem: string
  try {
    pem = readFileSync(file, "utf8")
  } catch (error) {
    throw new SbomConfigError(`--ca-file: ${(error as Error).message}`)
  }
  const certificates = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []
  if (certificates.length === 0) throw new SbomConfigError(`--ca-file: ${file} holds no PEM certificate`)
  setDefaultCACertificates([...getCACertificates("default"), ...certificates])
  return certificates.length
}

/** Dependency-Track's first-start teams, and the larder admin as a managed user in Administrators */
export const bootstrapSbom = async (store: SbomStore, admin: { readonly username: string; readonly password: string }) => {
  let administrators = store.teamByName("Administrators")
  if (administrators === undefined) {
    administrators = await store.createTeam("Administrators", permissions)
    await store.createTeam("Portfolio Managers", ["VIEW_PORTFOLIO", "PORTFOLIO_MANAGEMENT"])
    await store.createTeam("Automation", ["BOM_UPLOAD", "PROJECT_CREATION_UPLOAD", "VIEW_PORTFOLIO"])
  }
  const existing = store.user(admin.username)
  if (existing === undefined || existing.passwordHash === undefined || !(await verifyPassword(admin.password, existing.passwordHash))) {
    await store.putUser({
      username: admin.username,
      kind: "managed",
      email: existing?.email,
      passwordHash: hashPassword(admin.password),
      subjectIdentifier: undefined,
      teams: [...new Set([...(existing?.teams ?? []), administrators.uuid])]
    })
  }
}
