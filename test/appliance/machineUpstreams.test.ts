// parseAptSources: deb822 `.sources` stanzas and one-line `sources.list` entries, deb only.
// Hostnames are made up (*.example).
import t from "tap"
import { type AptSource, parseAptSources } from "../../appliance/config/machineUpstreams.ts"

const deb822 = true
const oneLine = false

const cases: ReadonlyArray<readonly [label: string, text: string, deb822: boolean, expected: ReadonlyArray<AptSource>]> = [
  // deb822
  [
    "deb822: Types deb deb-src, several URIs, several suites",
    `Types: deb deb-src
URIs: http://archive.example/debian http://mirror.example/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/archive.gpg
`,
    deb822,
    [
      { uri: "http://archive.example/debian", suites: ["bookworm", "bookworm-updates"] },
      { uri: "http://mirror.example/debian", suites: ["bookworm", "bookworm-updates"] }
    ]
  ],
  [
    "deb822: a security stanza after a main one",
    `Types: deb
URIs: http://archive.example/debian
Suites: bookworm bookworm-updates
Components: main

Types: deb
URIs: http://security.example/debian-security
Suites: bookworm-security
Components: main
`,
    deb822,
    [
      { uri: "http://archive.example/debian", suites: ["bookworm", "bookworm-updates"] },
      { uri: "http://security.example/debian-security", suites: ["bookworm-security"] }
    ]
  ],
  [
    "deb822: Enabled: no is skipped, Enabled: yes is kept",
    `Types: deb
Enabled: no
URIs: http://disabled.example/debian
Suites: bookworm

Types: deb
Enabled: NO
URIs: http://disabled2.example/debian
Suites: bookworm

Types: deb
Enabled: yes
URIs: http://enabled.example/debian
Suites: trixie
`,
    deb822,
    [{ uri: "http://enabled.example/debian", suites: ["trixie"] }]
  ],
  [
    "deb822: deb-src only is skipped",
    `Types: deb-src
URIs: http://sources-only.example/debian
Suites: bookworm
`,
    deb822,
    []
  ],
  [
    "deb822: comments, field names in any case, extra blank lines",
    `# Debian archive, written by the installer
# Types: deb
# URIs: http://commented.example/debian

types: deb
# a comment inside the stanza
uris: http://archive.example/debian
suites: bookworm
components: main


Types: deb
URIs: http://archive.example/debian-security
Suites: bookworm-security
`,
    deb822,
    [
      { uri: "http://archive.example/debian", suites: ["bookworm"] },
      { uri: "http://archive.example/debian-security", suites: ["bookworm-security"] }
    ]
  ],
  [
    "deb822: CRLF line endings",
    "Types: deb\r\nURIs: http://archive.example/debian\r\nSuites: bookworm\r\n\r\nTypes: deb\r\nURIs: http://security.example/debian-security\r\nSuites: bookworm-security\r\n",
    deb822,
    [
      { uri: "http://archive.example/debian", suites: ["bookworm"] },
      { uri: "http://security.example/debian-security", suites: ["bookworm-security"] }
    ]
  ],
  [
    "deb822: a stanza without Types is skipped",
    `URIs: http://untyped.example/debian
Suites: bookworm
`,
    deb822,
    []
  ],
  ["deb822: empty text", "", deb822, []],
  ["deb822: only comments", "# nothing here\n# Types: deb\n", deb822, []],

  // one-line
  [
    "one-line: plain deb line",
    "deb http://archive.example/debian bookworm main\n",
    oneLine,
    [{ uri: "http://archive.example/debian", suites: ["bookworm"] }]
  ],
  [
    "one-line: [signed-by=...] options",
    "deb [signed-by=/etc/apt/keyrings/vendor.gpg] http://vendor.example/apt stable main\n",
    oneLine,
    [{ uri: "http://vendor.example/apt", suites: ["stable"] }]
  ],
  [
    "one-line: several options in the brackets",
    "deb [arch=amd64 signed-by=/etc/apt/keyrings/x.gpg] http://vendor.example/apt stable main\n",
    oneLine,
    [{ uri: "http://vendor.example/apt", suites: ["stable"] }]
  ],
  [
    "one-line: comments, deb-src, indentation and blank lines",
    `# a comment
# deb http://commented.example/debian bookworm main
deb http://archive.example/debian bookworm main contrib

deb-src http://archive.example/debian bookworm main
   deb http://security.example/debian-security bookworm-security main
\tdeb http://archive.example/debian bookworm-updates main # trailing comment
`,
    oneLine,
    [
      { uri: "http://archive.example/debian", suites: ["bookworm"] },
      { uri: "http://security.example/debian-security", suites: ["bookworm-security"] },
      { uri: "http://archive.example/debian", suites: ["bookworm-updates"] }
    ]
  ],
  [
    "one-line: a line without a suite is skipped",
    "deb http://archive.example/debian\n",
    oneLine,
    []
  ],
  [
    "one-line: CRLF line endings",
    "deb http://archive.example/debian bookworm main\r\ndeb http://security.example/debian-security bookworm-security main\r\n",
    oneLine,
    [
      { uri: "http://archive.example/debian", suites: ["bookworm"] },
      { uri: "http://security.example/debian-security", suites: ["bookworm-security"] }
    ]
  ],
  ["one-line: empty text", "", oneLine, []],
  [
    "one-line text read as deb822 finds no stanza fields",
    "deb http://archive.example/debian bookworm main\n",
    deb822,
    []
  ]
]

for (const [label, text, isDeb822, expected] of cases) {
  t.same(parseAptSources(text, isDeb822), expected, label)
}
