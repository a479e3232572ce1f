// The embedded identity provider: realms from realm files (or the built-in default), persisted
// signing keys, one oidc-provider per realm sharing an LMDB store, and the web listener's handler.
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Database } from "lmdb"
import type { SourceRanges } from "../http/SourceRanges.ts"
import { makeIdpHandler } from "./IdpHandler.ts"
import { loadSigningKeys } from "./keys.ts"
import type { Realm } from "./realm.ts"
import { makeRealmProvider, realmPath, type RealmRuntime } from "./realmProvider.ts"
import { makeStoreAdapter, sweepExpired, type IdpStoreValue } from "./storeAdapter.ts"

/** a secret generated once into the data directory (mode 0600) and read on later starts */
export const generatedSecret = (dataDir: string, name: string, bytes = 32): string => {
  const path = join(dataDir, name)
  if (existsSync(path)) return readFileSync(path, "utf8").trim()
  mkdirSync(join(path, ".."), { recursive: true, mode: 0o700 })
  const secret = randomBytes(bytes).toString("base64url")
  writeFileSync(path, secret + "\n", { mode: 0o600, flag: "wx" })
  return secret
}

export interface IdpOptions {
  readonly dataDir: string
  /** the URL browsers and relying parties use; issuer = externalUrl + /auth/realms/<realm> */
  readonly externalUrl: string
  readonly realms: ReadonlyArray<Realm>
  readonly store: Database<IdpStoreValue, string>
  readonly trustForwarded: boolean
  readonly trustedProxies: SourceRanges | undefined
  readonly log: (level: "info" | "warn", message: string) => void
}

export const issuerOf = (externalUrl: string, realm: string): string => `${externalUrl.replace(/\/$/, "")}${realmPath(realm)}`

export const startIdp = async (options: IdpOptions) => {
  const { keys } = await loadSigningKeys(options.dataDir)
  const cookieKeys = [generatedSecret(options.dataDir, "idp/cookie-key")]
  const runtimes: Array<RealmRuntime> = options.realms.map((realm) =>
    makeRealmProvider({
      realm,
      issuer: issuerOf(options.externalUrl, realm.realm),
      signingKeys: keys,
      cookieKeys,
      adapter: makeStoreAdapter(options.store, realm.realm) as never,
      trustForwarded: options.trustForwarded
    })
  )
  for (const runtime of runtimes) {
    // oidc-provider reports server errors as events; without a listener they would go unseen
    runtime.provider.on("server_error", (_ctx: unknown, error: Error) => options.log("warn", `realm ${runtime.realm.realm}: ${error.message}`))
  }
  const handler = makeIdpHandler({ realms: runtimes, signingKeys: keys, trustedProxies: options.trustedProxies, log: options.log })
  return { handler, runtimes, sweep: () => sweepExpired(options.store) }
}
