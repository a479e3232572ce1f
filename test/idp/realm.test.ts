// Realm files: a Keycloak 24 realm export (built-in clients, composites, nested groups, mappers),
// the same structure in YAML, password hashes (larder's scrypt, Keycloak's pbkdf2 and argon2), and
// the errors, each naming the file and the path of the offending value.
import t from "tap"
import { argon2Sync, pbkdf2Sync, randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import { stringify } from "yaml"
import { dummyPasswordCheck, hashPassword, verifyPassword } from "../../src/idp/passwords.ts"
import { parseRealm, RealmError, type Realm } from "../../src/idp/realm.ts"

type Json = Record<string, any>

const exportText = readFileSync(new URL("fixtures/apps-realm.json", import.meta.url), "utf8")
const keycloakExport = (): Json => JSON.parse(exportText)

const clientOf = (realm: Realm, clientId: string) => realm.clients.find((client) => client.clientId === clientId)
const userOf = (realm: Realm, username: string) => realm.users.find((user) => user.username === username)
const sorted = (items: ReadonlyArray<string> | undefined) => [...(items ?? [])].sort()

// Keycloak's stored form of a password credential
const keycloakCredential = (algorithm: string, iterations: number, salt: Buffer, hash: Buffer, additionalParameters: Json = {}) => ({
  id: "6f1d2c3b-5555-4e4e-8d8d-000000000001",
  type: "password",
  createdDate: 1716200000000,
  secretData: JSON.stringify({ value: hash.toString("base64"), salt: salt.toString("base64"), additionalParameters: {} }),
  credentialData: JSON.stringify({ hashIterations: iterations, algorithm, additionalParameters })
})

// a single scrypt hash, reused below: each costs about 50 ms
const exportRealm = parseRealm(exportText, "apps-realm.json")

t.test("a Keycloak realm export", async (t) => {
  const realm = exportRealm
  t.equal(realm.realm, "apps")
  t.equal(realm.displayName, "Apps")
  t.equal(realm.enabled, true)
  t.same(realm.groups, ["/engineering", "/engineering/platform", "/engineering/platform/oncall", "/finance"])

  t.same(
    realm.clients.map((client) => client.clientId),
    ["account", "account-console", "admin-cli", "security-admin-console", "wiki", "grafana", "spa"],
    "bearer-only (broker, realm-management) and SAML clients are left out"
  )
  const account = clientOf(realm, "account")!
  t.equal(account.name, "account", "a ${client_…} message key is not a name")
  t.equal(account.publicClient, true)
  t.same(account.redirectUris, [], "redirect URIs relative to ${authBaseUrl} (Keycloak's own account console) are dropped")
  t.same(clientOf(realm, "security-admin-console")!.webOrigins, ["+"])

  const wiki = clientOf(realm, "wiki")!
  t.equal(wiki.name, "Team wiki")
  t.equal(wiki.publicClient, false)
  t.equal(wiki.secret, "wiki-client-secret-0123456789")
  t.equal(wiki.enabled, true)
  t.same(wiki.redirectUris, ["https://wiki.example.test/oauth/callback", "https://wiki.example.test/login/*"], "a relative URI is resolved against rootUrl")
  t.same(wiki.webOrigins, ["https://wiki.example.test"], "origins are normalized as browsers send them")
  t.same(wiki.audiences, ["wiki", "https://api.example.test"], "audience mappers that add to the access token")
  t.same(wiki.groupsClaim, { claim: "groups", fullPath: false, idToken: true, accessToken: true, userinfo: true })

  // Keycloak's defaults for missing mapper settings: access token yes, userinfo as the ID token
  t.same(clientOf(realm, "grafana")!.groupsClaim, { claim: "group_paths", fullPath: true, idToken: true, accessToken: true, userinfo: true })
  t.equal(clientOf(realm, "grafana")!.name, "grafana", "no name: the clientId")
  t.equal(clientOf(realm, "grafana")!.audiences.length, 0)

  const spa = clientOf(realm, "spa")!
  t.equal(spa.publicClient, true)
  t.equal(spa.secret, undefined)
  t.same(spa.redirectUris, ["https://spa.example.test/*"])
  t.equal(spa.groupsClaim, undefined)
})

t.test("users: names, groups and effective roles", async (t) => {
  const realm = exportRealm
  t.same(realm.users.map((user) => user.username), ["alice", "bob", "service-account-ci"], "usernames are lower-cased")

  const alice = userOf(realm, "alice")!
  t.equal(alice.email, "alice@example.test")
  t.equal(alice.emailVerified, true)
  t.equal(alice.firstName, "Alice")
  t.equal(alice.lastName, "Liddell")
  t.equal(alice.enabled, true)
  t.same(alice.groups, ["/engineering/platform/oncall"])
  // direct: default-roles-apps (composite) and wiki/reader; from /engineering/platform/oncall:
  // release-manager (composite of wiki/editor); from its parent /engineering/platform:
  // grafana/admin; from the top /engineering: developer (composite of viewer)
  t.same(sorted(alice.realmRoles), ["default-roles-apps", "developer", "offline_access", "release-manager", "uma_authorization", "viewer"])
  t.same(sorted(alice.clientRoles.account), ["manage-account", "manage-account-links", "view-profile"], "composites of composites")
  t.same(sorted(alice.clientRoles.wiki), ["editor", "reader"])
  t.same(alice.clientRoles.grafana, ["admin"], "client roles of a parent group")
  t.same(sorted(Object.keys(alice.clientRoles)), ["account", "grafana", "wiki"])

  const bob = userOf(realm, "bob")!
  t.same(bob.groups, ["/finance"], "a bare top-level group name, as Keycloak accepts it")
  t.ok(bob.realmRoles.includes("auditor"))
  t.notOk(bob.realmRoles.includes("developer"))
  t.equal(bob.enabled, false)
  t.equal(bob.passwordHash, undefined)
  t.equal(bob.firstName, undefined)

  const ci = userOf(realm, "service-account-ci")!
  t.same(sorted(ci.clientRoles["realm-management"]), ["query-groups", "query-users", "view-users"])
  t.equal(ci.email, undefined)
  t.equal(ci.emailVerified, false)
})

t.test("plain passwords are hashed while the file is read", async (t) => {
  const alice = userOf(exportRealm, "alice")!
  t.match(alice.passwordHash, /^scrypt\$N=16384,r=8,p=1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/)
  t.notOk(JSON.stringify(exportRealm).includes("alice-password"), "the plain password is nowhere in the realm")
  t.ok(await verifyPassword("alice-password", alice.passwordHash!))
})

t.test("the same realm in YAML", async (t) => {
  const fromYaml = parseRealm(stringify(keycloakExport()), "apps-realm.yaml")
  const withoutHashes = (realm: Realm) => ({ ...realm, users: realm.users.map(({ passwordHash: _, ...user }) => user) })
  t.same(withoutHashes(fromYaml), withoutHashes(exportRealm))

  // written by hand: YAML booleans in mapper config, a nested group, a hash made by hashPassword
  const hash = hashPassword("dana-password")
  const text = `
realm: tools
displayName: Internal tools
roles:
  realm:
    - name: admin
      composite: true
      composites:
        realm: [operator]
    - name: operator
groups:
  - name: ops
    realmRoles: [operator]
    subGroups:
      - name: leads
        realmRoles: [admin]
clients:
  - clientId: dashboard
    secret: dashboard-secret
    redirectUris:
      - https://dash.example.test/callback
    webOrigins: [https://dash.example.test]
    protocolMappers:
      - protocolMapper: oidc-group-membership-mapper
        config:
          claim.name: teams
          full.path: true
          id.token.claim: true
          access.token.claim: false
users:
  - username: Dana
    email: dana@example.test
    groups: [/ops/leads]
    credentials:
      - type: password
        hashedValue: "${hash}"
`
  const realm = parseRealm(text, "tools.yaml")
  t.equal(realm.displayName, "Internal tools")
  t.same(realm.groups, ["/ops", "/ops/leads"])
  t.same(clientOf(realm, "dashboard")!.groupsClaim, { claim: "teams", fullPath: true, idToken: true, accessToken: false, userinfo: true })
  const dana = userOf(realm, "dana")!
  t.same(dana.groups, ["/ops/leads"])
  t.same(sorted(dana.realmRoles), ["admin", "operator"])
  t.equal(dana.passwordHash, hash, "a hashedValue is kept as it is")
  t.ok(await verifyPassword("dana-password", dana.passwordHash!), "right password")
  t.notOk(await verifyPassword("Dana-password", dana.passwordHash!), "wrong password")
  t.notOk(await verifyPassword("", dana.passwordHash!), "empty password")
})

t.test("hashPassword makes a new salt each time", async (t) => {
  const hash = hashPassword("correct horse")
  t.match(hash, /^scrypt\$N=16384,r=8,p=1\$/)
  t.not(hash, hashPassword("correct horse"))
  t.notOk(await verifyPassword("correct horse", "scrypt$N=16384$x$y"), "a malformed stored string is a failed check, not a crash")
  t.notOk(await verifyPassword("correct horse", ""))
})

t.test("Keycloak's password hashes", async (t) => {
  const salt = randomBytes(16)
  // pbkdf2-sha256 with Keycloak's default iterations and key size (256 bits)
  const sha256 = pbkdf2Sync("bob-password", salt, 27500, 32, "sha256")
  const sha512 = pbkdf2Sync("bob-password", salt, 1000, 64, "sha512")
  // "pbkdf2" is PBKDF2WithHmacSHA1 with a 512-bit key
  const sha1 = pbkdf2Sync("bob-password", salt, 1000, 64, "sha1")
  // Keycloak 24's default: argon2id, version 1.3, 7 MiB, 5 passes
  const argon = argon2Sync("argon2id", { message: "bob-password", nonce: salt, memory: 7168, passes: 5, parallelism: 1, tagLength: 32 })
  const argonParameters = { hashLength: ["32"], memory: ["7168"], type: ["id"], version: ["1.3"], parallelism: ["1"] }
  const cases = [
    { label: "pbkdf2-sha256", credential: keycloakCredential("pbkdf2-sha256", 27500, salt, sha256), stored: /^pbkdf2-sha256\$27500\$/ },
    { label: "pbkdf2-sha512", credential: keycloakCredential("pbkdf2-sha512", 1000, salt, sha512), stored: /^pbkdf2-sha512\$1000\$/ },
    { label: "pbkdf2 (SHA-1)", credential: keycloakCredential("pbkdf2", 1000, salt, sha1), stored: /^pbkdf2\$1000\$/ },
    { label: "argon2", credential: keycloakCredential("argon2", 5, salt, argon, argonParameters), stored: /^argon2id\$m=7168,t=5,p=1\$/ },
    {
      label: "Keycloak 10 and earlier",
      credential: { type: "password", hashedSaltedValue: sha256.toString("base64"), salt: salt.toString("base64"), hashIterations: 27500, algorithm: "pbkdf2-sha256" },
      stored: /^pbkdf2-sha256\$27500\$/
    }
  ]
  for (const { label, credential, stored } of cases) {
    const document = keycloakExport()
    // no plain password to hash: that would cost a scrypt per case
    document.users[0].credentials = []
    document.users[1].credentials = [credential]
    const bob = userOf(parseRealm(JSON.stringify(document), "apps-realm.json"), "bob")!
    t.match(bob.passwordHash, stored, `${label}: stored form`)
    t.equal(bob.passwordHash!.split("$")[2], salt.toString("base64"), `${label}: salt kept`)
    t.ok(await verifyPassword("bob-password", bob.passwordHash!), `${label}: right password`)
    t.notOk(await verifyPassword("bob-passwort", bob.passwordHash!), `${label}: wrong password`)
  }

  // the same form in YAML, with credentialData as an object rather than a JSON string
  const document = keycloakExport()
  document.users[0].credentials = []
  document.users[1].credentials = [{ type: "password", secretData: { value: sha256.toString("base64"), salt: salt.toString("base64") }, credentialData: { hashIterations: 27500, algorithm: "pbkdf2-sha256" } }]
  const bob = userOf(parseRealm(stringify(document), "apps-realm.yaml"), "bob")!
  t.ok(await verifyPassword("bob-password", bob.passwordHash!), "YAML with objects for secretData and credentialData")
})

t.test("a check for an unknown user does the work of a real one", async (t) => {
  const started = performance.now()
  await dummyPasswordCheck()
  const took = performance.now() - started
  t.ok(took > 5, `took ${took.toFixed(1)} ms`)
})

t.test("realm settings: defaults and lifespans", async (t) => {
  const realm = parseRealm(JSON.stringify({ realm: "bare", clients: [{ clientId: "app", publicClient: true }] }), "bare.json")
  t.equal(realm.displayName, "bare")
  t.equal(realm.enabled, true)
  t.same(realm.users, [])
  t.same(realm.groups, [])
  t.same(clientOf(realm, "app"), { clientId: "app", name: "app", publicClient: true, secret: undefined, redirectUris: [], webOrigins: [], audiences: [], groupsClaim: undefined, enabled: true })
  t.equal(exportRealm.lifespans.accessToken, 600)
  t.equal(exportRealm.lifespans.sessionIdle, 1800)

  // Keycloak creates offline_access, uma_authorization and default-roles-<realm> in every realm
  const builtIn = parseRealm(JSON.stringify({ realm: "Bare", users: [{ username: "u", realmRoles: ["default-roles-bare"] }] }), "bare.json")
  t.same(sorted(builtIn.users[0].realmRoles), ["default-roles-bare", "offline_access", "uma_authorization"])
})

t.test("composite cycles end", async (t) => {
  const realm = parseRealm(JSON.stringify({
    realm: "loops",
    roles: {
      realm: [{ name: "a", composite: true, composites: { realm: ["b"] } }, { name: "b", composite: true, composites: { realm: ["a"], client: { app: ["x"] } } }],
      client: { app: [{ name: "x", composite: true, composites: { realm: ["a"] } }] }
    },
    users: [{ username: "u", realmRoles: ["a"] }]
  }), "loops.json")
  t.same(sorted(realm.users[0].realmRoles), ["a", "b"])
  t.same(realm.users[0].clientRoles, { app: ["x"] })
})

// a small valid realm, changed by each case into an invalid one
const base = (): Json => ({
  realm: "apps",
  roles: { realm: [{ name: "viewer" }], client: { wiki: [{ name: "reader" }] } },
  groups: [{ name: "devs", subGroups: [{ name: "web" }] }],
  clients: [
    { clientId: "spa", publicClient: true, redirectUris: ["https://spa.example.test/*"] },
    { clientId: "wiki", secret: "s3cret", redirectUris: ["https://wiki.example.test/cb"] }
  ],
  users: [{ username: "alice", email: "alice@example.test", groups: ["/devs"], credentials: [] }]
})

// shaped like hashPassword's output; never verified
const hashLike = `scrypt$N=16384,r=8,p=1$${Buffer.alloc(16).toString("base64")}$${Buffer.alloc(32).toString("base64")}`

type Asserts = Pick<typeof t, "throws">

const refused = (t: Asserts, label: string, change: (realm: Json) => void, message: RegExp) => {
  const realm = base()
  change(realm)
  t.throws(() => parseRealm(JSON.stringify(realm), "apps.json"), { name: "RealmError", message }, label)
}

t.test("the base realm of the error cases is valid", async (t) => {
  t.equal(parseRealm(JSON.stringify(base()), "apps.json").users.length, 1)
})

t.test("errors name the file and the path", async (t) => {
  const error = t.throws(() => parseRealm(JSON.stringify({ ...base(), realm: "a/b" }), "apps.json"))
  t.ok(error instanceof RealmError, "a RealmError")
  t.match((error as Error).message, /^realm file apps\.json: realm: "a\/b" is not a usable realm name/)

  t.throws(() => parseRealm("{\"realm\": \"apps\",}", "apps.json"), { message: /^realm file apps\.json: not valid JSON: /u })
  t.throws(() => parseRealm("realm: apps\n  clients: [", "apps.yaml"), { message: /^realm file apps\.yaml: not valid YAML: .* at line \d+, column \d+$/ })
  t.throws(() => parseRealm("[{\"realm\": \"a\"}, {\"realm\": \"b\"}]", "all.json"), { message: /^realm file all\.json: expected one realm \(an object\), got a list/ })
  t.throws(() => parseRealm("", "empty.yaml"), { message: /^realm file empty\.yaml: expected a realm \(an object\), got nothing/ })
})

t.test("the realm", async (t) => {
  refused(t, "no name", (realm) => delete realm.realm, /apps\.json: realm: expected the realm's name/)
  refused(t, "a path segment", (realm) => (realm.realm = ".."), /realm: "\.\." is not a usable realm name/)
  refused(t, "enabled as a string", (realm) => (realm.enabled = "true"), /apps\.json: enabled: expected true or false, got the string "true"/)
  refused(t, "clients not a list", (realm) => (realm.clients = { spa: {} }), /apps\.json: clients: expected a list of clients, got an object/)
})

t.test("clients", async (t) => {
  refused(t, "redirectUris not a list", (realm) => (realm.clients[1].redirectUris = "https://wiki.example.test/cb"), /apps\.json: clients\[1\]\.redirectUris: expected a list of URLs/)
  refused(t, "a redirect URI that is not http(s)", (realm) => realm.clients[1].redirectUris.push("javascript:alert(1)//"), /clients\[1\]\.redirectUris\[1\]: "javascript:alert\(1\)\/\/" is not an absolute http\(s\) URL/)
  refused(t, "a custom scheme", (realm) => (realm.clients[0].redirectUris = ["com.example.app:/callback"]), /clients\[0\]\.redirectUris\[0\]: .* is not an absolute http\(s\) URL/)
  refused(t, "a wildcard host", (realm) => (realm.clients[0].redirectUris = ["https://*.example.test/cb"]), /clients\[0\]\.redirectUris\[0\]: .*only a trailing "\*" is a wildcard/)
  refused(t, "a wildcard that extends the host", (realm) => (realm.clients[0].redirectUris = ["https://spa.example.test*"]), /clients\[0\]\.redirectUris\[0\]: .*the "\*" must come after the host's "\/"/)
  refused(t, "a relative URI without rootUrl", (realm) => (realm.clients[0].redirectUris = ["/callback"]), /clients\[0\]\.redirectUris\[0\]: "\/callback" is relative and the client has no rootUrl/)
  refused(t, "a fragment", (realm) => (realm.clients[0].redirectUris = ["https://spa.example.test/#/cb"]), /clients\[0\]\.redirectUris\[0\]: .*cannot have a fragment/)
  refused(t, "a web origin with a path", (realm) => (realm.clients[0].webOrigins = ["https://spa.example.test/app"]), /clients\[0\]\.webOrigins\[0\]: "https:\/\/spa\.example\.test\/app" is not an origin/)
  refused(t, "a confidential client without secret", (realm) => delete realm.clients[1].secret, /clients\[1\]\.secret: confidential client wiki needs a secret/)
  refused(t, "a masked secret", (realm) => (realm.clients[1].secret = "**********"), /clients\[1\]\.secret: the secret of wiki is masked/)
  refused(t, "a JWT-authenticated client", (realm) => (realm.clients[1].clientAuthenticatorType = "client-jwt"), /clients\[1\]\.clientAuthenticatorType: "client-jwt" is not supported/)
  refused(t, "publicClient as a string", (realm) => (realm.clients[0].publicClient = "true"), /clients\[0\]\.publicClient: expected true or false/)
  refused(t, "a duplicate clientId", (realm) => realm.clients.push({ clientId: "wiki", publicClient: true }), /clients\[2\]\.clientId: client wiki is defined twice/)
  refused(t, "an audience mapper without an audience", (realm) => (realm.clients[1].protocolMappers = [{ protocolMapper: "oidc-audience-mapper", config: {} }]), /clients\[1\]\.protocolMappers\[0\]\.config: an audience mapper needs/)
  refused(
    t,
    "a group claim that would replace the subject",
    (realm) => (realm.clients[1].protocolMappers = [{ protocolMapper: "oidc-group-membership-mapper", config: { "claim.name": "sub" } }]),
    /clients\[1\]\.protocolMappers\[0\]\.config\["claim\.name"\]: "sub" is a claim of the token itself/
  )
  refused(
    t,
    "a mapper flag that is not true or false",
    (realm) => (realm.clients[1].protocolMappers = [{ protocolMapper: "oidc-group-membership-mapper", config: { "claim.name": "groups", "full.path": "yes" } }]),
    /clients\[1\]\.protocolMappers\[0\]\.config\["full\.path"\]: expected "true" or "false", got the string "yes"/
  )
})

t.test("groups and roles", async (t) => {
  refused(t, "an unknown group", (realm) => realm.users[0].groups.push("/nope"), /apps\.json: users\[0\]\.groups\[1\]: unknown group "\/nope"/)
  refused(t, "a subgroup by bare name", (realm) => (realm.users[0].groups = ["web"]), /users\[0\]\.groups\[0\]: unknown group "web"/)
  refused(t, "groups as a string", (realm) => (realm.users[0].groups = "/devs"), /users\[0\]\.groups: expected a list of group paths/)
  refused(t, "a path that does not match", (realm) => (realm.groups[0].subGroups[0].path = "/web"), /groups\[0\]\.subGroups\[0\]\.path: "\/web" does not match the group's place, \/devs\/web/)
  refused(t, "a duplicate sibling", (realm) => realm.groups.push({ name: "devs" }), /groups\[1\]\.name: group \/devs is defined twice/)
  refused(t, "a user's unknown realm role", (realm) => (realm.users[0].realmRoles = ["viewer", "root"]), /users\[0\]\.realmRoles\[1\]: unknown realm role "root"/)
  refused(t, "a user's unknown client role", (realm) => (realm.users[0].clientRoles = { wiki: ["writer"] }), /users\[0\]\.clientRoles\.wiki\[0\]: unknown role "writer" of client wiki/)
  refused(t, "a group's unknown client role", (realm) => (realm.groups[0].subGroups[0].clientRoles = { grafana: ["admin"] }), /groups\[0\]\.subGroups\[0\]\.clientRoles\.grafana\[0\]: unknown role "admin" of client grafana/)
  refused(t, "a composite of an unknown role", (realm) => realm.roles.realm.push({ name: "lead", composite: true, composites: { realm: ["viewer", "boss"] } }), /roles\.realm\[1\]\.composites\.realm\[1\]: unknown realm role "boss"/)
  refused(t, "a duplicate role", (realm) => realm.roles.client.wiki.push({ name: "reader" }), /roles\.client\.wiki\[1\]\.name: client wiki role "reader" is defined twice/)
  refused(t, "roles.realm not a list", (realm) => (realm.roles.realm = { name: "viewer" }), /roles\.realm: expected a list of roles, got an object/)
})

t.test("users and credentials", async (t) => {
  refused(t, "a duplicate username", (realm) => realm.users.push({ username: "Alice" }), /users\[1\]\.username: user alice is defined twice/)
  refused(t, "a duplicate e-mail", (realm) => realm.users.push({ username: "alice2", email: "ALICE@example.test" }), /users\[1\]\.email: alice@example\.test is also the e-mail of user alice/)
  refused(t, "emailVerified as a string", (realm) => (realm.users[0].emailVerified = "false"), /users\[0\]\.emailVerified: expected true or false/)
  refused(
    t,
    "an unsupported hash algorithm",
    (realm) => (realm.users[0].credentials = [{ type: "password", secretData: "{\"value\":\"aGFzaGhhc2hoYXNoaGFzaA==\",\"salt\":\"c2FsdHNhbHQ=\"}", credentialData: "{\"hashIterations\":10,\"algorithm\":\"bcrypt\"}" }]),
    /users\[0\]\.credentials\[0\]\.credentialData\.algorithm: password hash algorithm "bcrypt" is not supported/
  )
  refused(
    t,
    "secretData that is not JSON",
    (realm) => (realm.users[0].credentials = [{ type: "password", secretData: "{value:", credentialData: "{}" }]),
    /users\[0\]\.credentials\[0\]\.secretData: not valid JSON/
  )
  refused(
    t,
    "a hash too short to trust",
    (realm) => (realm.users[0].credentials = [{ type: "password", secretData: "{\"value\":\"aGFzaA==\",\"salt\":\"c2FsdHNhbHQ=\"}", credentialData: "{\"hashIterations\":27500,\"algorithm\":\"pbkdf2-sha256\"}" }]),
    /users\[0\]\.credentials\[0\]: unusable pbkdf2-sha256 hash: the hash is not base64 of at least 16 bytes/
  )
  refused(t, "a hashedValue larder did not make", (realm) => (realm.users[0].credentials = [{ type: "password", hashedValue: "$2b$10$abcdefghijklmnopqrstuv" }]), /users\[0\]\.credentials\[0\]\.hashedValue: not a password hash larder can check/)
  refused(t, "a second factor", (realm) => (realm.users[0].credentials = [{ type: "otp", secretData: "{}", credentialData: "{}" }]), /users\[0\]\.credentials\[0\]\.type: credential type "otp" is not supported/)
  refused(t, "two passwords", (realm) => (realm.users[0].credentials = [{ type: "password", hashedValue: hashLike }, { type: "password", hashedValue: hashLike }]), /users\[0\]\.credentials\[1\]: a second password credential/)
  refused(t, "a credential without a secret", (realm) => (realm.users[0].credentials = [{ type: "password", temporary: true }]), /users\[0\]\.credentials\[0\]: a password credential needs "value", "hashedValue"/)
})
