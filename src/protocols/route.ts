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
