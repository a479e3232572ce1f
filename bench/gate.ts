// `npm run bench:gate`: /oauth2/auth with a valid session cookie (what nginx's auth_request asks
// for every protected request) against nginx answering a static 200 in the same run, the floor
// any auth subrequest adds. wrk, 32 connections, keep-alive. Writes its block in bench/RESULTS.md.
import { execFile, spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { performance } from "node:perf_hooks"
import { nodeBinary, startAppliance } from "../test/support/appliance.ts"
import { makeBrowserless } from "../test/support/browserless.ts"
import { startNginxWith } from "../test/support/nginx.ts"
import { freePort } from "../test/support/ports.ts"
import { gateSecret, testRealm, writeRealmFile } from "../test/support/realm.ts"
import { findTools } from "./tools.ts"

const connections = 32
const seconds = Number(process.env.BENCH_SECONDS ?? 10)

interface Latency {
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly non2xx: number
}

const toMs = (value: string, unit: string) => Number(value) * (unit === "us" ? 0.001 : unit === "s" ? 1000 : 1)

const wrkLatency = (wrk: string, url: string, headers: Record<string, string>): Promise<Latency> =>
  new Promise((resolve, reject) => {
    const args = ["-t", "2", "-c", String(connections), "-d", `${seconds}s`, "--latency", "--timeout", "5s",
      ...Object.entries(headers).flatMap(([name, value]) => ["-H", `${name}: ${value}`]), url]
    execFile(wrk, args, { timeout: (seconds + 30) * 1000, killSignal: "SIGKILL" }, (error, stdout, stderr) => {
      if (error !== null) return reject(new Error(`wrk failed: ${error.message}\n${stderr}`))
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(stdout)
      const p50 = /^\s+50%\s+([\d.]+)(us|ms|s)$/m.exec(stdout)
      const p99 = /^\s+99%\s+([\d.]+)(us|ms|s)$/m.exec(stdout)
      if (rps === null || p50 === null || p99 === null) return reject(new Error(`could not read wrk output:\n${stdout}`))
      const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)
      resolve({
        requestsPerSecond: Number(rps[1]),
        p50Ms: toMs(p50[1], p50[2]),
        p99Ms: toMs(p99[1], p99[2]),
        non2xx: non2xx === null ? 0 : Number(non2xx[1])
      })
    })
  })

const started = performance.now()
const tools = findTools()
if (tools === undefined) process.exit(1)
const webPort = await freePort()
const barePort = await freePort()
const webUrl = `http://127.0.0.1:${webPort}`
const issuer = `${webUrl}/auth/realms/apps`
const larder = await startAppliance({
  webPort,
  args: [
    "--external-url", webUrl,
    "--idp-realm-file", writeRealmFile(testRealm({ gateRedirects: [`${webUrl}/oauth2/callback`] })),
    "--client-id", "gate", "--client-secret", gateSecret, "--oidc-issuer-url", issuer,
    "--cookie-secure=false", "--set-xauthrequest", "--pass-access-token"
  ]
})
const nginx = await startNginxWith({
  binary: tools.nginx,
  config: (prefixDir, port) => `worker_processes 1;
pid ${prefixDir}/nginx.pid;
error_log ${prefixDir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefixDir}/temp/client_body;
  proxy_temp_path ${prefixDir}/temp/proxy;
  fastcgi_temp_path ${prefixDir}/temp/fastcgi;
  uwsgi_temp_path ${prefixDir}/temp/uwsgi;
  scgi_temp_path ${prefixDir}/temp/scgi;
  keepalive_requests 1000000;
  server { listen 127.0.0.1:${port}; location / { return 200; } }
}
`
})

try {
  for (let attempt = 0; attempt < 100 && (await fetch(`${webUrl}/ready`)).status !== 200; attempt++) await new Promise((r) => setTimeout(r, 100))
  const browser = makeBrowserless()
  const login = await browser.follow(`${webUrl}/oauth2/start?rd=/`)
  await browser.submitLogin(login.at(-1)!, "alice", "alice-password")
  const cookie = browser.cookies().find((c) => c.name === "_oauth2_proxy")
  if (cookie === undefined) throw new Error("sign-in did not set the session cookie")
  const headers = { cookie: `_oauth2_proxy=${cookie.value}` }
  const check = await fetch(`${webUrl}/oauth2/auth`, { headers })
  if (check.status !== 200) throw new Error(`/oauth2/auth answered ${check.status} with the session cookie`)

  await wrkLatency(tools.wrk, `${webUrl}/oauth2/auth`, headers) // warm-up
  const gate = await wrkLatency(tools.wrk, `${webUrl}/oauth2/auth`, headers)
  const floor = await wrkLatency(tools.wrk, `${nginx.url}/`, {})
  // the engine's own ceiling: node:http answering an empty 200 in a process of its own
  const bare = spawn(nodeBinary, ["-e", `require("node:http").createServer((q, s) => s.end()).listen(${barePort}, "127.0.0.1", () => console.log("up"))`], { stdio: ["ignore", "pipe", "inherit"] })
  await new Promise((resolve) => bare.stdout.once("data", resolve))
  await wrkLatency(tools.wrk, `http://127.0.0.1:${barePort}/`, {})
  const engine = await wrkLatency(tools.wrk, `http://127.0.0.1:${barePort}/`, {})
  bare.kill()
  if (gate.non2xx > 0) throw new Error(`${gate.non2xx} answers from /oauth2/auth were not 200`)

  const ratio = gate.requestsPerSecond / floor.requestsPerSecond
  const row = (name: string, l: Latency) => `| ${name} | ${l.requestsPerSecond.toFixed(0)} | ${l.p50Ms.toFixed(2)} | ${l.p99Ms.toFixed(2)} |`
  const block = `<!-- gate:begin (written by npm run bench:gate; bench/gate.ts) -->
## SSO gate: \`/oauth2/auth\` with a valid session (\`npm run bench:gate\`)

Generated ${new Date().toISOString()} in ${((performance.now() - started) / 1000).toFixed(0)} s. wrk, ${connections} connections,
${seconds} s, keep-alive, after a warm-up run. larder: \`GET /oauth2/auth\` with a session cookie from a real
sign-in against the embedded provider, answered with X-Auth-Request-User/-Email/-Preferred-Username/-Groups
and -Access-Token. nginx (worker_processes 1): \`location / { return 200; }\`, the floor any auth
subrequest adds.

| Server | requests/s | p50 ms | p99 ms |
|---|---:|---:|---:|
${row("larder /oauth2/auth", gate)}
${row("nginx static 200", floor)}
${row("node:http empty 200 (the engine's ceiling)", engine)}

larder / nginx: **${ratio.toFixed(2)}×** the request rate; p99 ${gate.p99Ms.toFixed(2)} ms vs ${floor.p99Ms.toFixed(2)} ms.
larder / bare node:http: ${(gate.requestsPerSecond / engine.requestsPerSecond).toFixed(2)}× — what the gate's work (cookie, session, headers)
costs on top of the HTTP engine; the rest of the gap to nginx is node:http itself (the engine sits behind
src/http/Listeners.ts so a faster one can replace it).
<!-- gate:end -->
`
  console.log(block)
  const resultsFile = new URL("./RESULTS.md", import.meta.url).pathname
  const pattern = /<!-- gate:begin[\s\S]*?<!-- gate:end -->\n?/
  const existing = existsSync(resultsFile) ? readFileSync(resultsFile, "utf8") : ""
  writeFileSync(resultsFile, pattern.test(existing) ? existing.replace(pattern, block) : `${existing.trimEnd()}\n\n${block}`)
  console.log(`wrote ${resultsFile}`)
} finally {
  await nginx.stop()
  await larder.stop()
}
