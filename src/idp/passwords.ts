// Password hashes of the embedded identity provider and the SBOM intake's managed users.
//
// Stored strings, all `<scheme>$<parameters>$<salt base64>$<hash base64>`:
//   scrypt$N=16384,r=8,p=1$…$…          made by hashPassword
//   pbkdf2-sha256$27500$…$…             Keycloak's pbkdf2-sha256, pbkdf2-sha512 and pbkdf2 (SHA-1)
//   argon2id$m=7168,t=5,p=1$…$…         Keycloak's argon2 (its default since Keycloak 24), version 1.3
//
// Checks run on libuv's thread pool, at most `concurrentChecks` at a time: a burst of sign-ins
// neither stalls the event loop (one check is about 50 ms of CPU) nor takes every pool thread
// from the blob store's file reads.
import { argon2, pbkdf2, randomBytes, scrypt, scryptSync, timingSafeEqual } from "node:crypto"

// about 50 ms per hash or check
const scryptCost = { N: 16384, r: 8, p: 1 }
const scryptKeyLength = 32

export type StoredHash =
  | { readonly kind: "scrypt"; readonly N: number; readonly r: number; readonly p: number; readonly salt: Buffer; readonly hash: Buffer }
  | { readonly kind: "pbkdf2"; readonly digest: string; readonly iterations: number; readonly salt: Buffer; readonly hash: Buffer }
  | {
    readonly kind: "argon2"
    readonly variant: "argon2id" | "argon2i" | "argon2d"
    readonly memory: number
    readonly passes: number
    readonly parallelism: number
    readonly salt: Buffer
    readonly hash: Buffer
  }

export const pbkdf2Digests: Readonly<Record<string, string>> = { "pbkdf2": "sha1", "pbkdf2-sha256": "sha256", "pbkdf2-sha512": "sha512" }

const base64 = (text: string): Buffer | undefined =>
  /^[A-Za-z0-9+/]+={0,2}$/.test(text) && text.replace(/=+$/, "").length % 4 !== 1 ? Buffer.from(text, "base64") : undefined

const between = (value: number, low: number, high: number) => Number.isSafeInteger(value) && value >= low && value <= high

/** the parsed hash, or why the string is not one; the bounds keep a realm file from asking for absurd work */
const parseStoredHash = (stored: string): StoredHash | string => {
  const parts = stored.split("$")
  if (parts.length !== 4) return "expected <scheme>$<parameters>$<salt>$<hash>"
  const [scheme, parameters, saltText, hashText] = parts
  const salt = base64(saltText)
  const hash = base64(hashText)
  if (salt === undefined || salt.length < 8) return "the salt is not base64 of at least 8 bytes"
  if (hash === undefined || hash.length < 16) return "the hash is not base64 of at least 16 bytes"
  if (scheme === "scrypt") {
    const match = /^N=(\d+),r=(\d+),p=(\d+)$/.exec(parameters)
    const [N, r, p] = match === null ? [0, 0, 0] : match.slice(1).map(Number)
    if (!between(N, 2, 1 << 20) || (N & (N - 1)) !== 0 || !between(r, 1, 32) || !between(p, 1, 16) || 128 * N * r > 1 << 30) {
      return `unusable scrypt parameters "${parameters}"`
    }
    return { kind: "scrypt", N, r, p, salt, hash }
  }
  if (Object.hasOwn(pbkdf2Digests, scheme)) {
    const iterations = /^\d+$/.test(parameters) ? Number(parameters) : 0
    if (!between(iterations, 1, 10_000_000)) return `unusable ${scheme} iteration count "${parameters}"`
    return { kind: "pbkdf2", digest: pbkdf2Digests[scheme], iterations, salt, hash }
  }
  if (scheme === "argon2id" || scheme === "argon2i" || scheme === "argon2d") {
    const match = /^m=(\d+),t=(\d+),p=(\d+)$/.exec(parameters)
    const [memory, passes, parallelism] = match === null ? [0, 0, 0] : match.slice(1).map(Number)
    if (!between(parallelism, 1, 64) || !between(memory, 8 * parallelism, 1 << 20) || !between(passes, 1, 100)) {
      return `unusable ${scheme} parameters "${parameters}"`
    }
    return { kind: "argon2", variant: scheme, memory, passes, parallelism, salt, hash }
  }
  return `unknown hash scheme "${scheme}"`
}

const derive = (password: string, stored: StoredHash): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const done = (error: Error | null, key: Buffer | ArrayBuffer) => (error === null ? resolve(Buffer.isBuffer(key) ? key : Buffer.from(key)) : reject(error))
    switch (stored.kind) {
      case "scrypt": {
        const { N, r, p } = stored
        return scrypt(password, stored.salt, stored.hash.length, { N, r, p, maxmem: 256 * N * r + (1 << 20) }, done)
      }
      case "pbkdf2":
        // Keycloak (Java's PBEKeySpec) feeds the password in as UTF-8, as Node does with a string
        return pbkdf2(password, stored.salt, stored.iterations, stored.hash.length, stored.digest, done)
      case "argon2":
        return argon2(stored.variant, {
          message: password,
          nonce: stored.salt,
          memory: stored.memory,
          passes: stored.passes,
          parallelism: stored.parallelism,
          tagLength: stored.hash.length
        }, done)
    }
  })

const concurrentChecks = 2
let running = 0
const waiting: Array<() => void> = []

/** derive() with at most concurrentChecks on the pool; the rest wait their turn */
const deriveInTurn = async (password: string, stored: StoredHash): Promise<Buffer> => {
  // a finished check hands its slot straight to the next in line, so none can slip in between
  if (running >= concurrentChecks) await new Promise<void>((resolve) => waiting.push(resolve))
  else running++
  try {
    return await derive(password, stored)
  } finally {
    const next = waiting.shift()
    if (next === undefined) running--
    else next()
  }
}

/** synchronous: used while realm files and the bootstrap admin are read at start, not per request */
export const hashPassword = (password: string): string => {
  const salt = randomBytes(16)
  const { N, r, p } = scryptCost
  const hash = scryptSync(password, salt, scryptKeyLength, { N, r, p, maxmem: 256 * N * r + (1 << 20) })
  return `scrypt$N=${N},r=${r},p=${p}$${salt.toString("base64")}$${hash.toString("base64")}`
}

export const verifyPassword = async (password: string, stored: string): Promise<boolean> => {
  const parsed = parseStoredHash(stored)
  if (typeof parsed === "string") return false
  // derive() returns as many bytes as the stored hash has, so the lengths always agree
  return timingSafeEqual(await deriveInTurn(password, parsed), parsed.hash)
}

/** why a stored string is not a hash larder can check, or undefined when it is one */
export const storedHashProblem = (stored: string): string | undefined => {
  const parsed = parseStoredHash(stored)
  return typeof parsed === "string" ? parsed : undefined
}

const defaultDummy: StoredHash = { kind: "scrypt", ...scryptCost, salt: randomBytes(16), hash: randomBytes(scryptKeyLength) }

/**
 * For unknown users: the work of a real check, so the time taken does not tell which names exist.
 * `like` is a stored hash whose cost to copy (a realm imported from Keycloak checks pbkdf2 or
 * argon2, cheaper or dearer than hashPassword's scrypt); without it, hashPassword's cost.
 */
export const dummyPasswordCheck = async (like?: StoredHashParameters): Promise<false> => {
  const dummy = like?.dummy ?? defaultDummy
  timingSafeEqual(await deriveInTurn("not the password", dummy), dummy.hash)
  return false
}

export interface StoredHashParameters {
  /** `<scheme>$<parameters>`, as in the stored strings */
  readonly cost: string
  readonly dummy: StoredHash
}

/** the most common scheme and parameters among stored hashes, to make dummyPasswordCheck as dear as a real check */
export const commonHashCost = (stored: ReadonlyArray<string>): StoredHashParameters | undefined => {
  const counts = new Map<string, number>()
  for (const hash of stored) {
    if (storedHashProblem(hash) !== undefined) continue
    const cost = hash.split("$").slice(0, 2).join("$")
    counts.set(cost, (counts.get(cost) ?? 0) + 1)
  }
  const [cost] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? []
  if (cost === undefined) return undefined
  const randomBase64 = (bytes: number) => randomBytes(bytes).toString("base64")
  const example = stored.find((hash) => hash.startsWith(`${cost}$`))!
  const hashBytes = Buffer.from(example.split("$")[3], "base64").length
  return { cost, dummy: parseStoredHash(`${cost}$${randomBase64(16)}$${randomBase64(hashBytes)}`) as StoredHash }
}
