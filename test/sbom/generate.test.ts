// The Kubernetes-to-CycloneDX 1.4 generator: image references under the Docker/distribution grammar,
// the workload kinds and manifest shapes it reads, the OCI purls it writes, schema validity and
// byte-identical output for shuffled input.
import t from "tap"
import { PackageURL } from "packageurl-js"
import {
  canonicalImage,
  generateSbom,
  imagePurl,
  imagesOfManifests,
  parseImageReference,
  parseManifestText,
  validateSbom,
  type WorkloadImage
} from "../../src/sbom/generate.ts"

const sha = (c: string): string => `sha256:${c.repeat(64)}`

const podSpec = (containers: Record<string, string>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  containers: Object.entries(containers).map(([name, image]) => ({ name, image })),
  ...extra
})

const meta = (name: string, namespace = "default") => ({ name, namespace })

t.test("image references", async (t) => {
  const cases: ReadonlyArray<readonly [string, string, string, string | undefined, string | undefined]> = [
    // reference, registry, repository, tag, digest
    ["nginx", "docker.io", "library/nginx", "latest", undefined],
    ["nginx:1.25", "docker.io", "library/nginx", "1.25", undefined],
    ["bitnami/redis", "docker.io", "bitnami/redis", "latest", undefined],
    ["docker.io/nginx", "docker.io", "library/nginx", "latest", undefined],
    ["index.docker.io/library/nginx:1", "docker.io", "library/nginx", "1", undefined],
    ["ghcr.io/org/team/app:v2.0.1", "ghcr.io", "org/team/app", "v2.0.1", undefined],
    ["registry.local:5000/team/app:1.2", "registry.local:5000", "team/app", "1.2", undefined],
    ["registry.local:5000/team/app", "registry.local:5000", "team/app", "latest", undefined],
    ["localhost/app", "localhost", "app", "latest", undefined],
    ["localhost:5000/app:dev", "localhost:5000", "app", "dev", undefined],
    ["[::1]:5000/app:dev", "[::1]:5000", "app", "dev", undefined],
    ["Registry/app", "Registry", "app", "latest", undefined],
    [`nginx@${sha("a")}`, "docker.io", "library/nginx", undefined, sha("a")],
    [`nginx:1.25@${sha("b")}`, "docker.io", "library/nginx", "1.25", sha("b")],
    [`registry.local:5000/team/app@${sha("c")}`, "registry.local:5000", "team/app", undefined, sha("c")],
    ["my_org/app-name__x.y:Tag_1", "docker.io", "my_org/app-name__x.y", "Tag_1", undefined]
  ]
  for (const [reference, registry, repository, tag, digest] of cases) {
    t.same(parseImageReference(reference), { registry, repository, tag, digest, original: reference }, reference)
  }
})

t.test("invalid image references", async (t) => {
  const cases: ReadonlyArray<readonly [string, RegExp]> = [
    ["", /empty name/],
    ["   ", /empty name/],
    [":latest", /empty name/],
    ["@" + sha("a"), /empty name/],
    ["Nginx", /repository "library\/Nginx" must be lowercase/],
    ["docker.io/Library/nginx", /repository "Library\/nginx" must be lowercase/],
    ["nginx@sha256:abc", /bad digest "sha256:abc" \(sha256 needs 64 lowercase hex characters\)/],
    ["nginx@" + sha("A"), /bad digest/],
    ["nginx@latest", /bad digest "latest" \(expected algorithm:hex\)/],
    ["nginx:", /bad tag ""/],
    ["nginx:-x", /bad tag "-x"/],
    ["nginx:a:b", /bad repository/],
    ["team//app", /bad repository "team\/\/app"/],
    ["registry.local:5000/", /empty repository/],
    ["reg_istry.io/app", /bad registry "reg_istry.io"/],
    ["a".repeat(64), /image ID/],
    [" nginx", /whitespace/]
  ]
  for (const [reference, message] of cases) {
    t.throws(() => parseImageReference(reference), { message }, JSON.stringify(reference))
  }
  t.throws(() => parseImageReference("Nginx"), { message: 'invalid image reference "Nginx": repository "library/Nginx" must be lowercase' })
})

t.test("purls", async (t) => {
  const cases: ReadonlyArray<readonly [string, string, string | undefined, Record<string, string>]> = [
    ["nginx:1.25", "nginx", undefined, { repository_url: "docker.io/library/nginx", tag: "1.25" }],
    ["nginx", "nginx", undefined, { repository_url: "docker.io/library/nginx", tag: "latest" }],
    [`nginx@${sha("a")}`, "nginx", sha("a"), { repository_url: "docker.io/library/nginx" }],
    [`nginx:1.25@${sha("b")}`, "nginx", sha("b"), { repository_url: "docker.io/library/nginx", tag: "1.25" }],
    ["registry.local:5000/team/app:1.2", "app", undefined, { repository_url: "registry.local:5000/team/app", tag: "1.2" }],
    ["localhost/app", "app", undefined, { repository_url: "localhost/app", tag: "latest" }],
    ["ghcr.io/org/team/app:v1", "app", undefined, { repository_url: "ghcr.io/org/team/app", tag: "v1" }]
  ]
  for (const [reference, name, version, qualifiers] of cases) {
    const purl = PackageURL.fromString(imagePurl(parseImageReference(reference)))
    t.same(
      { type: purl.type, namespace: purl.namespace, name: purl.name, version: purl.version, qualifiers: purl.qualifiers },
      { type: "oci", namespace: undefined, name, version, qualifiers },
      reference
    )
  }
})

t.test("purl encoding: the digest's ':' stays, a port's ':' inside repository_url is encoded", async (t) => {
  const purl = imagePurl(parseImageReference(`registry.local:5000/team/app:1.2@${sha("d")}`))
  // packageurl-js 2.0.1 also percent-encodes "/" inside qualifier values
  t.equal(purl, `pkg:oci/app@${sha("d")}?repository_url=registry.local%3A5000%2Fteam%2Fapp&tag=1.2`)
  t.match(purl, /^pkg:oci\/app@sha256:d{64}\?/, "digest ':' not percent-encoded")
  t.match(purl, /repository_url=registry\.local%3A5000/, "port ':' percent-encoded")
  t.equal(imagePurl(parseImageReference("nginx:1.25")), "pkg:oci/nginx?repository_url=docker.io%2Flibrary%2Fnginx&tag=1.25", "no version without a digest")
})

t.test("every workload kind, with init and ephemeral containers", async (t) => {
  const template = (containers: Record<string, string>) => ({ template: { spec: podSpec(containers) } })
  const cases: ReadonlyArray<readonly [Record<string, unknown>, ReadonlyArray<readonly [string, string]>]> = [
    [
      { apiVersion: "v1", kind: "Pod", metadata: meta("p"), spec: podSpec({ app: "pod-app" }, { initContainers: [{ name: "init", image: "pod-init" }], ephemeralContainers: [{ name: "debug", image: "busybox" }] }) },
      [["docker.io/library/busybox:latest", "Pod/default/p (ephemeral container debug)"], ["docker.io/library/pod-app:latest", "Pod/default/p (container app)"], ["docker.io/library/pod-init:latest", "Pod/default/p (init container init)"]]
    ],
    [{ kind: "Deployment", metadata: meta("d"), spec: template({ app: "deploy" }) }, [["docker.io/library/deploy:latest", "Deployment/default/d (container app)"]]],
    [{ kind: "StatefulSet", metadata: meta("s", "db"), spec: template({ pg: "postgres:16" }) }, [["docker.io/library/postgres:16", "StatefulSet/db/s (container pg)"]]],
    [{ kind: "DaemonSet", metadata: meta("ds", "kube-system"), spec: template({ agent: "quay.io/agent/a:1" }) }, [["quay.io/agent/a:1", "DaemonSet/kube-system/ds (container agent)"]]],
    [{ kind: "ReplicaSet", metadata: meta("rs"), spec: template({ app: "rs" }) }, [["docker.io/library/rs:latest", "ReplicaSet/default/rs (container app)"]]],
    [{ kind: "ReplicationController", metadata: meta("rc"), spec: template({ app: "rc" }) }, [["docker.io/library/rc:latest", "ReplicationController/default/rc (container app)"]]],
    [{ kind: "Job", metadata: meta("j"), spec: { template: { spec: podSpec({ run: "job" }, { initContainers: [{ name: "prep", image: "prep:1" }] }) } } }, [["docker.io/library/job:latest", "Job/default/j (container run)"], ["docker.io/library/prep:1", "Job/default/j (init container prep)"]]],
    [{ kind: "CronJob", metadata: meta("c"), spec: { schedule: "@daily", jobTemplate: { spec: template({ run: "cron" }) } } }, [["docker.io/library/cron:latest", "CronJob/default/c (container run)"]]],
    [{ kind: "PodTemplate", metadata: meta("pt"), template: { spec: podSpec({ app: "tmpl" }) } }, [["docker.io/library/tmpl:latest", "PodTemplate/default/pt (container app)"]]],
    [{ kind: "Deployment", metadata: { name: "nons" }, spec: template({ app: "nons" }) }, [["docker.io/library/nons:latest", "Deployment/nons (container app)"]]]
  ]
  for (const [document, expected] of cases) {
    const { images, skipped } = imagesOfManifests([document])
    const flat = images.flatMap(({ image, usedBy }) => usedBy.map((user) => [`${image.registry}/${image.repository}:${image.tag}`, user] as const))
    t.same(flat, expected, String(document.kind))
    t.same(skipped, [], `${String(document.kind)} not skipped`)
  }
})

t.test("skipped kinds and containers without an image", async (t) => {
  const { images, skipped } = imagesOfManifests([
    { kind: "Service", metadata: meta("web") },
    { kind: "ConfigMap", metadata: { name: "cfg" } },
    { kind: "Namespace", metadata: { name: "apps" } },
    { metadata: { name: "kindless" } },
    "just a string",
    null,
    undefined,
    { kind: "Pod", metadata: meta("p"), spec: { containers: [{ name: "noimage" }] } }
  ])
  t.same(images, [])
  t.same(skipped, [
    "(no kind)/kindless",
    "(not a Kubernetes object: string)",
    "ConfigMap/cfg",
    "Namespace/apps",
    "Pod/default/p (container noimage): no image",
    "Service/default/web"
  ])
})

t.test("an invalid image in a manifest names the workload and container", async (t) => {
  t.throws(() => imagesOfManifests([{ kind: "Pod", metadata: meta("bad"), spec: podSpec({ app: "Bad/Image" }) }]), {
    message: 'Pod/default/bad (container app): invalid image reference "Bad/Image": repository "Image" must be lowercase'
  })
})

const kubectlAll = {
  apiVersion: "v1",
  kind: "List",
  metadata: { resourceVersion: "" },
  items: [
    { apiVersion: "v1", kind: "Pod", metadata: meta("web-7d9c-abcde"), spec: podSpec({ app: "nginx:1.25" }) },
    { apiVersion: "v1", kind: "Service", metadata: meta("web"), spec: { ports: [{ port: 80 }] } },
    { apiVersion: "apps/v1", kind: "Deployment", metadata: meta("web"), spec: { template: { spec: podSpec({ app: "docker.io/library/nginx:1.25" }) } } },
    { apiVersion: "apps/v1", kind: "ReplicaSet", metadata: meta("web-7d9c"), spec: { template: { spec: podSpec({ app: "index.docker.io/nginx:1.25" }) } } },
    { apiVersion: "apps/v1", kind: "DaemonSet", metadata: meta("proxy", "kube-system"), spec: { template: { spec: podSpec({ "kube-proxy": `registry.k8s.io/kube-proxy:v1.30.0@${sha("e")}` }) } } }
  ]
}

t.test("List shapes: kubectl get -A -o json, typed lists, nested lists, arrays", async (t) => {
  const { images, skipped } = imagesOfManifests([kubectlAll])
  t.same(images.map(({ image, usedBy }) => [image.registry, image.repository, image.tag, image.digest, usedBy]), [
    ["docker.io", "library/nginx", "1.25", undefined, ["Deployment/default/web (container app)", "Pod/default/web-7d9c-abcde (container app)", "ReplicaSet/default/web-7d9c (container app)"]],
    ["registry.k8s.io", "kube-proxy", "v1.30.0", sha("e"), ["DaemonSet/kube-system/proxy (container kube-proxy)"]]
  ])
  t.same(skipped, ["Service/default/web"])
  // straight from the API: the items of a PodList carry no kind
  const podList = { apiVersion: "v1", kind: "PodList", items: [{ metadata: meta("a"), spec: podSpec({ app: "redis:7" }) }] }
  t.same(imagesOfManifests([podList]).images.map(({ usedBy }) => usedBy), [["Pod/default/a (container app)"]])
  const nested = { kind: "List", items: [{ kind: "List", items: [{ kind: "Pod", metadata: meta("n"), spec: podSpec({ app: "redis:7" }) }] }] }
  t.same(imagesOfManifests([nested]).images.map(({ image }) => image.tag), ["7"])
  t.same(imagesOfManifests([[{ kind: "Pod", metadata: meta("arr"), spec: podSpec({ app: "redis:7" }) }]]).images.length, 1)
})

const multiDocument = `---
# leading separator and comment
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: default
spec:
  template:
    spec:
      initContainers:
        - name: migrate
          image: registry.local:5000/team/migrate:2
      containers:
        - name: app
          image: bitnami/redis
---
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
---
apiVersion: batch/v1
kind: CronJob
metadata:
  name: backup
  namespace: ops
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - name: backup
              image: localhost/backup@${sha("f")}
---
`

t.test("parseManifestText: multi-document YAML with empty documents, JSON", async (t) => {
  const documents = parseManifestText(multiDocument, "all.yaml")
  t.equal(documents.length, 3, "empty documents dropped")
  const { images, skipped } = imagesOfManifests(documents)
  t.same(images.map(({ image, usedBy }) => [canonicalImage(image), usedBy]), [
    ["docker.io/bitnami/redis:latest", ["Deployment/default/web (container app)"]],
    [`localhost/backup@${sha("f")}`, ["CronJob/ops/backup (container backup)"]],
    ["registry.local:5000/team/migrate:2", ["Deployment/default/web (init container migrate)"]]
  ])
  t.same(skipped, ["Service/default/web"])
  t.same(parseManifestText(JSON.stringify(kubectlAll, null, 2), "all.json"), [kubectlAll])
  t.same(parseManifestText("{kind: Pod, metadata: {name: flow}}", "flow.yaml"), [{ kind: "Pod", metadata: { name: "flow" } }], "YAML flow mapping")
  t.same(parseManifestText("", "empty.yaml"), [])
  t.same(parseManifestText("---\n---\n", "seps.yaml"), [])
})

t.test("parseManifestText errors name the source and document", async (t) => {
  t.throws(() => parseManifestText("kind: Pod\n---\nkind: [unclosed\n", "bad.yaml"), { message: /^bad\.yaml: document 2: / })
  t.throws(() => parseManifestText("kind: Pod\nkind: Service\n", "dup.yaml"), { message: /^dup\.yaml: document 1: .*unique/i })
  t.throws(() => parseManifestText('{"kind": "Pod"', "bad.json"), { message: /^bad\.json: document 1: invalid JSON: / })
})

const fixture = (): ReadonlyArray<unknown> => [
  kubectlAll,
  ...parseManifestText(multiDocument, "all.yaml"),
  { kind: "Pod", metadata: meta("dup", "other"), spec: podSpec({ a: "nginx:1.25", b: "nginx:1.25@" + sha("1"), c: "nginx@" + sha("1") }) }
]

const shuffle = <A>(items: ReadonlyArray<A>, seed: number): Array<A> => {
  const out = [...items]
  let state = seed
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2147483648
    const j = state % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

t.test("duplicates merge on the normalized reference", async (t) => {
  const { images } = imagesOfManifests(fixture())
  const nginx = images.filter(({ image }) => image.repository === "library/nginx")
  t.same(nginx.map(({ image }) => [image.tag, image.digest]), [["1.25", undefined], ["1.25", sha("1")], [undefined, sha("1")]])
  t.equal(nginx.length, 3, "tag, tag+digest and digest stay distinct")
  const plain = nginx.find(({ image }) => image.digest === undefined)!
  t.same(plain.usedBy, [
    "Deployment/default/web (container app)",
    "Pod/default/web-7d9c-abcde (container app)",
    "Pod/other/dup (container a)",
    "ReplicaSet/default/web-7d9c (container app)"
  ])
  t.equal(plain.image.original, "docker.io/library/nginx:1.25", "smallest original spelling kept")
})

t.test("generateSbom: components, metadata, determinism, schema", async (t) => {
  const { images } = imagesOfManifests(fixture())
  const json = generateSbom(images)
  const bom = JSON.parse(json)
  t.equal(bom.bomFormat, "CycloneDX")
  t.equal(bom.specVersion, "1.4")
  t.notOk("serialNumber" in bom, "no serial number by default")
  t.notOk("timestamp" in bom.metadata, "no timestamp by default")
  t.same(bom.metadata.component, { type: "application", name: "kubernetes-workloads", "bom-ref": "kubernetes-workloads" })
  const purls: Array<string> = bom.components.map((component: { purl: string }) => component.purl)
  t.same(purls, [...purls].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), "sorted by purl")
  t.equal(purls.length, images.length)
  for (const component of bom.components) {
    t.equal(component.type, "container")
    t.equal(component["bom-ref"], component.purl)
    const purl = PackageURL.fromString(component.purl)
    t.equal(purl.type, "oci")
    t.equal(component.name, purl.name)
    t.equal(component.version, purl.version ?? purl.qualifiers?.tag)
  }
  const proxy = bom.components.find((component: { name: string }) => component.name === "kube-proxy")
  t.equal(proxy.version, sha("e"), "version is the digest when there is one")
  t.same(proxy.properties, [
    { name: "larder:image", value: `registry.k8s.io/kube-proxy:v1.30.0@${sha("e")}` },
    { name: "larder:usedBy", value: "DaemonSet/kube-system/proxy (container kube-proxy)" }
  ])
  t.same(await validateSbom(json), [])

  // byte-identical for shuffled documents and shuffled image lists
  for (const seed of [1, 7, 42]) {
    const documents = shuffle(fixture(), seed)
    t.equal(generateSbom(imagesOfManifests(documents).images), json, `documents shuffled (${seed})`)
    t.equal(generateSbom(shuffle(images, seed)), json, `images shuffled (${seed})`)
  }
  t.equal(generateSbom(images), json, "second run")
})

t.test("generateSbom options", async (t) => {
  const images: ReadonlyArray<WorkloadImage> = [{ image: parseImageReference("nginx:1.25"), usedBy: ["Pod/default/a (container app)"] }]
  const json = generateSbom(images, {
    name: "prod-cluster",
    version: "2024.06",
    serialNumber: "urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79",
    timestamp: new Date("2024-06-01T12:00:00Z")
  })
  const bom = JSON.parse(json)
  t.equal(bom.serialNumber, "urn:uuid:3e671687-395b-41f5-a30f-a58921a69b79")
  t.equal(bom.metadata.timestamp, "2024-06-01T12:00:00.000Z")
  t.same(bom.metadata.component, { type: "application", name: "prod-cluster", version: "2024.06", "bom-ref": "prod-cluster@2024.06" })
  t.same(bom.dependencies.find((dependency: { ref: string }) => dependency.ref === "prod-cluster@2024.06")?.dependsOn, [bom.components[0]["bom-ref"]])
  t.same(await validateSbom(json), [])
  t.same(await validateSbom(generateSbom([])), [], "an empty SBOM is valid too")
  t.throws(() => generateSbom(images, { serialNumber: "not-a-uuid" }), { message: /invalid serial number/ })
})

t.test("validateSbom reports schema errors", async (t) => {
  const bom = JSON.parse(generateSbom(imagesOfManifests([kubectlAll]).images))
  const wrongType = structuredClone(bom)
  wrongType.components[0].type = "vm"
  t.match(await validateSbom(JSON.stringify(wrongType)), [/^\$\.components\[0\]\.type: must be equal to one of the allowed values/])
  const extra = { ...bom, unexpected: true }
  t.same(await validateSbom(JSON.stringify(extra)), ['$: must NOT have additional properties (unexpected)'])
  const noName = structuredClone(bom)
  delete noName.components[1].name
  t.match(await validateSbom(JSON.stringify(noName)), [/^\$\.components\[1\]: must have required property 'name'/])
  const twoWrong = structuredClone(wrongType)
  delete twoWrong.components[1].name
  t.equal((await validateSbom(JSON.stringify(twoWrong))).length, 2, "every error is reported, not only the first")
  t.match(await validateSbom("{not json"), [/^\$: not JSON: /])
  t.same(await validateSbom(JSON.stringify(bom), "1.5"), [], "1.4 output also validates as 1.5")
  await t.rejects(validateSbom(JSON.stringify(bom), "9.9"), { message: /unknown CycloneDX spec version "9.9"/ })
})
