// Liveness, readiness and metrics, for load balancers, install scripts and Prometheus.
import { StorageUnavailable } from "../errors.ts";
import type { Gauge } from "../metrics.ts";
import type { Edge } from "../http/edge.ts";
import { type Route, route } from "../http/routes.ts";
import { heldBytes } from "../http/sse.ts";
import type { Services } from "../services.ts";
import { ok } from "./views.ts";

export function healthRoutes(
  { version, config, fanout, notifier, metrics, health, dialect, alerts, checks }: Services,
  { streams }: Edge,
): Route[] {
  const started = Date.now();
  const writer = () => health.writerStats();
  const gauges: Gauge[] = [
    {
      name: "signalboard_writer_batches_total",
      help: "Write transactions committed since start.",
      value: () => writer().batches,
    },
    { name: "signalboard_writer_writes_total", help: "Writes committed since start.", value: () => writer().writes },
    {
      name: "signalboard_writer_last_batch_size",
      help: "Writes in the last committed transaction.",
      value: () => writer().lastBatchSize,
    },
    {
      name: "signalboard_writer_queue_depth",
      help: "Writes waiting for the next transaction.",
      value: () => writer().queueDepth,
    },
    {
      name: "signalboard_reads_running",
      help: "Expensive reads (searches, charts, the users list, histories) running now, off the process that acknowledges writes.",
      value: () => health.readStats().running,
    },
    {
      name: "signalboard_reads_waiting",
      help: "Expensive reads waiting for their turn.",
      value: () => health.readStats().waiting,
    },
    {
      name: "signalboard_read_timeouts_total",
      help: "Reads answered 503 query_timeout since start (out of budget, or too many waiting).",
      value: () => health.readStats().timeouts,
    },
    ...(dialect === "postgresql"
      ? [
          {
            name: "signalboard_writer_order_held_seconds_total",
            help: "Seconds this instance's write batches held the cluster-wide event order (one batch of all instances at a time: their sum per second near 1 is the cluster's write limit).",
            value: () => writer().orderHeldSeconds ?? 0,
          },
        ]
      : []),
    {
      name: "signalboard_sse_clients",
      help: "Open Server-Sent Events streams (dashboards and /v1/stream).",
      value: () => streams.size,
    },
    { name: "signalboard_sse_connections_total", help: "SSE streams opened since start.", value: () => streams.opened },
    {
      name: "signalboard_sse_held_bytes",
      help: "Bytes written to live streams that their clients have not taken yet (capped).",
      value: heldBytes,
    },
    {
      name: "signalboard_live_views",
      help: "Distinct live views open (streams showing the same view share one).",
      value: () => fanout.groupCount,
    },
    {
      name: "signalboard_live_flushes_total",
      help: "Flushes of live views since start (at most one per SIGNALBOARD_LIVE_INTERVAL).",
      value: () => fanout.flushes,
    },
    {
      name: "signalboard_notifications_pending",
      help: "Notifications queued and not yet delivered.",
      value: () => health.pendingNotifications(),
    },
    {
      name: "signalboard_notifications_delivered_total",
      help: "Notifications delivered since start.",
      value: () => notifier.stats.sent,
    },
    {
      name: "signalboard_alert_rounds_total",
      help: "Rounds of alert rule checks (and of checks' silence, on the same turn) this instance ran since start (one instance at a time runs them).",
      value: () => alerts.runner.stats.rounds,
    },
    {
      name: "signalboard_alert_rules_checked",
      help: "Alert rules checked in this instance's last round.",
      value: () => alerts.runner.stats.rules,
    },
    {
      name: "signalboard_alert_round_seconds",
      help: "How long this instance's last round of alert rule checks (and checks' silence) took.",
      value: () => alerts.runner.stats.lastRoundMs / 1000,
    },
    {
      name: "signalboard_check_round_changes_total",
      help: "Checks changed by this instance's rounds since start: down by silence or an unfinished start, a failure more counted, a notice held by a maintenance window told.",
      value: () => checks.silence.stats.changed,
    },
    {
      name: "signalboard_check_round_changes",
      help: "Checks changed by this instance's last round.",
      value: () => checks.silence.stats.lastChanged,
    },
    {
      name: "signalboard_events_last_id",
      help: "The id of the newest stored event.",
      value: () => health.lastEventId(),
    },
    {
      name: "process_resident_memory_bytes",
      help: "Resident memory of the process.",
      value: () => process.memoryUsage.rss(),
    },
    {
      name: "process_uptime_seconds",
      help: "Seconds since start.",
      value: () => Math.round((Date.now() - started) / 1000),
    },
  ];
  const routes: Route[] = [
    route({
      method: "GET",
      path: "/healthz",
      access: "none",
      doc: {
        summary: "Liveness",
        description: "Answers while the process runs.",
        example: { success: true, statusCode: 200, status: "ok", version },
      },
      handle: () => ok({ status: "ok", version }),
    }),
    route({
      method: "GET",
      path: "/readyz",
      access: "none",
      doc: {
        summary: "Readiness",
        description:
          "Also checks the database, named in `database` (sqlite or postgresql): 503 with Retry-After when it does not answer, or when writes fail for want of storage.",
        example: { success: true, statusCode: 200, status: "ready", version, database: "sqlite" },
      },
      async handle() {
        const readiness = await health.readiness();
        if (!readiness.ready) throw new StorageUnavailable(readiness.reason);
        return ok({ status: "ready", version, database: dialect });
      },
    }),
  ];
  if (config.metrics) {
    routes.push(
      route({
        method: "GET",
        path: "/metrics",
        access: "full",
        async handle() {
          return new Response(await metrics.render(gauges), {
            headers: { "Content-Type": "text/plain; version=0.0.4; charset=utf-8", "Cache-Control": "no-store" },
          });
        },
      }),
    );
  }
  return routes;
}
