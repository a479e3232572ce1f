// Seeded, reproducible request traces for the hit-rate benchmark: what a cache in front of the
// upstreams sees. Each event is (time in seconds, repository, key, size in bytes, kind); a key
// names immutable content (a layer, a tarball, a package version) or one version of metadata
// (a manifest by tag, an InRelease of one day), so a changed object is a new key.

export interface TraceEvent {
  readonly time: number
  readonly repository: string
  readonly key: string
  readonly size: number
  /** manifests by tag are what registries count as pulls */
  readonly kind: "content" | "metadata"
}

export interface Trace {
  readonly name: string
  readonly description: string
  readonly events: ReadonlyArray<TraceEvent>
}

/** mulberry32: small, fast, good enough for workload generation */
export const makeRandom = (seed: number) => {
  let state = seed >>> 0
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const normal = () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next())
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    /** lognormal with the given median and sigma, clamped */
    lognormal: (median: number, sigma: number, min: number, max: number) =>
      Math.round(Math.min(max, Math.max(min, median * Math.exp(sigma * normal())))),
    /** a sampler of ranks 0..n-1 with Zipf(s) popularity */
    zipf: (n: number, s: number) => {
      const cdf = new Float64Array(n)
      let sum = 0
      for (let i = 0; i < n; i++) cdf[i] = sum += 1 / Math.pow(i + 1, s)
      return () => {
        const u = next() * sum
        let lo = 0
        let hi = n - 1
        while (lo < hi) {
          const mid = (lo + hi) >> 1
          if (cdf[mid] < u) lo = mid + 1
          else hi = mid
        }
        return lo
      }
    }
  }
}

const MB = 1024 * 1024
const day = 86_400

/**
 * 50 build agents over 7 days, 8 jobs each a day. A job pulls its project's build image (40 images,
 * Zipf popular, a new tag most days: new top layers over shared base layers, lognormal sizes) and
 * its project's dependencies (npm, PyPI or Go; Zipf popular packages, new versions now and then).
 */
export const ciFleetTrace = (seed = 1, scale: { readonly days?: number; readonly agents?: number } = {}): Trace => {
  const random = makeRandom(seed)
  const days = scale.days ?? 7
  const agents = scale.agents ?? 50
  const images = Array.from({ length: 40 }, (_, i) => ({
    name: `team/image-${i}`,
    // 6 OS bases shared between images, 2 image-specific base layers, then per tag 2 new layers
    base: [`os-${random.int(6)}`, `image-${i}-base-0`, `image-${i}-base-1`],
    tags: [] as Array<{ tag: string; layers: Array<string> }>
  }))
  const layerSize = new Map<string, number>()
  const sizeOf = (layer: string) => {
    let size = layerSize.get(layer)
    if (size === undefined) {
      size = layer.startsWith("os-") ? random.lognormal(30 * MB, 0.4, 3 * MB, 120 * MB) : random.lognormal(12 * MB, 1.1, 64 * 1024, 600 * MB)
      layerSize.set(layer, size)
    }
    return size
  }
  const newTag = (image: (typeof images)[number], n: number) =>
    image.tags.push({ tag: `v${n}`, layers: [...image.base, `${image.name}-v${n}-a`, `${image.name}-v${n}-b`] })
  for (const image of images) newTag(image, 0)
  const pickImage = random.zipf(images.length, 1.0)

  const ecosystems = [
    { repository: "npm-proxy", packages: 30_000, median: 40 * 1024, sigma: 1.4, deps: [150, 600] },
    { repository: "pypi-proxy", packages: 8_000, median: 300 * 1024, sigma: 1.6, deps: [30, 120] },
    { repository: "go-proxy", packages: 5_000, median: 120 * 1024, sigma: 1.3, deps: [40, 160] }
  ]
  const ecosystemState = ecosystems.map((ecosystem) => ({
    ...ecosystem,
    pick: random.zipf(ecosystem.packages, 0.9),
    version: new Int32Array(ecosystem.packages),
    size: new Map<string, number>()
  }))
  const projects = Array.from({ length: 300 }, () => {
    const ecosystem = ecosystemState[random.int(ecosystemState.length)]
    const count = ecosystem.deps[0] + random.int(ecosystem.deps[1] - ecosystem.deps[0])
    const deps = new Set<number>()
    while (deps.size < count) deps.add(ecosystem.pick())
    return { ecosystem, deps: [...deps], image: pickImage() }
  })
  const pickProject = random.zipf(projects.length, 0.8)

  const events: Array<TraceEvent> = []
  for (let d = 0; d < days; d++) {
    if (d > 0) {
      for (const image of images) if (random.next() < 0.6) newTag(image, d)
      for (const ecosystem of ecosystemState) {
        for (let p = 0; p < ecosystem.packages; p++) if (random.next() < 0.01) ecosystem.version[p]++
      }
    }
    const jobs: Array<number> = []
    for (let agent = 0; agent < agents; agent++) for (let j = 0; j < 8; j++) jobs.push(d * day + random.next() * day)
    jobs.sort((a, b) => a - b)
    for (const start of jobs) {
      const project = projects[pickProject()]
      const image = images[project.image]
      const tag = image.tags.length > 1 && random.next() < 0.2 ? image.tags[image.tags.length - 2] : image.tags[image.tags.length - 1]
      let t = start
      events.push({ time: t, repository: "docker-public", key: `${image.name}:${tag.tag}`, size: 4096, kind: "metadata" })
      for (const layer of tag.layers) events.push({ time: (t += 0.5), repository: "docker-public", key: layer, size: sizeOf(layer), kind: "content" })
      const ecosystem = project.ecosystem
      for (const dep of project.deps) {
        const key = `pkg-${dep}@${ecosystem.version[dep]}`
        let size = ecosystem.size.get(key)
        if (size === undefined) {
          size = random.lognormal(ecosystem.median, ecosystem.sigma, 512, 80 * MB)
          ecosystem.size.set(key, size)
        }
        events.push({ time: (t += 0.05), repository: ecosystem.repository, key, size, kind: "content" })
      }
    }
  }
  events.sort((a, b) => a.time - b.time)
  return { name: "ci-fleet", description: `${agents} build agents × 8 jobs a day × ${days} days: build images with daily tags, npm/PyPI/Go dependencies (Zipf)`, events }
}

/**
 * A 100-node cluster rolling out 30 images (10 DaemonSets on every node, 20 Deployments with 3–12
 * replicas), nodes restarting with an empty image store over the next hours, and a second rollout
 * of new versions of 10 images after 3 hours.
 */
export const rolloutTrace = (seed = 2): Trace => {
  const random = makeRandom(seed)
  const nodes = 100
  const images = Array.from({ length: 30 }, (_, i) => ({
    name: `app/image-${i}`,
    version: 1,
    shared: [`base-${random.int(4)}`, `runtime-${random.int(8)}`],
    nodes: i < 10 ? Array.from({ length: nodes }, (_, n) => n) : Array.from({ length: 3 + random.int(10) }, () => random.int(nodes))
  }))
  const sizes = new Map<string, number>()
  const sizeOf = (layer: string) => {
    let size = sizes.get(layer)
    if (size === undefined) {
      size = random.lognormal(20 * MB, 0.9, 256 * 1024, 400 * MB)
      sizes.set(layer, size)
    }
    return size
  }
  const events: Array<TraceEvent> = []
  const pull = (time: number, image: (typeof images)[number]) => {
    const tag = `${image.name}:v${image.version}`
    events.push({ time, repository: "docker-public", key: tag, size: 4096, kind: "metadata" })
    const layers = [...image.shared, `${tag}-0`, `${tag}-1`, `${tag}-2`, `${tag}-3`]
    layers.forEach((layer, i) => events.push({ time: time + 0.2 * (i + 1), repository: "docker-public", key: layer, size: sizeOf(layer), kind: "content" }))
  }
  const rollout = (start: number, selected: ReadonlyArray<(typeof images)[number]>) => {
    for (const image of selected) for (const node of new Set(image.nodes)) pull(start + node * 30 + random.next() * 20, image)
  }
  rollout(0, images)
  for (let restart = 0; restart < 40; restart++) {
    const node = random.int(nodes)
    const time = 3600 + random.next() * 5 * 3600
    for (const image of images) if (image.nodes.includes(node)) pull(time, image)
  }
  const updated = images.slice(0, 30).filter((_, i) => i % 3 === 0)
  for (const image of updated) image.version++
  rollout(3 * 3600, updated)
  events.sort((a, b) => a.time - b.time)
  return { name: "rollout", description: "100 nodes rolling out 30 images, 40 node restarts, a second rollout of 10 new versions", events }
}

/**
 * 40 hosts running `apt-get update` and upgrading once a day for 30 days against an archive of
 * 3000 packages where 1.5% get a new version each day: a new InRelease and Packages index every
 * day (metadata churn), and each host downloads the new versions of what it has installed.
 */
export const aptTrace = (seed = 3): Trace => {
  const random = makeRandom(seed)
  const packages = 3000
  const version = new Int32Array(packages)
  const sizes = new Map<string, number>()
  const pick = random.zipf(packages, 0.7)
  const hosts = Array.from({ length: 40 }, () => {
    const installed = new Set<number>(Array.from({ length: 400 }, (_, i) => i))
    while (installed.size < 800) installed.add(pick())
    return { installed: [...installed], seen: new Int32Array(packages) }
  })
  const events: Array<TraceEvent> = []
  for (let d = 0; d < 30; d++) {
    if (d > 0) for (let p = 0; p < packages; p++) if (random.next() < 0.015) version[p]++
    for (const host of hosts) {
      let t = d * day + random.next() * day
      events.push({ time: t, repository: "apt-distro", key: `dists/stable/InRelease@${d}`, size: 160 * 1024, kind: "metadata" })
      events.push({ time: (t += 0.2), repository: "apt-distro", key: `by-hash/Packages.xz@${d}`, size: 9 * MB, kind: "content" })
      for (const p of host.installed) {
        if (host.seen[p] === version[p] && d > 0) continue
        host.seen[p] = version[p]
        if (d === 0) continue // installed before the trace starts
        const key = `pool/pkg-${p}_${version[p]}.deb`
        let size = sizes.get(key)
        if (size === undefined) {
          size = random.lognormal(300 * 1024, 1.5, 2048, 200 * MB)
          sizes.set(key, size)
        }
        events.push({ time: (t += 0.05), repository: "apt-distro", key, size, kind: "content" })
      }
    }
  }
  events.sort((a, b) => a.time - b.time)
  return { name: "apt", description: "40 hosts: daily apt-get update + upgrade for 30 days, 1.5% of 3000 packages new each day", events }
}

/** bytes of every distinct key: what an unlimited cache would hold */
export const workingSet = (trace: Trace): number => {
  const sizes = new Map<string, number>()
  for (const event of trace.events) sizes.set(`${event.repository}/${event.key}`, event.size)
  let total = 0
  for (const size of sizes.values()) total += size
  return total
}
