// HTTP basic auth against the admin credentials, compared in constant time.
import { createHash, timingSafeEqual } from "node:crypto"

const digest = (text: string) => createHash("sha256").update(text).digest()

export const makeBasicAuth = (username: string, password: string) => {
  const expected = digest(`${username}:${password}`)
  return (authorization: string | undefined): boolean => {
    if (authorization === undefined || !/^basic /i.test(authorization)) return false
    const decoded = Buffer.from(authorization.slice(6).trim(), "base64").toString("utf8")
    return timingSafeEqual(digest(decoded), expected)
  }
}

export const basicChallenge = { "www-authenticate": 'Basic realm="larder"' }
