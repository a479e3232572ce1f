// Realm files for the SSO tests, in the shape of a Keycloak realm export: a confidential gate
// client (with or without the audience mapper), a public PKCE client, and users, one of them in
// 200 groups.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { tempDir } from "./appliance.ts"

export const gateSecret = "gate-client-secret-for-tests"

export interface TestRealmOptions {
  readonly realm?: string
  readonly gateRedirects: ReadonlyArray<string>
  readonly publicRedirects?: ReadonlyArray<string>
  readonly webOrigins?: ReadonlyArray<string>
  readonly audienceMapper?: boolean
  readonly manyGroups?: number
  /** a group-membership mapper on the public client too (teams provisioning reads it) */
  readonly publicGroupsMapper?: boolean
}

export const testRealm = (options: TestRealmOptions) => {
  const many = options.manyGroups ?? 200
  const groupNames = Array.from({ length: many }, (_, i) => `engineering-team-${String(i).padStart(3, "0")}`)
  return {
    realm: options.realm ?? "apps",
    displayName: "Test Apps",
    enabled: true,
    roles: { realm: [{ name: "developer" }, { name: "viewer" }], client: { gate: [{ name: "operator" }] } },
    groups: [{ name: "platform", realmRoles: ["developer"], subGroups: [{ name: "oncall", clientRoles: { gate: ["operator"] } }] }, ...groupNames.map((name) => ({ name }))],
    clients: [
      {
        clientId: "gate",
        name: "Gate",
        publicClient: false,
        secret: gateSecret,
        redirectUris: [...options.gateRedirects],
        protocolMappers: [
          ...(options.audienceMapper === false ? [] : [{ name: "aud", protocol: "openid-connect", protocolMapper: "oidc-audience-mapper", config: { "included.client.audience": "gate", "access.token.claim": "true", "id.token.claim": "false" } }]),
          { name: "groups", protocol: "openid-connect", protocolMapper: "oidc-group-membership-mapper", config: { "claim.name": "groups", "full.path": "true", "id.token.claim": "true", "access.token.claim": "false", "userinfo.token.claim": "true" } }
        ]
      },
      {
        // as many Keycloak clients are set up: no audience mapper, so access tokens name only "account"
        clientId: "legacy-gate",
        publicClient: false,
        secret: gateSecret,
        redirectUris: [...options.gateRedirects]
      },
      {
        clientId: "spa",
        name: "Single-page app",
        publicClient: true,
        redirectUris: [...(options.publicRedirects ?? ["http://spa.example.test/callback"])],
        webOrigins: [...(options.webOrigins ?? ["+"])],
        protocolMappers: options.publicGroupsMapper === true
          ? [{ name: "groups", protocol: "openid-connect", protocolMapper: "oidc-group-membership-mapper", config: { "claim.name": "groups", "full.path": "true", "id.token.claim": "true" } }]
          : []
      }
    ],
    users: [
      {
        username: "alice",
        email: "alice@example.test",
        emailVerified: true,
        firstName: "Alice",
        lastName: "Liddell",
        enabled: true,
        credentials: [{ type: "password", value: "alice-password" }],
        groups: ["/platform/oncall"],
        realmRoles: ["viewer"]
      },
      {
        username: "crowd",
        email: "crowd@example.test",
        enabled: true,
        credentials: [{ type: "password", value: "crowd-password" }],
        groups: groupNames.map((name) => `/${name}`)
      },
      { username: "mallory", email: "mallory@elsewhere.test", enabled: false, credentials: [{ type: "password", value: "mallory-password" }] }
    ]
  }
}

export const writeRealmFile = (realm: unknown): string => {
  const file = join(tempDir("larder-realm-"), "realm.json")
  writeFileSync(file, JSON.stringify(realm, null, 2))
  return file
}
