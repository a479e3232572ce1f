// Acceptance 5 (tokens): the gate's validation refuses forged tokens: a key the provider does not
// publish, alg none, HS256 keyed with the public key, expired, wrong audience, wrong issuer, and
// names the reason. A local JWKS server stands in for the provider.
import t from "tap"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { createHmac } from "node:crypto"
import { exportJWK, generateKeyPair, SignJWT, type JWK } from "jose"
import { resolveGateOptions } from "../../src/gate/options.ts"
import { makeProviderClient, TokenError } from "../../src/gate/provider.ts"

const issuer = "https://sso.example.test/auth/realms/apps"
let server: Server
let jwksFetches = 0
let published: Array<JWK> = []

const options = resolveGateOptions({ "oidc-issuer-url": issuer, "client-id": "gate", "client-secret": "s" }, { cookieSecret: "0123456789abcdef0123456789abcdef" })

t.before(async () => {
  server = createServer((_request, response) => {
    jwksFetches++
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify({ keys: published }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
})
t.teardown(() => new Promise((resolve) => server.close(resolve)))

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")

t.test("forged and invalid tokens are refused with the reason", async (t) => {
  const good = await generateKeyPair("RS256", { extractable: true })
  const other = await generateKeyPair("RS256", { extractable: true })
  const publicJwk = { ...(await exportJWK(good.publicKey)), kid: "k1", alg: "RS256", use: "sig" }
  published = [publicJwk]
  const jwks = `http://127.0.0.1:${(server.address() as AddressInfo).port}/certs`
  const client = makeProviderClient(options, { authorization: "http://x/auth", token: "http://x/token", jwks, userinfo: undefined, endSession: undefined }, { jwksCooldownMs: 0 })
  const now = Math.floor(Date.now() / 1000)
  const claims = { iss: issuer, aud: ["gate", "account"], sub: "u1", iat: now, exp: now + 300 }
  const sign = (payload: Record<string, unknown>, key = good.privateKey, kid = "k1") =>
    new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid }).sign(key)

  const valid = await client.verifyAccessToken(await sign(claims))
  t.equal(valid.sub, "u1", "a well-formed token passes")

  const refused = async (label: string, token: string, message: RegExp) => {
    const error = await client.verifyAccessToken(token).then(() => undefined, (e: Error) => e)
    t.ok(error instanceof TokenError, `${label}: refused`)
    t.match(error?.message, message, `${label}: ${error?.message}`)
  }
  await refused("signed with a key the provider does not publish", await sign(claims, other.privateKey), /signature verification failed/)
  const fetchesBefore = jwksFetches
  await refused("an unknown kid", await sign(claims, other.privateKey, "k-unknown"), /signed with a key the provider does not publish/)
  t.ok(jwksFetches > fetchesBefore, "an unknown kid makes the gate refetch the JWKS once")
  await refused("alg none", `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`, /algorithm not allowed|Unsecured|not allowed/)
  const hsInput = `${b64({ alg: "HS256", kid: "k1" })}.${b64(claims)}`
  const hsSignature = createHmac("sha256", JSON.stringify(publicJwk)).update(hsInput).digest("base64url")
  await refused("HS256 keyed with the public key", `${hsInput}.${hsSignature}`, /algorithm not allowed/)
  await refused("expired", await sign({ ...claims, iat: now - 3600, exp: now - 600 }), /access token refused: expired/)
  await refused("not yet valid", await sign({ ...claims, nbf: now + 600 }), /nbf|not active/)
  await refused("wrong audience", await sign({ ...claims, aud: "account" }), /^invalid audience: access token aud \[account\] does not contain client id gate/)
  await refused("wrong issuer", await sign({ ...claims, iss: `${issuer}/` }), new RegExp(`^invalid issuer: expected ${issuer}, got ${issuer}/$`))
  const tampered = (await sign(claims)).split(".")
  tampered[1] = b64({ ...claims, sub: "admin" })
  await refused("payload changed after signing", tampered.join("."), /signature verification failed/)

  const skew = await client.verifyAccessToken(await sign({ ...claims, exp: now - 10 }))
  t.equal(skew.sub, "u1", "a token expired by 10 s passes within the 30 s clock skew")

  const idToken = await sign({ ...claims, nonce: "n-1" })
  t.equal((await client.verifyIdToken(idToken, "n-1")).sub, "u1")
  const wrongNonce = await client.verifyIdToken(idToken, "n-2").then(() => undefined, (e: Error) => e)
  t.match(wrongNonce?.message, /nonce does not match/)
})
