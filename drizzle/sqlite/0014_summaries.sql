-- Summaries of the events, kept by the writer in the same transaction as the events (store/sqlite/
-- summaries.ts), so a question over months reads hours, not events. Hand-written: WITHOUT ROWID
-- tables (the key is the table) that drizzle-kit cannot express; declared for queries in
-- src/store/sqlite/manual-tables.ts.
--
-- Events per hour (since 1970, UTC) of each channel and name; the name is '' for a project whose
-- names are too many to keep apart (summary_keys).
CREATE TABLE `event_counts` (
	`project_id` integer NOT NULL,
	`hour` integer NOT NULL,
	`channel_id` integer NOT NULL,
	`event` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY (`project_id`, `hour`, `channel_id`, `event`)
) WITHOUT ROWID;
--> statement-breakpoint
-- Events per hour with each value of a tag (values as event_tags holds them).
CREATE TABLE `tag_counts` (
	`project_id` integer NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`hour` integer NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY (`project_id`, `key`, `value`, `hour`)
) WITHOUT ROWID;
--> statement-breakpoint
-- Who was active when: per user and UTC month (year * 12 + month from 0), a bit per day of the month
-- in `days` and, per day, a bit per hour in d0 ... d30; of every event (kind 0), of the events with
-- a tag's value (kind 1: key, value) or of one name (kind 2: value). A question of distinct users
-- reads a row per user and month, however many events each had.
CREATE TABLE `activity` (
	`project_id` integer NOT NULL,
	`kind` integer NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`month` integer NOT NULL,
	`user_id` text NOT NULL,
	`days` integer NOT NULL DEFAULT 0,
	`d0` integer NOT NULL DEFAULT 0,
	`d1` integer NOT NULL DEFAULT 0,
	`d2` integer NOT NULL DEFAULT 0,
	`d3` integer NOT NULL DEFAULT 0,
	`d4` integer NOT NULL DEFAULT 0,
	`d5` integer NOT NULL DEFAULT 0,
	`d6` integer NOT NULL DEFAULT 0,
	`d7` integer NOT NULL DEFAULT 0,
	`d8` integer NOT NULL DEFAULT 0,
	`d9` integer NOT NULL DEFAULT 0,
	`d10` integer NOT NULL DEFAULT 0,
	`d11` integer NOT NULL DEFAULT 0,
	`d12` integer NOT NULL DEFAULT 0,
	`d13` integer NOT NULL DEFAULT 0,
	`d14` integer NOT NULL DEFAULT 0,
	`d15` integer NOT NULL DEFAULT 0,
	`d16` integer NOT NULL DEFAULT 0,
	`d17` integer NOT NULL DEFAULT 0,
	`d18` integer NOT NULL DEFAULT 0,
	`d19` integer NOT NULL DEFAULT 0,
	`d20` integer NOT NULL DEFAULT 0,
	`d21` integer NOT NULL DEFAULT 0,
	`d22` integer NOT NULL DEFAULT 0,
	`d23` integer NOT NULL DEFAULT 0,
	`d24` integer NOT NULL DEFAULT 0,
	`d25` integer NOT NULL DEFAULT 0,
	`d26` integer NOT NULL DEFAULT 0,
	`d27` integer NOT NULL DEFAULT 0,
	`d28` integer NOT NULL DEFAULT 0,
	`d29` integer NOT NULL DEFAULT 0,
	`d30` integer NOT NULL DEFAULT 0,
	PRIMARY KEY (`project_id`, `kind`, `key`, `value`, `month`, `user_id`)
) WITHOUT ROWID;
--> statement-breakpoint
-- The values each tag key (kind 1) and the event names (kind 2, key '') have had, up to the limit
-- past which they are not summarized (store/summary/deltas.ts, MAX_VALUES): `n` counts them.
CREATE TABLE `summary_keys` (
	`project_id` integer NOT NULL,
	`kind` integer NOT NULL,
	`key` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY (`project_id`, `kind`, `key`)
) WITHOUT ROWID;
--> statement-breakpoint
CREATE TABLE `summary_values` (
	`project_id` integer NOT NULL,
	`kind` integer NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	PRIMARY KEY (`project_id`, `kind`, `key`, `value`)
) WITHOUT ROWID;
--> statement-breakpoint
-- Projects whose summaries are being built from their events (the server does it in the background,
-- a step at a time: store/sqlite/summaries.ts); questions about them read the events meanwhile. A
-- project without a row here has its summaries up to date. `through`: the events counted, by id (-1:
-- what the project had is being cleared first); `counted`: all of them (the writer counts the next);
-- `active_*`: who was active, marked from the events up to active_through in the order of the
-- users' index, up to (active_user, active_ts, active_id); `active_done`: all of them. Every project
-- that exists when this migration runs starts here.
CREATE TABLE `summary_builds` (
	`project_id` integer PRIMARY KEY NOT NULL,
	`through` integer NOT NULL DEFAULT 0,
	`counted` integer NOT NULL DEFAULT 0,
	`active_through` integer,
	`active_user` text,
	`active_ts` integer,
	`active_id` integer,
	`active_done` integer NOT NULL DEFAULT 0
);
--> statement-breakpoint
INSERT INTO `summary_builds` (`project_id`, `through`, `active_through`)
SELECT `id`, 0, (SELECT coalesce(max(`id`), 0) FROM `events`) FROM `projects`;
