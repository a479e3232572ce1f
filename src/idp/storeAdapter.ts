// oidc-provider's storage adapter over an LMDB database of the index: sessions, interactions,
// codes, grants and tokens survive a restart and live beside everything else larder keeps.
// Keys: "<realm>\u0001<model>\u0001<id>"; secondary keys "<realm>\u0002uid\u0001<uid>" (sessions
// by uid) and "<realm>\u0002grant\u0001<grantId>\u0001<model key>" (what a grant revocation drops).
import type { Database } from "lmdb"

interface Stored {
  readonly payload: Record<string, unknown>
  /** epoch ms; undefined: no expiry */
  readonly expiresAt: number | undefined
}

type Value = Stored | string

const sep = "\u0001"
const grantable = new Set(["AccessToken", "AuthorizationCode", "RefreshToken", "DeviceCode", "BackchannelAuthenticationRequest"])

export const makeStoreAdapter = (db: Database<Value, string>, realm: string) => {
  const modelKey = (model: string, id: string) => `${realm}${sep}${model}${sep}${id}`
  const uidKey = (uid: string) => `${realm}\u0002uid${sep}${uid}`
  const userCodeKey = (code: string) => `${realm}\u0002usercode${sep}${code}`
  const grantPrefix = (grantId: string) => `${realm}\u0002grant${sep}${grantId}${sep}`

  const live = (key: string): Stored | undefined => {
    const value = db.get(key)
    if (value === undefined || typeof value === "string") return undefined
    if (value.expiresAt !== undefined && value.expiresAt <= Date.now()) return undefined
    return value
  }

  return class StoreAdapter {
    readonly model: string
    constructor(model: string) {
      this.model = model
    }

    async upsert(id: string, payload: Record<string, unknown>, expiresIn: number | undefined): Promise<void> {
      const key = modelKey(this.model, id)
      const expiresAt = typeof expiresIn === "number" ? Date.now() + expiresIn * 1000 : undefined
      await db.transaction(() => {
        db.put(key, { payload, expiresAt })
        if (typeof payload.uid === "string") db.put(uidKey(payload.uid), key)
        if (typeof payload.userCode === "string") db.put(userCodeKey(payload.userCode), key)
        if (grantable.has(this.model) && typeof payload.grantId === "string") db.put(grantPrefix(payload.grantId) + key, key)
      })
    }

    async find(id: string): Promise<Record<string, unknown> | undefined> {
      return live(modelKey(this.model, id))?.payload
    }

    async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
      const key = db.get(uidKey(uid))
      return typeof key === "string" ? live(key)?.payload : undefined
    }

    async findByUserCode(userCode: string): Promise<Record<string, unknown> | undefined> {
      const key = db.get(userCodeKey(userCode))
      return typeof key === "string" ? live(key)?.payload : undefined
    }

    async consume(id: string): Promise<void> {
      const key = modelKey(this.model, id)
      await db.transaction(() => {
        const value = live(key)
        if (value !== undefined) db.put(key, { ...value, payload: { ...value.payload, consumed: Math.floor(Date.now() / 1000) } })
      })
    }

    async destroy(id: string): Promise<void> {
      const key = modelKey(this.model, id)
      await db.transaction(() => {
        const value = db.get(key)
        if (value !== undefined && typeof value !== "string") {
          const uid = value.payload.uid
          if (typeof uid === "string" && db.get(uidKey(uid)) === key) db.remove(uidKey(uid))
        }
        db.remove(key)
      })
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      const prefix = grantPrefix(grantId)
      await db.transaction(() => {
        for (const { key, value } of db.getRange({ start: prefix, end: prefix + "\uffff" })) {
          if (typeof value === "string") db.remove(value)
          db.remove(key as string)
        }
      })
    }
  }
}

/** drops expired records and the secondary keys that point at them; returns how many went */
export const sweepExpired = async (db: Database<Value, string>): Promise<number> => {
  const now = Date.now()
  let dropped = 0
  await db.transaction(() => {
    for (const { key, value } of db.getRange()) {
      const gone = typeof value === "string"
        ? (() => {
          const target = db.get(value)
          return target === undefined || (typeof target !== "string" && target.expiresAt !== undefined && target.expiresAt <= now)
        })()
        : value.expiresAt !== undefined && value.expiresAt <= now
      if (gone) {
        db.remove(key as string)
        dropped++
      }
    }
  })
  return dropped
}

export type IdpStoreValue = Value
