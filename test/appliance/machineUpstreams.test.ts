import t from "tap"
import { parseAptSources } from "../../appliance/config/machineUpstreams.ts"

t.test("deb822 .sources", async (t) => {
  const text = `Types: deb deb-src
URIs: http://archive.example/debian http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/archive.gpg

Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main

Types: deb
Enabled: no
URIs: http://disabled.example/debian
Suites: bookworm

Types: deb-src
URIs: http://sources-only.example/debian
Suites: bookworm
`
  t.same(parseAptSources(text, true), [
    { uri: "http://archive.example/debian", suites: ["bookworm", "bookworm-updates"] },
    { uri: "http://mirror.example/debian", suites: ["bookworm", "bookworm-updates"] },
    { uri: "http://security.example/debian-security", suites: ["bookworm-security"] }
  ])
})

t.test("one-line sources.list", async (t) => {
  const text = `# a comment
deb http://archive.example/debian bookworm main
deb [signed-by=/etc/apt/keyrings/x.gpg arch=amd64] http://vendor.example/apt stable main
deb-src http://archive.example/debian bookworm main
   deb http://security.example/debian-security bookworm-security main
`
  t.same(parseAptSources(text, false), [
    { uri: "http://archive.example/debian", suites: ["bookworm"] },
    { uri: "http://vendor.example/apt", suites: ["stable"] },
    { uri: "http://security.example/debian-security", suites: ["bookworm-security"] }
  ])
})
