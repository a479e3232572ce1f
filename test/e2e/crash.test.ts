// Acceptance 5 of the foundation: kill -9 during 20 concurrent downloads, restart on the same data
// directory: no temp files left, every committed entry served with the right bytes.
import { randomBytes } from "node:crypto"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import t from "tap"
import { startAppliance } from "../support/appliance.ts"
import { send, sha256 } from "../support/http.ts"
import { startUpstream } from "../support/upstream.ts"

const upstream = await startUpstream()
const repositories = [{ name: "raw-codehost", format: "raw", proxy: { remoteUrl: upstream.url + "/" } }]

t.test("kill -9 mid-download leaves a consistent store", async (t) => {
  const committed = Array.from({ length: 5 }, (_, i) => ({ path: `/done/${i}.bin`, body: randomBytes(100_000 + i * 300_000) }))
  let release!: () => void
  const never = new Promise<void>((resolve) => (release = resolve))
  const inFlight = Array.from({ length: 20 }, (_, i) => ({ path: `/flight/${i}.bin`, body: randomBytes(4 * 1024 * 1024) }))
  for (const { path, body } of committed) upstream.routes.set(path, { body })
  for (const { path, body } of inFlight) upstream.routes.set(path, { body, pauseAfter: { bytes: body.length / 2, until: never } })

  const first = await startAppliance({ repositories })
  for (const { path, body } of committed) {
    const reply = await send(first.lanUrl, "/repository/raw-codehost" + path, { hashOnly: true })
    t.equal(reply.sha256, sha256(body), `committed ${path}`)
  }
  // 20 downloads in flight, each with bytes arriving, when the process is killed
  let streaming = 0
  let allStreaming!: () => void
  const started = new Promise<void>((resolve) => (allStreaming = resolve))
  const downloads = inFlight.map(({ path }) => {
    let counted = false
    return send(first.lanUrl, "/repository/raw-codehost" + path, {
      hashOnly: true,
      onData: () => {
        if (counted) return
        counted = true
        if (++streaming === inFlight.length) allStreaming()
      }
    }).catch((error: Error) => ({ status: 0, complete: false, error }))
  })
  await started
  t.ok(readdirSync(join(first.dataDir, "tmp")).length > 0, "temp files exist while downloads are in flight")
  await first.kill9()
  const interrupted = await Promise.all(downloads)
  t.equal(interrupted.filter((reply) => reply.complete).length, 0, "no interrupted download looks complete")
  release()

  const second = await startAppliance({ dataDir: first.dataDir, repositories })
  t.teardown(() => second.stop())
  t.same(readdirSync(join(second.dataDir, "tmp")), [], "no temp files after restart")
  t.match(second.output(), /store repaired: (\d+) temp files removed/, "repair is logged")
  t.notOk(/store repaired: 0 temp files removed/.test(second.output()), "the leftover temp files were counted")
  const before = upstream.requests.length
  for (const { path, body } of committed) {
    const reply = await send(second.lanUrl, "/repository/raw-codehost" + path, { hashOnly: true })
    t.equal(reply.sha256, sha256(body), `still served after restart: ${path}`)
  }
  t.equal(upstream.requests.length, before, "committed entries came from the store, not the upstream")
  for (const { path, body } of inFlight.slice(0, 3)) {
    upstream.routes.set(path, { body })
    const reply = await send(second.lanUrl, "/repository/raw-codehost" + path, { hashOnly: true })
    t.equal(reply.sha256, sha256(body), `interrupted ${path} is fetched again whole`)
  }
  t.ok(existsSync(join(second.dataDir, "index.lmdb")))
})

t.teardown(() => upstream.close())
