// Memory held in incomplete frames, across every connection of one server (SPEC §2.1: a frame is
// at most 1 MiB; §2.3: a server bounds what peers can make it hold). The line reader caps one
// connection at 1 MiB, but many connections each holding most of a frame add up: 250 sockets at
// 1 MiB each is 250 MB held for the whole slow-peer timeout. So each connection may hold a small
// partial frame of its own (`freePerConnection`, enough for every ordinary request), and the bytes
// of larger partial frames are drawn from one pool shared by the server's connections. A
// connection whose frame cannot draw what it needs is refused (`limit`) and closed; the pool is
// never exceeded, and ordinary small frames never depend on it.

export interface PartialPool {
  /** The connection `holder` now holds `bytes` of incomplete frame: whether that fits. On false
   * the holder keeps what it held before and is expected to close. */
  readonly hold: (holder: object, bytes: number) => boolean
  /** The holder is gone: what it drew returns to the pool. */
  readonly release: (holder: object) => void
  /** Bytes drawn from the pool now (above the free allowances). */
  readonly drawn: () => number
}

export interface PartialPoolOptions {
  /** Bytes of partial frames above the free allowances, across all connections. Default 16 MiB. */
  readonly maxBytes?: number
  /** Bytes of partial frame each connection holds without drawing. Default 64 KiB. */
  readonly freePerConnection?: number
}

export const partialPool = (options: PartialPoolOptions = {}): PartialPool => {
  const max = Math.max(0, Math.floor(options.maxBytes ?? 16 * 1024 * 1024))
  const free = Math.max(0, Math.floor(options.freePerConnection ?? 64 * 1024))
  const draws = new Map<object, number>()
  let drawn = 0
  return {
    drawn: () => drawn,
    hold: (holder, bytes) => {
      const before = draws.get(holder) ?? 0
      const want = Math.max(0, bytes - free)
      if (want === before) return true
      if (want > before && drawn - before + want > max) return false
      drawn += want - before
      if (want === 0) draws.delete(holder)
      else draws.set(holder, want)
      return true
    },
    release: (holder) => {
      drawn -= draws.get(holder) ?? 0
      draws.delete(holder)
    }
  }
}
