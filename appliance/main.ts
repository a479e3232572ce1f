#!/usr/bin/env node
// larder's entry point: reads flags and LARDER_* env, loads the repositories and admin
// credentials, repairs the store, and serves the LAN and web listeners until stopped.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Config, Effect, Layer, Logger, References, Schedule } from "effect"
import { Command, Flag } from "effect/cli"
import { optionalStringFlag, withEnv } from "./config/envFlag.ts"
import { Repositories } from "../src/actors/Repositories.ts"
import { UpstreamClient, defaultUpstreamClientOptions } from "../src/actors/UpstreamClient.ts"
import { counterChildren, Metrics } from "../src/admin/Metrics.ts"
import { makeApp } from "../src/http/app.ts"
import { makeBasicAuth } from "../src/http/basicAuth.ts"
import { makeArtifactPath } from "../src/http/artifactPath.ts"
import { serveListener } from "../src/http/Listeners.ts"
import { defaultLanSourceRanges, parseSourceRanges } from "../src/http/SourceRanges.ts"
import { BlobStore } from "../src/storage/BlobStore.ts"
import { Index, defaultEvictionPolicy } from "../src/storage/Index.ts"
import { policyNames } from "../src/storage/eviction/policies.ts"
import { parseByteSize } from "./config/byteSize.ts"
import { repairStore } from "../src/storage/repair.ts"
import { clientConfigCommand } from "./cli/clientConfigCommand.ts"
import { reposCommand } from "./cli/reposCommand.ts"
import { idpCommand } from "./cli/idpCommand.ts"
import { sbomCommand } from "./cli/sbomCommand.ts"
import { loadAdminCredentials } from "./config/adminCredentials.ts"
import { ConfigError, loadRepositories } from "./config/loadRepositories.ts"
import { mkdirSync } from "node:fs"
import { Option } from "effect"
import { makeGateHandler } from "../src/gate/GateHandler.ts"
import { makeSessionStore, type GateSession, type PendingLogin } from "../src/gate/sessions.ts"
import { startIdp } from "../src/idp/Idp.ts"
import type { IdpStoreValue } from "../src/idp/storeAdapter.ts"
import type { NodeHandler } from "../src/http/Listeners.ts"
import { gateConfigFlag, gateFlags, gateSettingsOf, idpFlags } from "./config/ssoFlags.ts"
import { loadSso } from "./config/sso.ts"
import { bootstrapSbom, sbomOidcOptions as sbomOidcOptions_, trustExtraCa } from "./config/sbomConfig.ts"
import { makeSbomStore } from "../src/sbom/store.ts"
import { makeSbomOidc } from "../src/sbom/oidc.ts"
import { makeSbomHandler } from "../src/sbom/SbomHandler.ts"
import { generatedSecret } from "../src/idp/Idp.ts"
import { resolve } from "node:path"

const logLevels = ["trace", "debug", "info", "warn", "error"] as const
const levelNames = { trace: "Trace", debug: "Debug", info: "Info", warn: "Warn", error: "Error" } as const

export const serveFlags = {
  dataDir: withEnv(
    Flag.String("data-dir").pipe(Flag.withDescription("Directory for the index, blobs and generated secrets")),
    Config.String("LARDER_DATA_DIR"),
    "./data"
  ),
  lanPort: withEnv(
    Flag.Int("lan-port").pipe(Flag.withDescription("Port of the LAN listener (artifacts without auth, source ranges)")),
    Config.Int("LARDER_LAN_PORT"),
    8081
  ),
  webPort: withEnv(
    Flag.Int("web-port").pipe(Flag.withDescription("Port of the web listener (behind the ingress)")),
    Config.Int("LARDER_WEB_PORT"),
    8080
  ),
  listenAddress: withEnv(
    Flag.String("listen-address").pipe(Flag.withDescription("Address both listeners bind to")),
    Config.String("LARDER_LISTEN_ADDRESS"),
    "::"
  ),
  lanSourceRanges: withEnv(
    Flag.String("lan-source-ranges").pipe(Flag.withDescription("Comma-separated CIDR ranges the LAN listener accepts")),
    Config.String("LARDER_LAN_SOURCE_RANGES"),
    defaultLanSourceRanges.join(",")
  ),
  trustedProxies: withEnv(
    Flag.String("trusted-proxies").pipe(
      Flag.withDescription("Comma-separated CIDR ranges of proxies whose X-Forwarded-Host/-Proto set the URLs in rewritten metadata")
    ),
    Config.String("LARDER_TRUSTED_PROXIES"),
    "127.0.0.1/32,::1/128"
  ),
  repositories: optionalStringFlag("repositories", "LARDER_REPOSITORIES", "YAML or JSON list of repository objects (Nexus REST shape) overriding the defaults by name"),
  adminSecretDir: optionalStringFlag("admin-secret-dir", "LARDER_ADMIN_SECRET_DIR", "Directory holding files `username` and `password` with the admin credentials"),
  logLevel: withEnv(
    Flag.Literals("log-level", logLevels).pipe(Flag.withDescription("Minimum level logged")),
    Config.Literals(logLevels, "LARDER_LOG_LEVEL"),
    "info"
  ),
  upstreamConcurrency: withEnv(
    Flag.Int("upstream-concurrency").pipe(Flag.withDescription("Requests in flight per upstream origin")),
    Config.Int("LARDER_UPSTREAM_CONCURRENCY"),
    defaultUpstreamClientOptions.concurrencyPerUpstream
  ),
  blobstoreQuota: withEnv(
    Flag.String("blobstore-quota").pipe(Flag.withDescription("Bytes the blob store may hold, e.g. 50GiB; beyond it the eviction policy makes room (0: no limit)")),
    Config.String("LARDER_BLOBSTORE_QUOTA"),
    "0"
  ),
  evictionPolicy: withEnv(
    Flag.Literals("eviction-policy", policyNames).pipe(Flag.withDescription("Which blobs go first when the quota is reached (bench/RESULTS.md compares them)")),
    Config.Literals(policyNames, "LARDER_EVICTION_POLICY"),
    defaultEvictionPolicy
  ),
  ...idpFlags,
  caFile: optionalStringFlag("ca-file", "LARDER_CA_FILE", "PEM file of CAs to trust besides the system's, for the SBOM intake's OIDC discovery (the JVM trust-store dance of Dependency-Track); NODE_EXTRA_CA_CERTS works too"),
  gateConfig: gateConfigFlag,
  ...gateFlags,
  upstreamTimeout: withEnv(
    Flag.Int("upstream-timeout").pipe(Flag.withDescription("Seconds to wait for an upstream's response headers")),
    Config.Int("LARDER_UPSTREAM_TIMEOUT"),
    defaultUpstreamClientOptions.connectTimeoutMs / 1000
  )
}

type ServeOptions = {
  readonly [K in keyof typeof serveFlags]: (typeof serveFlags)[K] extends Flag.Flag<infer A> ? A : never
}

const serve = (options: ServeOptions) =>
  Effect.gen(function*() {
    const dataDir = resolve(options.dataDir)
    mkdirSync(dataDir, { recursive: true })
    const sourceRanges = yield* Effect.try({
      try: () => parseSourceRanges(options.lanSourceRanges.split(",")),
      catch: (error) => new ConfigError({ message: `--lan-source-ranges: ${(error as Error).message}` })
    })
    const trustedProxies = yield* Effect.try({
      try: () => parseSourceRanges(options.trustedProxies.split(",")),
      catch: (error) => new ConfigError({ message: `--trusted-proxies: ${(error as Error).message}` })
    })
    const quotaBytes = yield* Effect.try({
      try: () => parseByteSize(options.blobstoreQuota),
      catch: (error) => new ConfigError({ message: `--blobstore-quota: ${(error as Error).message}` })
    })
    const { repositories, overridden } = yield* loadRepositories(options.repositories._tag === "Some" ? options.repositories.value : undefined)
    const admin = yield* loadAdminCredentials({
      secretDir: options.adminSecretDir._tag === "Some" ? options.adminSecretDir.value : undefined,
      env: process.env,
      dataDir
    })

    const index = Layer.effect(
      Index,
      Effect.gen(function*() {
        const blobs = yield* BlobStore
        return yield* Index.make(dataDir, { quotaBytes, policy: options.evictionPolicy, removeBlob: blobs.remove })
      })
    )
    const storage = index.pipe(Layer.provideMerge(BlobStore.layer(dataDir)))
    const services = Layer.mergeAll(
      Metrics.layer,
      UpstreamClient.layer({
        ...defaultUpstreamClientOptions,
        concurrencyPerUpstream: options.upstreamConcurrency,
        connectTimeoutMs: options.upstreamTimeout * 1000
      })
    ).pipe(Layer.provideMerge(storage))

    const program = Effect.gen(function*() {
      const repaired = yield* repairStore
      const metrics = yield* Metrics
      metrics.repairs.inc({ kind: "temp-file" }, repaired.tempFiles)
      metrics.repairs.inc({ kind: "missing-blob-entry" }, repaired.droppedEntries)
      metrics.repairs.inc({ kind: "orphan-blob" }, repaired.orphanBlobs)
      yield* Effect.logInfo(
        `store repaired: ${repaired.tempFiles} temp files removed, ${repaired.droppedEntries} entries with missing blobs dropped, ${repaired.orphanBlobs} orphan blobs removed`
      )
      // The defaults are written once; a --repositories file is authoritative for what it names.
      const index = yield* Index
      for (const repository of repositories) {
        if (overridden.has(repository.name) || index.getRepository(repository.name) === undefined) {
          yield* Effect.promise(() => index.putRepository(repository.name, repository))
        }
      }
      return yield* Effect.gen(function*() {
        const repositoriesService = yield* Repositories
        for (const repository of repositoriesService.list()) {
          if (repository.proxy.remoteUrl === "") {
            yield* Effect.logWarning(
              `repository "${repository.name}" has no upstream; set proxy.remoteUrl in the --repositories file or with PUT /service/rest/v1/repositories/${repository.format}/proxy/${repository.name}`
            )
          }
        }
        const checkAdmin = makeBasicAuth(admin.username, admin.password)
        const metricsService = yield* Metrics
        // the gate and the IdP need the web listener's address (their default URLs), so they are
        // put in place right after it listens, before larder reports ready
        const sso: { gate: NodeHandler | undefined; idp: NodeHandler | undefined; sbom: NodeHandler | undefined } = { gate: undefined, idp: undefined, sbom: undefined }
        const ssoHandlers: ReadonlyArray<NodeHandler> = [
          (request, response) => sso.gate?.(request, response) ?? false,
          (request, response) => sso.idp?.(request, response) ?? false,
          (request, response) => sso.sbom?.(request, response) ?? false
        ]
        const listen = (listener: "lan" | "web", port: number, ranges: typeof sourceRanges | undefined) =>
          Effect.gen(function*() {
            const artifactPath = makeArtifactPath({ listener, sourceRanges: ranges, repositories: repositoriesService, metrics: metricsService, trustedProxies })
            return yield* serveListener({
              host: options.listenAddress,
              port,
              app: yield* makeApp({ listener, sourceRanges: ranges, checkAdmin, trustedProxies }),
              nodeHandlers: listener === "web" ? [artifactPath, ...ssoHandlers] : [artifactPath]
            })
          })
        const lan = yield* listen("lan", options.lanPort, sourceRanges)
        const web = yield* listen("web", options.webPort, undefined)

        const externalUrl = Option.getOrElse(options.externalUrl, () => web).replace(/\/$/, "")
        const proxyHeaders = Option.getOrUndefined(options.proxyHeaders)
        if (proxyHeaders !== undefined && !["xforwarded", "edge", "none"].includes(proxyHeaders)) {
          return yield* new ConfigError({ message: `--proxy-headers: expected xforwarded (or none), got "${proxyHeaders}"` })
        }
        if (proxyHeaders === "edge") yield* Effect.logWarning("--proxy-headers edge is deprecated (as in Keycloak 26); it is read as xforwarded")
        const ssoConfig = yield* Effect.try({
          try: () =>
            loadSso({
              dataDir,
              externalUrl,
              realmFiles: Option.match(options.realmFiles, { onNone: () => [], onSome: (files) => files.split(",").map((file) => file.trim()).filter((file) => file !== "") }),
              admin,
              gateSettings: gateSettingsOf(options),
              gateConfigFile: Option.getOrUndefined(options.gateConfig)
            }),
          catch: (error) => new ConfigError({ message: (error as Error).message })
        })
        for (const note of ssoConfig.notes) yield* Effect.logInfo(note)
        const index = yield* Index
        // expired sessions, logins and IdP records are dropped at start and then hourly
        const sweepEvery = (sweep: () => Promise<number>, what: string) =>
          Effect.promise(sweep).pipe(
            Effect.tap((dropped) => dropped > 0 ? Effect.logInfo(`dropped ${dropped} ${what}`) : Effect.void),
            Effect.repeat(Schedule.spaced("1 hour")),
            Effect.forkScoped
          )
        // the handlers run outside any fiber; their lines go through this runtime's logger and level
        const runLog = Effect.runForkWith(yield* Effect.context<never>())
        const log = (level: "info" | "warn" | "error", message: string) => {
          runLog(level === "info" ? Effect.logInfo(message) : level === "warn" ? Effect.logWarning(message) : Effect.logError(message))
        }
        const idp = yield* Effect.promise(() =>
          startIdp({
            dataDir,
            externalUrl,
            realms: ssoConfig.realms,
            store: index.database<IdpStoreValue>("idp"),
            trustForwarded: proxyHeaders === "xforwarded" || proxyHeaders === "edge",
            trustedProxies,
            log
          })
        )
        sso.idp = idp.handler
        yield* Effect.logInfo(`identity provider: ${idp.runtimes.map((runtime) => runtime.issuer).join(", ")}`)
        if (ssoConfig.gate !== undefined) {
          const authAnswers = counterChildren(metricsService.gateAuth)
          const gateSessions = makeSessionStore(index.database<GateSession>("gate-session"), index.database<PendingLogin>("gate-login"))
          const gate = makeGateHandler({
            options: ssoConfig.gate,
            store: gateSessions,
            trustedProxies,
            log,
            countAuth: (status) => authAnswers(String(status)).inc(),
            countSignIn: (result) => metricsService.gateSignIns.inc({ result })
          })
          sso.gate = gate.handler
          const stop = new AbortController()
          yield* Effect.addFinalizer(() => Effect.sync(() => stop.abort()))
          gate.run(stop.signal).catch((error: Error) => log("error", `gate: ${error.message}`))
          yield* sweepEvery(() => gateSessions.sweep(), "expired gate sessions and sign-ins")
        }
        yield* sweepEvery(() => idp.sweep(), "expired identity provider records")

        // the SBOM intake (Dependency-Track's API); its OIDC discovery runs once the listeners are up
        const caFile = Option.getOrUndefined(options.caFile)
        const sbomOidcOptions = yield* Effect.try({
          try: () => {
            if (caFile !== undefined) trustExtraCa(caFile)
            return sbomOidcOptions_(process.env, { builtInRealm: Option.isNone(options.realmFiles), externalUrl })
          },
          catch: (error: unknown) => new ConfigError({ message: (error as Error).message })
        })
        const sbomStore = makeSbomStore(index.database)
        yield* Effect.promise(() => bootstrapSbom(sbomStore, admin))
        const sbomOidc = sbomOidcOptions.enabled ? makeSbomOidc(sbomOidcOptions, log) : undefined
        sso.sbom = makeSbomHandler({
          store: sbomStore,
          oidc: sbomOidc,
          sessionSecret: Buffer.from(generatedSecret(dataDir, "sbom/session-key"), "base64url"),
          version: "0.1.0",
          log
        })
        if (sbomOidc !== undefined) sbomOidc.discover().catch((error: Error) => log("warn", `SBOM OIDC: ${error.message}`))
        yield* Effect.logInfo(`larder ready lan=${lan} web=${web} data=${dataDir} quota=${quotaBytes ?? "none"} eviction=${options.evictionPolicy} admin=${admin.username} (${admin.source})`)
        return yield* Effect.never
      }).pipe(Effect.provide(Repositories.layer()), Effect.scoped)
    })
    return yield* program.pipe(Effect.provide(services))
  }).pipe(
    Effect.provideService(References.MinimumLogLevel, levelNames[options.logLevel]),
    Effect.catchTag(["ConfigError", "ListenError"], (error) =>
      Effect.logError(`larder cannot start: ${error.message}`).pipe(Effect.andThen(Effect.sync(() => process.exit(2)))))
  )

export const larder = Command.make("larder", serveFlags, serve).pipe(
  Command.withDescription("Artifact cache, SSO gate and SBOM intake for a small platform team's LAN"),
  Command.withSubcommands([reposCommand, clientConfigCommand, idpCommand, sbomCommand])
)

if (import.meta.main) {
  larder.pipe(
    Command.run({ version: "0.1.0" }),
    Effect.provide(Layer.mergeAll(NodeServices.layer, Logger.layer([Logger.consolePretty()]))),
    NodeRuntime.runMain
  )
}
