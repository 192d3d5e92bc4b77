-- A batch of events (their columns as arrays, one element per event) and their tags (by the
-- event's position in the batch), written with ids from the event_ids counter, which the UPDATE
-- locks until the transaction ends: ids in commit order across every instance. Written by hand:
-- drizzle-kit does not make procedures. src/store/pg/events.ts (writeEvents) calls it.
--
-- With commit_now, the procedure is the whole batch: it commits the events without waiting for the
-- disk, so the cluster-wide order is held only while it runs, not for a disk flush (instances
-- writing at once do not queue behind each other's flushes), and answers in `wal` where the WAL
-- ended after its commit: the caller acknowledges the batch once the WAL is on disk up to there.
-- Without commit_now it runs inside the caller's transaction, which took the order first and
-- commits as usual. `held`: for how long it held the order, in microseconds (with commit_now).
CREATE PROCEDURE write_events(
  e_project integer[], e_channel integer[], e_name text[], e_description text[], e_icon text[], e_notify boolean[],
  e_parser text[], e_user text[], e_tags text[], e_ts bigint[], e_received bigint[], e_historical boolean[], e_search text[],
  t_event integer[], t_key text[], t_value text[],
  notify_channel text, commit_now boolean, INOUT last_event bigint DEFAULT NULL, INOUT wal pg_lsn DEFAULT NULL,
  INOUT held double precision DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
  n integer := cardinality(e_project);
  base bigint;
  ordered timestamptz;
BEGIN
  IF commit_now THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  UPDATE event_ids SET last_id = event_ids.last_id + n RETURNING event_ids.last_id - n INTO base;
  ordered := clock_timestamp();
  WITH r AS (
    SELECT * FROM unnest(e_project, e_channel, e_name, e_description, e_icon, e_notify, e_parser, e_user, e_tags, e_ts, e_received, e_historical, e_search)
      WITH ORDINALITY AS r(project_id, channel_id, event, description, icon, notify, parser, user_id, tags, ts, received_at, historical, search_text, i)
  ), written AS (
    INSERT INTO events (id, project_id, channel_id, event, description, icon, notify, parser, user_id, tags, ts, received_at, historical, search_text)
    SELECT base + r.i, r.project_id, r.channel_id, r.event, r.description, r.icon, r.notify, r.parser, r.user_id, r.tags, r.ts, r.received_at, r.historical, r.search_text
      FROM r
  )
  INSERT INTO event_tags (project_id, key, value, ts, event_id)
  SELECT r.project_id, t.key, t.value, r.ts, base + r.i
    FROM unnest(t_event, t_key, t_value) AS t(i, key, value) JOIN r ON r.i = t.i;
  last_event := base + n;
  IF notify_channel IS NOT NULL THEN
    PERFORM pg_notify(notify_channel, last_event::text);
  END IF;
  IF commit_now THEN
    COMMIT;
    held := extract(epoch FROM clock_timestamp() - ordered) * 1e6;
    wal := pg_current_wal_insert_lsn();
  END IF;
END $$;
