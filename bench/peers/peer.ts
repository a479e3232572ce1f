// What a benchmark needs from a cache under test, whatever it is.
export interface Peer {
  readonly name: string
  /** URL of `path` in the repository named `repository` */
  readonly urlFor: (repository: string, path: string) => string
  /** root of the process tree whose memory is measured */
  readonly pid: number
  readonly stop: () => Promise<void>
}
