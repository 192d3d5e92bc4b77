// Liveness and readiness for load balancers and install scripts.
import { Elysia } from "elysia";
import type { Deps } from "../app.ts";
import { StorageUnavailable } from "../errors.ts";
import { assertCanRead } from "../domain/access.ts";
import type { Gauge } from "../metrics.ts";
import { heldBytes } from "../http/sse.ts";
import { ok } from "./views.ts";

export function healthApi({ store, version, config, guard, streams, fanout, notifier, metrics, health }: Deps) {
  const started = Date.now();
  const gauges: Gauge[] = [
    { name: "signalboard_writer_batches_total", help: "Write transactions committed since start.", value: () => store.writer.stats.batches },
    { name: "signalboard_writer_writes_total", help: "Writes committed since start.", value: () => store.writer.stats.writes },
    { name: "signalboard_writer_last_batch_size", help: "Writes in the last committed transaction.", value: () => store.writer.stats.lastBatchSize },
    { name: "signalboard_writer_queue_depth", help: "Writes waiting for the next transaction.", value: () => store.writer.stats.queueDepth },
    { name: "signalboard_sse_clients", help: "Open Server-Sent Events streams (dashboards and /v1/stream).", value: () => streams.size },
    { name: "signalboard_sse_connections_total", help: "SSE streams opened since start.", value: () => streams.opened },
    { name: "signalboard_sse_held_bytes", help: "Bytes written to live streams that their clients have not taken yet (capped).", value: heldBytes },
    { name: "signalboard_live_views", help: "Distinct live views open (streams showing the same view share one).", value: () => fanout.groupCount },
    { name: "signalboard_live_flushes_total", help: "Flushes of live views since start (at most one per SIGNALBOARD_LIVE_INTERVAL).", value: () => fanout.flushes },
    { name: "signalboard_notifications_pending", help: "Notifications queued and not yet delivered.", value: () => store.notifications.pendingCount() },
    { name: "signalboard_notifications_delivered_total", help: "Notifications delivered since start.", value: () => notifier.stats.sent },
    { name: "signalboard_events_last_id", help: "The id of the newest stored event.", value: () => store.events.lastId() },
    { name: "process_resident_memory_bytes", help: "Resident memory of the process.", value: () => process.memoryUsage.rss() },
    { name: "process_uptime_seconds", help: "Seconds since start.", value: () => Math.round((Date.now() - started) / 1000) },
  ];
  const app = new Elysia({ name: "api.health" });
  if (config.metrics) {
    app.get("/metrics", ({ request, server }) => {
      assertCanRead(guard.authenticate(request, server));
      return new Response(metrics.render(gauges), { headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store" } });
    });
  }
  return app
    .get("/healthz", () => ok({ status: "ok", version }))
    .get("/readyz", async () => {
      const readiness = await health.readiness();
      if (!readiness.ready) throw new StorageUnavailable(readiness.reason);
      return ok({ status: "ready", version });
    });
}
