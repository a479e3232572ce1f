// `npm test`'s pretest: makes sure the system tools the tests drive are installed. As root it
// installs the missing ones with apt-get; otherwise it prints the command and fails.
import { spawnSync } from "node:child_process"

// command the tests run -> Debian package that provides it
const required: Record<string, string> = {
  curl: "curl",
  tar: "tar",
  skopeo: "skopeo",
  // Debian's build of distribution 2.8 installs its binary as /usr/bin/docker-registry
  "docker-registry": "docker-registry",
  // the containerd e2e test runs a private daemon and drives it with ctr (both in Debian's containerd)
  containerd: "containerd",
  ctr: "containerd",
  // package-format e2e tests: the real clients, and the tools that build their fixture upstreams
  "apt-get": "apt",
  "dpkg-deb": "dpkg",
  gpg: "gpg",
  xz: "xz-utils",
  go: "golang-go",
  cargo: "cargo",
  pip3: "python3-pip",
  python3: "python3",
  // the SSO gate's tests: nginx with auth_request in front, a real browser signing in
  nginx: "nginx",
  chromium: "chromium"
}

const has = (command: string) => spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0

const missing = [...new Set(Object.entries(required).filter(([command]) => !has(command)).map(([, pkg]) => pkg))]
if (missing.length === 0) process.exit(0)

const install = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(" ")}`
if (process.getuid?.() !== 0) {
  console.error(`The tests need system packages that are missing. Run as root:\n  ${install}`)
  process.exit(1)
}
console.log(`installing test tools: ${missing.join(" ")}`)
const result = spawnSync("sh", ["-c", install], { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })
process.exit(result.status ?? 1)
