// What a format makes of a request path: content to cache (and how), an answer it gives itself,
// or an invalid request. Each format in src/protocols/<format> turns paths into these, purely.

/** how long a cached object is served before the upstream is asked again */
export type Freshness = "content" | "metadata" | "immutable"

export type ErrorCode =
  | "MANIFEST_UNKNOWN"
  | "BLOB_UNKNOWN"
  | "NAME_UNKNOWN"
  | "UNAUTHORIZED"
  | "TOOMANYREQUESTS"
  | "UNSUPPORTED"
  | "DIGEST_INVALID"
  | "NAME_INVALID"

export type Route =
  | {
    readonly kind: "cached"
    /** index key within the repository (two URLs for one object share it) */
    readonly key: string
    /** path below the upstream's base URL */
    readonly upstreamPath: string
    readonly freshness: Freshness
    /** the content must hash to this ("sha256:<hex>") or nothing is stored */
    readonly expectedDigest?: string | undefined
    /** request headers sent upstream (e.g. Accept for manifests) */
    readonly upstreamHeaders?: Readonly<Record<string, string>> | undefined
    /** revalidate with HEAD and compare this response header with the cached digest */
    readonly revalidateByHeadHeader?: string | undefined
    /** error code for an upstream 404, in formats that have codes */
    readonly notFoundCode?: ErrorCode | undefined
    /** response headers added to every reply of this route */
    readonly replyHeaders?: Readonly<Record<string, string>> | undefined
    /** name the Docker-Content-Digest header after the stored digest */
    readonly digestHeader?: boolean | undefined
    /**
     * For a narrower Accept: the default entry's key, used instead of `key` when the default's
     * media type is one of `acceptable` (most narrow clients accept what is already cached)
     */
    readonly sharedKey?: string | undefined
    readonly acceptable?: ReadonlyArray<string> | undefined
    /**
     * Metadata the format rewrites for the client (URLs pointing back at larder) and reads links
     * from: the name its FormatRules' `rewrite`/`links` are called with. Stored as the upstream
     * sent it; rewritten per client base URL when served.
     */
    readonly transform?: string | undefined
    /**
     * Content listed by metadata: the upstream URL, checksum and size come from the Link recorded
     * under `key` when the metadata was fetched. Without a link, `upstreamPath` is fetched unverified,
     * or, when it is empty, the request is refused with a hint to fetch the metadata first.
     */
    readonly linked?: boolean | undefined
  }
  | {
    readonly kind: "answer"
    readonly status: number
    readonly headers: Readonly<Record<string, string>>
    readonly body: string
  }
  | {
    readonly kind: "invalid"
    readonly status: number
    readonly message: string
    readonly code?: ErrorCode | undefined
  }

/**
 * What metadata says about content it lists: where the upstream serves it and what it must hash
 * to. Recorded when the metadata is fetched; used when the content is.
 */
export interface Link {
  /** index key of the content: the path below the repository that larder serves it at */
  readonly key: string
  /** absolute upstream URL */
  readonly url: string
  /** "sha256:<hex>", "sha512:<hex>" or "sha1:<hex>" */
  readonly digest?: string | undefined
  readonly size?: number | undefined
}

export interface RewriteContext {
  /** the repository's public base URL as this client reached it, without a trailing slash */
  readonly base: string
  /** the repository's upstream base URL */
  readonly remoteUrl: string
  /** the metadata's path below the repository */
  readonly path: string
}

export interface LinkContext {
  readonly remoteUrl: string
  /** the metadata's path below the repository */
  readonly path: string
  /** the stored metadata's file (for formats that stream big indexes) */
  readonly file: string
  readonly read: () => Promise<Buffer>
  /** another cached object of the repository by key (e.g. cargo's config.json), if cached */
  readonly cached: (key: string) => Promise<Buffer | undefined>
}

/** how error bodies look: plain text, the registry's JSON errors, or `{"error": ...}` (npm) */
export type ErrorStyle = "text" | "registry" | "json"

/** A format's rules for one repository (see formats.ts). */
export interface FormatRules {
  readonly classify: (method: string, path: string, accept?: string | undefined) => Route
  readonly errorStyle: ErrorStyle
  /** whether the client's query string is passed upstream (containerd adds ?ns= for the mirror) */
  readonly forwardQuery: boolean
  /** the metadata of a route with `transform`, rewritten for a client (URLs pointing at larder) */
  readonly rewrite?: (transform: string, body: Buffer, context: RewriteContext) => Buffer
  /** the transforms `rewrite` applies to, when not all (others are served as stored) */
  readonly rewrites?: ReadonlyArray<string>
  /** the links a route with `transform` publishes for the content it lists */
  readonly links?: (transform: string, context: LinkContext) => Promise<ReadonlyArray<Link>>
}
