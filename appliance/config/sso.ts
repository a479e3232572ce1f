// What the embedded identity provider serves and what the gate signs in against. Without realm
// files larder serves a built-in application realm "larder" (clients larder-gate, confidential,
// and larder-sbom, public with PKCE) and points the gate at it, so `npm start` has working SSO
// once users are added; a master realm holds only the admin user.
import { readFileSync } from "node:fs"
import { generatedSecret, issuerOf } from "../../src/idp/Idp.ts"
import { parseRealm, RealmError, type Realm } from "../../src/idp/realm.ts"
import { GateConfigError, readGateConfigFile, resolveGateOptions, type GateOptions, type RawGateSettings } from "../../src/gate/options.ts"

export const defaultRealmName = "larder"
export const defaultGateClientId = "larder-gate"
export const defaultSbomClientId = "larder-sbom"

const defaultRealm = (externalUrl: string, gateSecret: string): unknown => ({
  realm: defaultRealmName,
  displayName: "larder",
  clients: [
    {
      clientId: defaultGateClientId,
      name: "larder SSO gate",
      publicClient: false,
      secret: gateSecret,
      redirectUris: [`${externalUrl}/oauth2/callback`],
      protocolMappers: [
        { name: "audience", protocolMapper: "oidc-audience-mapper", config: { "included.client.audience": defaultGateClientId, "access.token.claim": "true" } },
        { name: "groups", protocolMapper: "oidc-group-membership-mapper", config: { "claim.name": "groups", "full.path": "true", "id.token.claim": "true", "access.token.claim": "false", "userinfo.token.claim": "true" } }
      ]
    },
    {
      clientId: defaultSbomClientId,
      name: "larder SBOM intake",
      publicClient: true,
      redirectUris: [`${externalUrl}/*`],
      webOrigins: ["+"]
    }
  ],
  users: []
})

const masterRealm = (admin: { username: string; password: string }): unknown => ({
  realm: "master",
  displayName: "larder administration",
  roles: { realm: [{ name: "admin" }] },
  users: [{ username: admin.username, enabled: true, credentials: [{ type: "password", value: admin.password }], realmRoles: ["admin"] }]
})

export interface SsoInput {
  readonly dataDir: string
  readonly externalUrl: string
  readonly realmFiles: ReadonlyArray<string>
  readonly admin: { readonly username: string; readonly password: string }
  readonly gateSettings: RawGateSettings
  readonly gateConfigFile: string | undefined
}

export interface SsoConfig {
  readonly realms: ReadonlyArray<Realm>
  /** undefined: the gate is off (realm files given but no gate client configured) */
  readonly gate: GateOptions | undefined
  readonly notes: ReadonlyArray<string>
}

export const loadSso = (input: SsoInput): SsoConfig => {
  const notes: Array<string> = []
  const realms: Array<Realm> = []
  const builtIn = input.realmFiles.length === 0
  const gateSecret = builtIn ? generatedSecret(input.dataDir, "idp/larder-gate.secret") : undefined
  try {
    if (builtIn) {
      realms.push(parseRealm(JSON.stringify(defaultRealm(input.externalUrl, gateSecret!)), "built-in realm larder"))
      notes.push(`realm ${defaultRealmName} is built in and has no users; add them with --idp-realm-file (a Keycloak realm export)`)
    } else {
      for (const file of input.realmFiles) realms.push(parseRealm(readFileSync(file, "utf8"), file))
    }
  } catch (error: unknown) {
    throw new GateConfigError(error instanceof RealmError ? error.message : `realm file: ${(error as Error).message}`)
  }
  if (!realms.some((realm) => realm.realm === "master")) realms.push(parseRealm(JSON.stringify(masterRealm(input.admin)), "built-in realm master"))
  const names = realms.map((realm) => realm.realm)
  const duplicate = names.find((name, i) => names.indexOf(name) !== i)
  if (duplicate !== undefined) throw new GateConfigError(`realm ${duplicate} is defined twice`)

  const fileSettings = input.gateConfigFile === undefined ? {} : readGateConfigFile(input.gateConfigFile)
  const settings = { ...fileSettings, ...input.gateSettings }
  const cookieSecret = generatedSecret(input.dataDir, "gate/cookie-secret")
  const configured = settings["client-id"] !== undefined || settings["oidc-issuer-url"] !== undefined
  if (!configured && !builtIn) {
    notes.push("gate off: set --client-id, --client-secret(-file) and --oidc-issuer-url (or --gate-config) to gate applications")
    return { realms, gate: undefined, notes }
  }
  const gate = resolveGateOptions(settings, {
    issuerUrl: configured ? undefined : issuerOf(input.externalUrl, defaultRealmName),
    clientId: configured ? undefined : defaultGateClientId,
    clientSecret: configured ? undefined : gateSecret,
    cookieSecret
  })
  return { realms, gate, notes }
}
