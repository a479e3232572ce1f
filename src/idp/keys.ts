// The identity provider's signing keys, persisted in the data directory so tokens survive a
// restart. A rotation puts a new key first (it signs from then on) and keeps the previous one in
// the JWKS, so tokens it signed still verify until they expire.
import { randomUUID } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { exportJWK, generateKeyPair, type JWK } from "jose"

export interface KeyFile {
  /** newest first: keys[0] signs, keys[1] (the previous one) only verifies */
  readonly keys: ReadonlyArray<JWK>
}

export const keyFilePath = (dataDir: string): string => join(dataDir, "idp", "signing-keys.json")

const newKey = async (): Promise<JWK> => {
  const { privateKey } = await generateKeyPair("RS256", { modulusLength: 2048, extractable: true })
  const jwk = await exportJWK(privateKey)
  return { ...jwk, kid: randomUUID(), alg: "RS256", use: "sig" }
}

const write = (path: string, file: KeyFile): void => {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
  const temp = `${path}.tmp`
  writeFileSync(temp, JSON.stringify(file, null, 2) + "\n", { mode: 0o600 })
  renameSync(temp, path)
}

const read = (path: string): KeyFile | undefined => {
  if (!existsSync(path)) return undefined
  const file = JSON.parse(readFileSync(path, "utf8")) as KeyFile
  if (!Array.isArray(file.keys) || file.keys.length === 0) throw new Error(`${path}: no keys; delete the file to generate a new key`)
  return file
}

/** the keys, generating the first one on first start */
export const loadSigningKeys = async (dataDir: string): Promise<KeyFile> => {
  const path = keyFilePath(dataDir)
  const existing = read(path)
  if (existing !== undefined) return existing
  const created = { keys: [await newKey()] }
  write(path, created)
  return created
}

/** a new signing key; the current one is kept for verification, older ones are dropped */
export const rotateSigningKeys = async (dataDir: string): Promise<{ readonly current: string; readonly previous: string | undefined }> => {
  const path = keyFilePath(dataDir)
  const existing = read(path)
  const key = await newKey()
  const previous = existing?.keys[0]
  write(path, { keys: previous === undefined ? [key] : [key, previous] })
  return { current: key.kid!, previous: previous?.kid }
}
