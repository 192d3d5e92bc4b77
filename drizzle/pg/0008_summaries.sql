CREATE TABLE "activity" (
	"project_id" integer NOT NULL,
	"kind" integer NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	"month" integer NOT NULL,
	"user_id" text NOT NULL,
	"days" integer DEFAULT 0 NOT NULL,
	"d0" integer DEFAULT 0 NOT NULL,
	"d1" integer DEFAULT 0 NOT NULL,
	"d2" integer DEFAULT 0 NOT NULL,
	"d3" integer DEFAULT 0 NOT NULL,
	"d4" integer DEFAULT 0 NOT NULL,
	"d5" integer DEFAULT 0 NOT NULL,
	"d6" integer DEFAULT 0 NOT NULL,
	"d7" integer DEFAULT 0 NOT NULL,
	"d8" integer DEFAULT 0 NOT NULL,
	"d9" integer DEFAULT 0 NOT NULL,
	"d10" integer DEFAULT 0 NOT NULL,
	"d11" integer DEFAULT 0 NOT NULL,
	"d12" integer DEFAULT 0 NOT NULL,
	"d13" integer DEFAULT 0 NOT NULL,
	"d14" integer DEFAULT 0 NOT NULL,
	"d15" integer DEFAULT 0 NOT NULL,
	"d16" integer DEFAULT 0 NOT NULL,
	"d17" integer DEFAULT 0 NOT NULL,
	"d18" integer DEFAULT 0 NOT NULL,
	"d19" integer DEFAULT 0 NOT NULL,
	"d20" integer DEFAULT 0 NOT NULL,
	"d21" integer DEFAULT 0 NOT NULL,
	"d22" integer DEFAULT 0 NOT NULL,
	"d23" integer DEFAULT 0 NOT NULL,
	"d24" integer DEFAULT 0 NOT NULL,
	"d25" integer DEFAULT 0 NOT NULL,
	"d26" integer DEFAULT 0 NOT NULL,
	"d27" integer DEFAULT 0 NOT NULL,
	"d28" integer DEFAULT 0 NOT NULL,
	"d29" integer DEFAULT 0 NOT NULL,
	"d30" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "activity_project_id_kind_key_value_month_user_id_pk" PRIMARY KEY("project_id","kind","key","value","month","user_id")
);
--> statement-breakpoint
CREATE TABLE "event_counts" (
	"project_id" integer NOT NULL,
	"hour" integer NOT NULL,
	"channel_id" integer NOT NULL,
	"event" text NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "event_counts_project_id_hour_channel_id_event_pk" PRIMARY KEY("project_id","hour","channel_id","event")
);
--> statement-breakpoint
CREATE TABLE "summary_builds" (
	"project_id" integer PRIMARY KEY NOT NULL,
	"through" bigint DEFAULT 0 NOT NULL,
	"counted" integer DEFAULT 0 NOT NULL,
	"active_through" bigint,
	"active_user" text,
	"active_ts" bigint,
	"active_id" bigint,
	"active_done" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE TABLE "summary_keys" (
	"project_id" integer NOT NULL,
	"kind" integer NOT NULL,
	"key" text NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "summary_keys_project_id_kind_key_pk" PRIMARY KEY("project_id","kind","key")
);
--> statement-breakpoint
CREATE TABLE "summary_values" (
	"project_id" integer NOT NULL,
	"kind" integer NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	CONSTRAINT "summary_values_project_id_kind_key_value_pk" PRIMARY KEY("project_id","kind","key","value")
);
--> statement-breakpoint
CREATE TABLE "tag_counts" (
	"project_id" integer NOT NULL,
	"key" text NOT NULL,
	"value" text NOT NULL,
	"hour" integer NOT NULL,
	"n" integer NOT NULL,
	CONSTRAINT "tag_counts_project_id_key_value_hour_pk" PRIMARY KEY("project_id","key","value","hour")
);
--> statement-breakpoint
ALTER TABLE "activity" ADD CONSTRAINT "activity_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "event_counts" ADD CONSTRAINT "event_counts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "summary_builds" ADD CONSTRAINT "summary_builds_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "summary_keys" ADD CONSTRAINT "summary_keys_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "summary_values" ADD CONSTRAINT "summary_values_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tag_counts" ADD CONSTRAINT "tag_counts_project_id_projects_id_fk" FOREIGN KEY ("project_id") REFERENCES "public"."projects"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- What a set of events adds to the summaries (the same as store/summary/deltas.ts adds on SQLite),
-- as statements over `source`: a relation, such as a trigger's table of new rows, or a subquery of
-- events. `parts`: 'counts' (the counts, and the names and tag values seen), 'activity' (who was
-- active), or 'all'.
CREATE FUNCTION summary_statements(source text, parts text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE
  max_values constant integer := 1000;
  registry text;
  counts text;
  tags text;
  active text;
BEGIN
  -- The names and tag values seen, counted per key: a key with more than max_values is not summarized.
  registry := format($q$
    WITH e AS MATERIALIZED (SELECT project_id, event, tags FROM %1$s s),
    v AS (SELECT DISTINCT project_id, 2 AS kind, '' AS key, event AS value FROM e
          UNION SELECT DISTINCT e.project_id, 1, t.key, t.value FROM e CROSS JOIN LATERAL json_each_text(e.tags::json) t WHERE e.tags IS NOT NULL),
    fresh AS (
      INSERT INTO summary_values (project_id, kind, key, value)
      SELECT v.project_id, v.kind, v.key, v.value FROM v
       WHERE NOT EXISTS (SELECT 1 FROM summary_keys k WHERE k.project_id = v.project_id AND k.kind = v.kind AND k.key = v.key AND k.n > %2$s)
      ON CONFLICT DO NOTHING RETURNING project_id, kind, key)
    INSERT INTO summary_keys (project_id, kind, key, n) SELECT project_id, kind, key, count(*) FROM fresh GROUP BY 1, 2, 3
    ON CONFLICT (project_id, kind, key) DO UPDATE SET n = summary_keys.n + excluded.n$q$, source, max_values);
  counts := format($q$
    INSERT INTO event_counts (project_id, hour, channel_id, event, n)
    SELECT e.project_id, (e.ts / 3600000)::int, e.channel_id, CASE WHEN coalesce(k.n, 0) > %2$s THEN '' ELSE e.event END, count(*)
      FROM %1$s e LEFT JOIN summary_keys k ON k.project_id = e.project_id AND k.kind = 2 AND k.key = ''
     GROUP BY 1, 2, 3, 4
    ON CONFLICT (project_id, hour, channel_id, event) DO UPDATE SET n = event_counts.n + excluded.n$q$, source, max_values);
  tags := format($q$
    INSERT INTO tag_counts (project_id, key, value, hour, n)
    SELECT e.project_id, t.key, t.value, (e.ts / 3600000)::int, count(*)
      FROM %1$s e CROSS JOIN LATERAL json_each_text(e.tags::json) t
     WHERE e.tags IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM summary_keys k WHERE k.project_id = e.project_id AND k.kind = 1 AND k.key = t.key AND k.n > %2$s)
     GROUP BY 1, 2, 3, 4
    ON CONFLICT (project_id, key, value, hour) DO UPDATE SET n = tag_counts.n + excluded.n$q$, source, max_values);
  -- Per user and UTC month: a bit per day, and per day a bit per hour; of every event (kind 0), of
  -- each tag value (kind 1) and of each name (kind 2).
  active := format($q$
    INSERT INTO activity (project_id, kind, key, value, month, user_id, days, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14, d15, d16, d17, d18, d19, d20, d21, d22, d23, d24, d25, d26, d27, d28, d29, d30)
    SELECT project_id, kind, key, value, month, user_id, bit_or(1 << day),
               bit_or(CASE WHEN day = 0 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 1 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 2 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 3 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 4 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 5 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 6 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 7 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 8 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 9 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 10 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 11 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 12 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 13 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 14 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 15 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 16 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 17 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 18 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 19 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 20 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 21 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 22 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 23 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 24 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 25 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 26 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 27 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 28 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 29 THEN 1 << h ELSE 0 END),
               bit_or(CASE WHEN day = 30 THEN 1 << h ELSE 0 END)
      FROM (
        SELECT e.project_id, a.kind, a.key, a.value, e.user_id,
               (extract(year FROM c.d)::int * 12 + extract(month FROM c.d)::int - 1) AS month,
               extract(day FROM c.d)::int - 1 AS day, ((e.ts / 3600000) %% 24)::int AS h
          FROM %1$s e
          CROSS JOIN LATERAL (SELECT date '1970-01-01' + (e.ts / 86400000)::int AS d) c
          CROSS JOIN LATERAL (SELECT 0, '', '' UNION ALL SELECT 2, '', e.event
                              UNION ALL SELECT 1, t.key, t.value FROM json_each_text(coalesce(e.tags, '{}')::json) t) a(kind, key, value)
         WHERE e.user_id IS NOT NULL) x
     WHERE NOT EXISTS (SELECT 1 FROM summary_keys k WHERE k.project_id = x.project_id AND k.kind = x.kind AND k.key = x.key AND k.n > %2$s)
     GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (project_id, kind, key, value, month, user_id) DO UPDATE SET days = activity.days | excluded.days,
        d0 = activity.d0 | excluded.d0,
        d1 = activity.d1 | excluded.d1,
        d2 = activity.d2 | excluded.d2,
        d3 = activity.d3 | excluded.d3,
        d4 = activity.d4 | excluded.d4,
        d5 = activity.d5 | excluded.d5,
        d6 = activity.d6 | excluded.d6,
        d7 = activity.d7 | excluded.d7,
        d8 = activity.d8 | excluded.d8,
        d9 = activity.d9 | excluded.d9,
        d10 = activity.d10 | excluded.d10,
        d11 = activity.d11 | excluded.d11,
        d12 = activity.d12 | excluded.d12,
        d13 = activity.d13 | excluded.d13,
        d14 = activity.d14 | excluded.d14,
        d15 = activity.d15 | excluded.d15,
        d16 = activity.d16 | excluded.d16,
        d17 = activity.d17 | excluded.d17,
        d18 = activity.d18 | excluded.d18,
        d19 = activity.d19 | excluded.d19,
        d20 = activity.d20 | excluded.d20,
        d21 = activity.d21 | excluded.d21,
        d22 = activity.d22 | excluded.d22,
        d23 = activity.d23 | excluded.d23,
        d24 = activity.d24 | excluded.d24,
        d25 = activity.d25 | excluded.d25,
        d26 = activity.d26 | excluded.d26,
        d27 = activity.d27 | excluded.d27,
        d28 = activity.d28 | excluded.d28,
        d29 = activity.d29 | excluded.d29,
        d30 = activity.d30 | excluded.d30$q$, source, max_values);
  IF parts = 'counts' THEN
    RETURN ARRAY[registry, counts, tags];
  ELSIF parts = 'activity' THEN
    RETURN ARRAY[active];
  END IF;
  RETURN ARRAY[registry, counts, tags, active];
END $fn$;
--> statement-breakpoint
CREATE FUNCTION summarize(source text, parts text) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  statement text;
BEGIN
  FOREACH statement IN ARRAY summary_statements(source, parts) LOOP
    EXECUTE statement;
  END LOOP;
END $fn$;
--> statement-breakpoint
-- Every statement that inserts events adds them to the summaries of their projects, whatever
-- inserts them: each writer's batch in one go. A project whose summaries are being built (summary_builds:
-- store/sqlite/summaries.ts says how) has the counts of its new events added once its build counted
-- the rest, and their activity once what it had is cleared.
CREATE FUNCTION events_summarize() RETURNS trigger
LANGUAGE plpgsql AS $fn$
DECLARE
  statement text;
BEGIN
  FOREACH statement IN ARRAY summary_statements(
    '(SELECT n.* FROM new_events n WHERE NOT EXISTS (SELECT 1 FROM summary_builds b WHERE b.project_id = n.project_id AND b.counted = 0))', 'counts') LOOP
    EXECUTE statement;
  END LOOP;
  FOREACH statement IN ARRAY summary_statements(
    '(SELECT n.* FROM new_events n WHERE NOT EXISTS (SELECT 1 FROM summary_builds b WHERE b.project_id = n.project_id AND b.through < 0))', 'activity') LOOP
    EXECUTE statement;
  END LOOP;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER events_summaries AFTER INSERT ON events REFERENCING NEW TABLE AS new_events
  FOR EACH STATEMENT EXECUTE FUNCTION events_summarize();
--> statement-breakpoint
-- The projects that have events now get their summaries built in the background.
INSERT INTO summary_builds (project_id, through, active_through)
SELECT id, 0, (SELECT coalesce(max(id), 0) FROM events) FROM projects;
