// Gate sessions, server-side in the index. The browser's cookie carries only "<id>.<signature>"
// (about 90 bytes) whatever the tokens weigh, so no response header outgrows a proxy's buffer.
// Pending logins (PKCE verifier, nonce, redirect) are kept the same way, keyed by the OAuth state.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import type { Database } from "lmdb"

export interface GateIdentity {
  readonly user: string
  readonly email: string | undefined
  readonly preferredUsername: string | undefined
  /** groups, then roles as "role:<realm role>" and "role:<client>:<client role>" (oauth2-proxy's keycloak-oidc) */
  readonly groups: ReadonlyArray<string>
}

export interface GateSession extends GateIdentity {
  readonly accessToken: string
  readonly idToken: string | undefined
  readonly refreshToken: string | undefined
  /** epoch ms: the access token's expiry */
  readonly accessExpiresAt: number
  readonly createdAt: number
  /** epoch ms: --cookie-expire after sign-in */
  readonly expiresAt: number
}

export interface PendingLogin {
  readonly codeVerifier: string | undefined
  readonly nonce: string
  readonly redirect: string
  readonly redirectUri: string
  readonly expiresAt: number
}

export const newId = (): string => randomBytes(32).toString("base64url")

/** "<id>.<HMAC-SHA256(secret, purpose|id)>": a cookie for one purpose cannot stand in for another */
export const signId = (secret: Buffer, purpose: string, id: string): string =>
  `${id}.${createHmac("sha256", secret).update(`${purpose}|${id}`).digest("base64url")}`

export const verifySignedId = (secret: Buffer, purpose: string, value: string | undefined): string | undefined => {
  if (value === undefined) return undefined
  const dot = value.indexOf(".")
  if (dot <= 0) return undefined
  const id = value.slice(0, dot)
  const expected = Buffer.from(signId(secret, purpose, id))
  const given = Buffer.from(value)
  return expected.length === given.length && timingSafeEqual(expected, given) ? id : undefined
}

/** the value of one cookie in a Cookie header */
export const readCookie = (header: string | undefined, name: string): string | undefined => {
  if (header === undefined) return undefined
  for (const part of header.split(";")) {
    const eq = part.indexOf("=")
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** a Map that forgets its oldest entries beyond `limit` */
export const boundedCache = <V>(limit: number) => {
  const entries = new Map<string, V>()
  return {
    get: (key: string) => entries.get(key),
    set: (key: string, value: V) => {
      if (entries.size >= limit) entries.delete(entries.keys().next().value!)
      entries.set(key, value)
    },
    delete: (key: string) => entries.delete(key)
  }
}

const sessionCacheSize = 10_000

export const makeSessionStore = (sessions: Database<GateSession, string>, logins: Database<PendingLogin, string>) => {
  // decoded sessions: this process is the only writer, and every write below goes through here
  const cache = boundedCache<GateSession>(sessionCacheSize)
  return {
    get: (id: string): GateSession | undefined => {
      let session = cache.get(id)
      if (session === undefined) {
        session = sessions.get(id)
        if (session !== undefined) cache.set(id, session)
      }
      return session !== undefined && session.expiresAt > Date.now() ? session : undefined
    },
    put: (id: string, session: GateSession): Promise<boolean> => {
      cache.set(id, session)
      return sessions.put(id, session)
    },
    remove: (id: string): Promise<boolean> => {
      cache.delete(id)
      return sessions.remove(id)
    },
    putLogin: (state: string, login: PendingLogin): Promise<boolean> => logins.put(state, login),
    /** a pending login is used once: taken and removed */
    takeLogin: async (state: string): Promise<PendingLogin | undefined> => {
      const login = logins.get(state)
      if (login === undefined) return undefined
      await logins.remove(state)
      return login.expiresAt > Date.now() ? login : undefined
    },
    /** drops expired sessions and logins; returns how many */
    sweep: async (): Promise<number> => {
      const now = Date.now()
      let dropped = 0
      for (const { key, value } of sessions.getRange()) {
        if (value.expiresAt <= now) {
          cache.delete(key)
          await sessions.remove(key)
          dropped++
        }
      }
      for (const { key, value } of logins.getRange()) {
        if (value.expiresAt <= now) {
          await logins.remove(key)
          dropped++
        }
      }
      return dropped
    },
    count: (): number => sessions.getCount()
  }
}

export type SessionStore = ReturnType<typeof makeSessionStore>
