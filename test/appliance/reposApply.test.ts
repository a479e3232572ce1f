// The plan `larder repos apply` makes for one repository: create, update (naming each changed
// field) or unchanged; only the fields behaviour depends on are compared.
import t from "tap"
import { formatPlan, planFor } from "../../appliance/cli/reposApply.ts"
import type { Repository } from "../../appliance/config/Repository.ts"

const desired: Repository = {
  name: "npm-proxy",
  format: "npm",
  type: "proxy",
  online: true,
  proxy: { remoteUrl: "http://mirror.lan/npm/", contentMaxAge: 1440, metadataMaxAge: 30 },
  negativeCache: { enabled: true, timeToLive: 1440 }
}
const remote = (overrides: Record<string, unknown> = {}) => ({
  name: "npm-proxy",
  format: "npm",
  online: true,
  storage: { blobStoreName: "default" },
  proxy: { remoteUrl: "http://mirror.lan/npm/", contentMaxAge: 1440, metadataMaxAge: 30 },
  negativeCache: { enabled: true, timeToLive: 1440 },
  httpClient: { blocked: false, authentication: null },
  ...overrides
})

t.same(planFor(desired, undefined), { name: "npm-proxy", action: "create", changes: [] })
t.same(planFor(desired, remote()), { name: "npm-proxy", action: "unchanged", changes: [] }, "fields larder does not use do not count")
t.same(planFor(desired, remote({ proxy: { remoteUrl: "https://old/", contentMaxAge: 1440, metadataMaxAge: 1440 } })).changes, [
  'proxy.remoteUrl "https://old/" -> "http://mirror.lan/npm/"',
  "proxy.metadataMaxAge 1440 -> 30"
])
t.same(planFor(desired, remote({ online: false })).changes, ["online false -> true"])
t.same(planFor({ ...desired, httpClient: { authentication: { username: "bot", password: "x" } } }, remote()).changes, ['httpClient.authentication.username null -> "bot"'], "user names compared, never passwords")
t.equal(formatPlan({ name: "a", action: "create", changes: [] }), "+ create a")
t.equal(formatPlan({ name: "a", action: "update", changes: ["x 1 -> 2", "y 3 -> 4"] }), "~ update a: x 1 -> 2, y 3 -> 4")
t.equal(formatPlan({ name: "a", action: "unchanged", changes: [] }), "= unchanged a")
