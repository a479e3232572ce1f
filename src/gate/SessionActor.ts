// Keeps gate sessions' tokens fresh: a session whose access token is about to expire is refreshed
// with its refresh token, once however many requests arrive meanwhile (one refresh in flight per
// session; the others join it). A provider that refuses the refresh ends the session server-side.
import { identityOf, refusal } from "./identity.ts"
import type { GateOptions } from "./options.ts"
import { GrantRefused, TokenError, type ProviderClient } from "./provider.ts"
import type { GateSession, SessionStore } from "./sessions.ts"

/** refresh this long before the access token expires */
const refreshMarginMs = 30_000

export interface SessionActorDeps {
  readonly options: GateOptions
  readonly store: SessionStore
  readonly client: () => ProviderClient | undefined
  readonly log: (level: "info" | "warn", message: string) => void
}

export const makeSessionActor = ({ options, store, client, log }: SessionActorDeps) => {
  const inFlight = new Map<string, Promise<GateSession | undefined>>()

  const end = async (id: string, session: GateSession, why: string) => {
    await store.remove(id)
    log("info", `session of ${session.preferredUsername ?? session.user} ended: ${why}`)
    return undefined
  }

  const refresh = async (id: string, session: GateSession): Promise<GateSession | undefined> => {
    const provider = client()
    if (session.refreshToken === undefined || provider === undefined) {
      return session.accessExpiresAt > Date.now() ? session : end(id, session, "access token expired and there is no refresh token")
    }
    try {
      const tokens = await provider.refresh(session.refreshToken)
      const idClaims = tokens.idToken === undefined ? {} : await provider.verifyIdToken(tokens.idToken, undefined)
      const accessClaims = options.provider === "keycloak-oidc" ? await provider.verifyAccessToken(tokens.accessToken) : {}
      const identity = tokens.idToken === undefined ? session : identityOf(options, idClaims, accessClaims)
      const refused = refusal(options, identity)
      if (refused !== undefined) return end(id, session, refused)
      const next: GateSession = {
        ...session,
        ...identity,
        accessToken: tokens.accessToken,
        idToken: tokens.idToken ?? session.idToken,
        refreshToken: tokens.refreshToken ?? session.refreshToken,
        accessExpiresAt: tokens.expiresAt
      }
      await store.put(id, next)
      return next
    } catch (error) {
      if (error instanceof GrantRefused || error instanceof TokenError) return end(id, session, `refresh refused: ${error.message}`)
      // provider unreachable: the session stands while its access token does
      log("warn", `refreshing the session of ${session.preferredUsername ?? session.user} failed: ${(error as Error).message}`)
      return session.accessExpiresAt > Date.now() ? session : undefined
    }
  }

  return {
    /** the session if valid: synchronously when fresh, else after the (shared) refresh */
    current: (id: string): GateSession | undefined | Promise<GateSession | undefined> => {
      const session = store.get(id)
      if (session === undefined) return undefined
      if (session.accessExpiresAt - Date.now() > refreshMarginMs) return session
      const running = inFlight.get(id)
      if (running !== undefined) return running
      const started = refresh(id, session).finally(() => inFlight.delete(id))
      inFlight.set(id, started)
      return started
    },
    refreshesInFlight: () => inFlight.size
  }
}

export type SessionActor = ReturnType<typeof makeSessionActor>
