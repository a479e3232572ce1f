// Prometheus metrics (prom-client): process/Node defaults plus larder's request, cache, upstream and
// blob-store figures. One registry per process, served at /service/rest/metrics/prometheus.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client"
import { Context, Effect, Layer } from "effect"
import { Index } from "../storage/Index.ts"

export type CacheResult = "hit" | "miss" | "coalesced" | "negative" | "stale"

/** A counter's children by label values, made once: prom-client hashes the labels on every inc(). */
export const counterChildren = <T extends string>(counter: Counter<T>) => {
  const children = new Map<string, ReturnType<Counter<T>["labels"]>>()
  return (...values: Array<string>) => {
    const key = values.join("\u0000")
    let child = children.get(key)
    if (child === undefined) {
      child = counter.labels(...values)
      children.set(key, child)
    }
    return child
  }
}

const makeMetrics = (
  stats: { readonly blobs: number; readonly bytes: number; readonly evictions: number; readonly evictedBytes: number },
  quotaBytes: number | undefined
) => {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const httpRequests = new Counter({
    name: "larder_http_requests_total",
    help: "HTTP requests answered, by listener, repository, method and status",
    labelNames: ["listener", "repository", "method", "status"] as const,
    registers: [registry]
  })
  const httpDuration = new Histogram({
    name: "larder_http_request_duration_seconds",
    help: "Time to response headers, by listener",
    labelNames: ["listener"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry]
  })
  const cacheRequests = new Counter({
    name: "larder_cache_requests_total",
    help: "Repository requests by cache result: hit, miss, coalesced (joined a fetch in flight), negative, stale",
    labelNames: ["repository", "result"] as const,
    registers: [registry]
  })
  const upstreamRequests = new Counter({
    name: "larder_upstream_requests_total",
    help: "Requests sent upstream, by repository and upstream status (or 'error')",
    labelNames: ["repository", "status"] as const,
    registers: [registry]
  })
  const upstreamBytes = new Counter({
    name: "larder_upstream_bytes_total",
    help: "Body bytes received from upstreams",
    labelNames: ["repository"] as const,
    registers: [registry]
  })
  const fetchFailures = new Counter({
    name: "larder_fetch_failures_total",
    help: "Upstream fetches that committed nothing, by reason (Truncated, DigestMismatch, Failed)",
    labelNames: ["repository", "reason"] as const,
    registers: [registry]
  })
  const actorCrashes = new Counter({
    name: "larder_actor_crashes_total",
    help: "Actors that died unexpectedly (recreated on next use)",
    labelNames: ["actor"] as const,
    registers: [registry]
  })
  new Gauge({
    name: "larder_blobstore_bytes",
    help: "Bytes stored in the blob store",
    registers: [registry],
    collect() {
      this.set(stats.bytes)
    }
  })
  new Gauge({
    name: "larder_blobstore_blobs",
    help: "Blobs stored in the blob store",
    registers: [registry],
    collect() {
      this.set(stats.blobs)
    }
  })
  new Gauge({
    name: "larder_blobstore_quota_bytes",
    help: "Bytes the blob store may hold (--blobstore-quota; 0 when unlimited)",
    registers: [registry],
    collect() {
      this.set(quotaBytes ?? 0)
    }
  })
  // counted by the index inside its eviction transactions; read when scraped
  new Counter({
    name: "larder_blobstore_evictions_total",
    help: "Blobs evicted to keep the blob store under its quota",
    registers: [registry],
    collect() {
      this.reset()
      this.inc(stats.evictions)
    }
  })
  new Counter({
    name: "larder_blobstore_evicted_bytes_total",
    help: "Bytes evicted to keep the blob store under its quota",
    registers: [registry],
    collect() {
      this.reset()
      this.inc(stats.evictedBytes)
    }
  })
  const blobReadBytes = new Counter({
    name: "larder_blobstore_read_bytes_total",
    help: "Bytes read from the blob store for clients",
    registers: [registry]
  })
  const blobWriteBytes = new Counter({
    name: "larder_blobstore_write_bytes_total",
    help: "Bytes written to the blob store",
    registers: [registry]
  })
  const sourceRejected = new Counter({
    name: "larder_source_rejected_total",
    help: "Connections refused because the source address is outside the listener's source ranges",
    labelNames: ["listener"] as const,
    registers: [registry]
  })
  const repairs = new Counter({
    name: "larder_startup_repairs_total",
    help: "Start-up repairs: temp files removed, entries dropped for missing blobs, orphan blobs removed",
    labelNames: ["kind"] as const,
    registers: [registry]
  })
  const gateAuth = new Counter({
    name: "larder_gate_auth_total",
    help: "Answers of the gate's /oauth2/auth (nginx auth_request), by status: 200 let in, 401 no valid session, 403 not in allowed_groups",
    labelNames: ["status"] as const,
    registers: [registry]
  })
  const gateSignIns = new Counter({
    name: "larder_gate_sign_ins_total",
    help: "Gate sign-ins by result: ok, refused (token, audience, issuer, group or email checks), failed (provider unreachable or error)",
    labelNames: ["result"] as const,
    registers: [registry]
  })
  return {
    registry,
    gateAuth,
    gateSignIns,
    cacheResult: counterChildren(cacheRequests),
    httpRequests,
    httpDuration,
    cacheRequests,
    upstreamRequests,
    upstreamBytes,
    fetchFailures,
    actorCrashes,
    blobReadBytes,
    blobWriteBytes,
    sourceRejected,
    repairs
  }
}

export class Metrics extends Context.Service<Metrics, ReturnType<typeof makeMetrics>>()("larder/admin/Metrics") {
  static readonly layer = Layer.effect(
    Metrics,
    Effect.gen(function*() {
      const index = yield* Index
      return Metrics.of(makeMetrics(index.stats, index.quotaBytes))
    })
  )
}
