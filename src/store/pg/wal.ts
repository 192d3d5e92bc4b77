// How far PostgreSQL's WAL is on disk, as this instance knows it. A batch of events committed
// without waiting for the disk (write_events, see writer.ts) is acknowledged once the WAL is on disk
// past its commit. Batches waiting at once share one check: it answers at once when the WAL is there
// already, else it commits a WAL message synchronously, which flushes everything before it (every
// waiting batch's commit with it): one flush for all of them.
import type { SQL } from "bun";

const FLUSHED = `SELECT (CASE WHEN pg_current_wal_flush_lsn() >= $1::pg_lsn THEN pg_current_wal_flush_lsn()
                  ELSE pg_logical_emit_message(true, 'signalboard', 'on disk') END)::text AS flushed`;

export class WalOnDisk {
  /** On disk up to here, at least. */
  private known = 0n;
  /** The furthest position a waiter wants. */
  private wanted = 0n;
  private checking: Promise<void> | null = null;

  constructor(private readonly sql: Pick<SQL, "unsafe">) {}

  /** Resolves once the WAL is on disk up to `wal` (as PostgreSQL writes a position: `16/B374D848`). */
  async wait(wal: string): Promise<void> {
    const want = position(wal);
    if (want > this.wanted) this.wanted = want;
    while (this.known < want) {
      this.checking ??= this.check().finally(() => (this.checking = null));
      await this.checking;
    }
  }

  private async check(): Promise<void> {
    const [{ flushed }] = (await this.sql.unsafe(FLUSHED, [text(this.wanted)])) as [{ flushed: string }];
    const reached = position(flushed);
    if (reached > this.known) this.known = reached;
  }
}

function position(wal: string): bigint {
  const [high, low] = wal.split("/");
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

function text(at: bigint): string {
  return `${(at >> 32n).toString(16).toUpperCase()}/${(at & 0xffffffffn).toString(16).toUpperCase()}`;
}
