-- The PostgreSQL store's reading layer (store layout 4, store/version.py): jsonb and
-- timestamptz columns, indexes for the documented queries, views of tidy rows a DBA, a
-- notebook or a Grafana panel queries in one line, the campaign's decisions as the tool
-- made them, and a comment on every table, view and column.
-- Run after schema_pg.sql, on a new store and on every older one, in the transaction
-- that records the layout: it adds (IF NOT EXISTS, CREATE OR REPLACE) and changes only
-- column types, so what an older pgfsbench wrote stays readable.

-- Layout 3: the JSON columns become jsonb (operators, GIN indexes) and the campaigns'
-- and runs' times timestamptz (layout 2 kept json text and seconds since the epoch).
-- The views over those columns are dropped first and made again below; a view or rule
-- of your own over them stops the change, with PostgreSQL's message naming it.
DO $$
DECLARE
    t record;
BEGIN
    FOR t IN
        SELECT table_name, string_agg(format(
                   'ALTER COLUMN %I TYPE %s USING %s', column_name,
                   CASE data_type WHEN 'json' THEN 'jsonb' ELSE 'timestamptz' END,
                   CASE data_type WHEN 'json' THEN format('%I::jsonb', column_name)
                       ELSE format('to_timestamp(%I)', column_name) END),
                   ', ' ORDER BY ordinal_position) AS changes
        FROM information_schema.columns
        WHERE table_schema = current_schema()
          AND table_name IN ('campaign', 'targets', 'runs', 'artifacts')
          AND (data_type = 'json'
               OR (data_type = 'double precision' AND column_name IN ('started', 'ended')))
        GROUP BY table_name
    LOOP
        DROP VIEW IF EXISTS target_provenance, verdicts, medians, counted_measurements,
            measurements, campaigns;
        EXECUTE format('ALTER TABLE %I %s', t.table_name, t.changes);
    END LOOP;
END
$$;

-- For the documented queries (docs/results.md): a metric by name over every campaign
-- (with what the medians read, so the heap need not be), a host's campaigns, a target
-- by name.
CREATE INDEX IF NOT EXISTS metrics_name ON metrics (name, campaign_uuid, run_id)
    INCLUDE (value, unit, higher_is_better);
CREATE INDEX IF NOT EXISTS campaign_host ON campaign (hostname, started);
CREATE INDEX IF NOT EXISTS targets_name ON targets (name);
-- A target by what its provenance holds: provenance_json @> '{"fs": "xfs"}'.
CREATE INDEX IF NOT EXISTS targets_provenance ON targets USING gin (provenance_json jsonb_path_ops);

-- When the tool's decisions were stored (NULL: imported before decisions were kept;
-- importing the directory again fills them).
ALTER TABLE campaign ADD COLUMN IF NOT EXISTS decided_at timestamptz;
ALTER TABLE campaign ADD COLUMN IF NOT EXISTS decided_by text;
ALTER TABLE pgfsbench_schema ADD COLUMN IF NOT EXISTS layout integer;

-- Verdicts are not computed in SQL: they are paired within rounds, sequential (looks
-- sharing alpha), held to one family over every comparison and kind of claim, and
-- decided against an equivalence margin; SQL would give other answers than the report.
-- So the import stores each finding as the tool made it: every contender against the
-- baseline on every metric, and on the headline metrics every other pair of targets.
CREATE TABLE IF NOT EXISTS decisions (
    campaign_uuid uuid NOT NULL REFERENCES campaign(uuid) ON DELETE CASCADE,
    workload text NOT NULL,
    label text NOT NULL,
    metric text NOT NULL,
    unit text NOT NULL,
    direction text NOT NULL,
    headline boolean NOT NULL,
    target text NOT NULL,
    baseline text NOT NULL,
    verdict text NOT NULL,
    reason text NOT NULL,
    centre double precision,
    baseline_centre double precision,
    n integer NOT NULL,
    baseline_n integer NOT NULL,
    ratio double precision,
    ratio_low double precision,
    ratio_high double precision,
    p_value double precision,
    paired boolean NOT NULL,
    decided_at_round integer,
    confidence double precision,
    detectable_change double precision,
    PRIMARY KEY (campaign_uuid, workload, label, metric, baseline, target)
);
-- Layout 3 (from layout 2): one finding per pair, the headline pairs without the
-- baseline too (so the key holds the reference), its interval's confidence and, for an
-- open pair, the smallest change it would likely have decided; the centre (a geometric
-- mean) where the median was; no more rounds estimate. The verdicts view over it is made
-- again below.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()
               AND table_name = 'decisions' AND column_name = 'rounds_needed') THEN
        DROP VIEW IF EXISTS verdicts;
        ALTER TABLE decisions DROP COLUMN rounds_needed;
        ALTER TABLE decisions RENAME COLUMN median TO centre;
        ALTER TABLE decisions RENAME COLUMN baseline_median TO baseline_centre;
        ALTER TABLE decisions ADD COLUMN confidence double precision;
        ALTER TABLE decisions ADD COLUMN detectable_change double precision;
        ALTER TABLE decisions DROP CONSTRAINT decisions_pkey;
        ALTER TABLE decisions ADD PRIMARY KEY (campaign_uuid, workload, label, metric, baseline, target);
    END IF;
END
$$;
CREATE INDEX IF NOT EXISTS decisions_verdict ON decisions (verdict, target);

CREATE OR REPLACE VIEW campaigns AS
SELECT c.uuid AS campaign_uuid, c.id AS campaign, c.hostname AS host, c.machine_id,
       c.plan_name AS plan, c.status, c.started, c.ended, c.pgfsbench_version, c.results_dir,
       c.imported_at, c.decided_at, c.decided_by
FROM campaign c;

CREATE OR REPLACE VIEW measurements AS
SELECT c.uuid AS campaign_uuid, c.id AS campaign, c.hostname AS host, c.machine_id,
       c.plan_name AS plan, t.name AS target, t.fs AS filesystem, t.kind AS target_kind,
       r.workload, r.label, r.params_json AS parameters,
       m.name AS metric, m.unit,
       CASE m.higher_is_better WHEN 1 THEN 'higher' WHEN 0 THEN 'lower' ELSE 'none' END
           AS direction,
       r.repetition AS round,
       -- A run a burst touched in part (disturb.trimmed, layout 4): its headline (named
       -- in the marker's note) as counted, over the seconds no burst touched.
       CASE WHEN tr.note = m.name THEN m.value * tr.value ELSE m.value END AS value,
       r.repetition = 0 AS settling, r.status AS run_status,
       -- As the statistics count (analysis/cells.py): settling and runs not ok left
       -- out, values that are no number (unsupported), runs disturbed by others' load
       -- that were kept (disturb.left_out; those run again are 'redone'), and of a run
       -- a burst touched in part every figure but its headline (disturb.trimmed).
       r.repetition <> 0 AND r.status = 'ok'
           AND m.value NOT IN ('NaN', 'Infinity', '-Infinity') IS TRUE
           AND NOT EXISTS (SELECT 1 FROM metrics d WHERE d.campaign_uuid = r.campaign_uuid
                           AND d.run_id = r.id AND d.name = 'disturb.left_out')
           AND (tr.note IS NULL OR tr.note = m.name) AS counted,
       r.id AS run_id, r.started AS run_started, r.ended AS run_ended,
       c.started AS campaign_started,
       c.status AS campaign_status
FROM metrics m
JOIN runs r ON r.campaign_uuid = m.campaign_uuid AND r.id = m.run_id
JOIN targets t ON t.campaign_uuid = r.campaign_uuid AND t.id = r.target_id
JOIN campaign c ON c.uuid = r.campaign_uuid
LEFT JOIN metrics tr ON tr.campaign_uuid = r.campaign_uuid AND tr.run_id = r.id
                    AND tr.name = 'disturb.trimmed';

CREATE OR REPLACE VIEW counted_measurements AS
SELECT * FROM measurements WHERE counted;

CREATE OR REPLACE VIEW medians AS
SELECT campaign_uuid, campaign, host, machine_id, plan, campaign_started, target,
       filesystem, workload, label, metric, unit, direction,
       count(*)::integer AS n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY value) AS median,
       min(value) AS min, max(value) AS max,
       -- the report's value: the geometric mean (NULL where a value is at or below
       -- zero: the report shows that metric's medians)
       CASE WHEN bool_and(value > 0) THEN exp(avg(ln(value))) END AS geometric_mean
FROM counted_measurements
GROUP BY campaign_uuid, campaign, host, machine_id, plan, campaign_started, target,
         filesystem, workload, label, metric, unit, direction;

CREATE OR REPLACE VIEW verdicts AS
SELECT d.campaign_uuid, c.id AS campaign, c.hostname AS host, c.machine_id,
       c.plan_name AS plan, c.started AS campaign_started,
       d.target, t.fs AS filesystem, d.baseline, d.workload, d.label, d.metric, d.unit,
       d.direction, d.headline, d.verdict, d.reason, d.centre, d.baseline_centre, d.n,
       d.baseline_n, d.ratio, d.ratio_low, d.ratio_high, d.confidence, d.p_value, d.paired,
       d.decided_at_round, d.detectable_change, c.decided_by
FROM decisions d
JOIN campaign c ON c.uuid = d.campaign_uuid
LEFT JOIN targets t ON t.campaign_uuid = d.campaign_uuid AND t.name = d.target;

-- How each target was made and run, as columns: the commands that made its filesystem
-- (mkfs, mke2fs; zpool and zfs create), the mount options as the kernel applied them
-- (/proc/self/mountinfo), the PostgreSQL that ran on it and its settings, the host.
CREATE OR REPLACE VIEW target_provenance AS
SELECT c.uuid AS campaign_uuid, c.id AS campaign, c.hostname AS host, c.machine_id,
       c.plan_name AS plan, c.started AS campaign_started,
       t.name AS target, t.position, t.kind AS target_kind, t.fs AS filesystem,
       t.status AS target_status, t.reason AS target_reason,
       p.doc ->> 'device' AS device, p.doc -> 'devices' AS devices,
       p.doc ->> 'log_device' AS log_device,
       made.mkfs, made.mkfs_argv,
       t.spec_json ->> 'mount' AS mount_options_asked,
       (SELECT string_agg(o, ',' ORDER BY n)
        FROM jsonb_array_elements_text(CASE jsonb_typeof(p.doc -> 'effective_mount_options')
                                       WHEN 'array' THEN p.doc -> 'effective_mount_options' END)
             WITH ORDINALITY AS e(o, n)) AS mount_options,
       p.doc -> 'mount_option_changes' AS mount_option_changes,
       p.doc ->> 'mount_point' AS mount_point,
       p.doc -> 'geometry' -> 'facts' AS geometry,
       p.doc -> 'os_settings' -> 'sysctls' AS sysctls_set,
       p.doc -> 'os_settings' -> 'queue' AS queue_set,
       p.doc ->> 'postgres_version' AS postgres_version,
       p.doc -> 'postgres_settings' AS postgres_settings,
       (p.doc ->> 'data_checksums')::boolean AS data_checksums,
       c.host_json ->> 'kernel' AS kernel, c.host_json ->> 'os' AS os,
       c.host_json ->> 'cpu' AS cpu, (c.host_json ->> 'cpus')::integer AS cpus,
       (c.host_json ->> 'memory_mb')::bigint AS memory_mb,
       t.provenance_json AS provenance,
       -- every durability and I/O setting the server ran with, defaults included
       -- (NULL for a campaign recorded before they were)
       p.doc -> 'postgres_io_settings' AS postgres_io_settings
FROM targets t
JOIN campaign c ON c.uuid = t.campaign_uuid
-- Only an object is read as one: a target that failed early has none.
CROSS JOIN LATERAL (
    SELECT CASE jsonb_typeof(t.provenance_json) WHEN 'object' THEN t.provenance_json
           ELSE '{}'::jsonb END AS doc
) p
LEFT JOIN LATERAL (
    SELECT string_agg(a.line, '; ' ORDER BY a.n) AS mkfs,
           jsonb_agg(a.argv ORDER BY a.n) AS mkfs_argv
    FROM (
        SELECT cmd.n, cmd.c -> 'argv' AS argv,
               (SELECT string_agg(w, ' ' ORDER BY i)
                FROM jsonb_array_elements_text(cmd.c -> 'argv') WITH ORDINALITY AS x(w, i))
                   AS line
        FROM jsonb_array_elements(CASE jsonb_typeof(p.doc -> 'commands')
                                  WHEN 'array' THEN p.doc -> 'commands' END)
             WITH ORDINALITY AS cmd(c, n)
        WHERE jsonb_typeof(cmd.c -> 'argv') = 'array'
          AND (regexp_replace(cmd.c -> 'argv' ->> 0, '^.*/', '') ~ '^(mkfs|mke2fs)'
               OR (regexp_replace(cmd.c -> 'argv' ->> 0, '^.*/', '') IN ('zpool', 'zfs')
                   AND cmd.c -> 'argv' ->> 1 = 'create'))
    ) a
) made ON true;

-- What each is, where a DBA looks for it (\d+ in psql, a client's tooltip).
COMMENT ON TABLE pgfsbench_schema IS 'The store''s layout: one row (pgfsbench''s store/version.py).';
COMMENT ON COLUMN pgfsbench_schema.version IS 'Version of the tables: 3 is results schema 2 in jsonb and timestamptz, which a pgfsbench reading up to 2 refuses (a newer one than the program reads is refused).';
COMMENT ON COLUMN pgfsbench_schema.layout IS 'The store''s own layer on the tables: 4 as 3, a run a burst touched in part counted as the statistics count it; 3 jsonb and timestamptz columns, indexes, views, comments, decisions; 2 the same over json and epoch seconds; NULL or 1 tables only.';

COMMENT ON TABLE campaign IS 'One row per campaign imported (pgfsbench import, run --store), keyed by its UUID. The campaigns view names its columns as the other views do.';
COMMENT ON COLUMN campaign.uuid IS 'The campaign''s key in every store and on every host.';
COMMENT ON COLUMN campaign.id IS 'Readable id (date-time-random), unique per host only.';
COMMENT ON COLUMN campaign.schema_version IS 'Results schema version its results.db was written with.';
COMMENT ON COLUMN campaign.plan_name IS 'Name of the plan it ran.';
COMMENT ON COLUMN campaign.plan_json IS 'The plan as run (jsonb).';
COMMENT ON COLUMN campaign.host_json IS 'Host facts: hostname, machine id, kernel, CPU, memory, devices (jsonb).';
COMMENT ON COLUMN campaign.pgfsbench_version IS 'pgfsbench version that ran it.';
COMMENT ON COLUMN campaign.started IS 'When it started.';
COMMENT ON COLUMN campaign.ended IS 'When it ended; NULL while running or if killed.';
COMMENT ON COLUMN campaign.status IS 'ok, partial, failed, running, interrupted or killed.';
COMMENT ON COLUMN campaign.schedule_json IS 'Round order, seed and why repetitions stopped (jsonb).';
COMMENT ON COLUMN campaign.hostname IS 'Host it ran on (from host_json).';
COMMENT ON COLUMN campaign.machine_id IS 'That host''s /etc/machine-id: the same machine across renames.';
COMMENT ON COLUMN campaign.results_dir IS 'Its results directory on the importing host; the artifacts stay there.';
COMMENT ON COLUMN campaign.source_digest IS 'Hash of what the directory held when imported: an unchanged directory is not imported again.';
COMMENT ON COLUMN campaign.imported_at IS 'When it was imported.';
COMMENT ON COLUMN campaign.decided_at IS 'When its decisions were stored; NULL: imported before decisions were kept (import it again).';
COMMENT ON COLUMN campaign.decided_by IS 'pgfsbench version that made the stored decisions.';

COMMENT ON TABLE targets IS 'Each filesystem variant a campaign provisioned (a loop image, block device or directory).';
COMMENT ON COLUMN targets.campaign_uuid IS 'Its campaign.';
COMMENT ON COLUMN targets.id IS 'Its id within the campaign.';
COMMENT ON COLUMN targets.name IS 'Its name in the plan (ext4, xfs-nobarrier...).';
COMMENT ON COLUMN targets.position IS 'Its place in the plan.';
COMMENT ON COLUMN targets.kind IS 'loop, device or directory.';
COMMENT ON COLUMN targets.fs IS 'Filesystem (ext4, xfs, btrfs, zfs...).';
COMMENT ON COLUMN targets.spec_json IS 'The plan''s entry for it: mkfs and mount options, sysctls, queue settings (jsonb).';
COMMENT ON COLUMN targets.status IS 'ok, skipped, failed or pending.';
COMMENT ON COLUMN targets.reason IS 'Why it was skipped or failed.';
COMMENT ON COLUMN targets.provenance_json IS 'How it was made: commands and output, geometry, device, sysctls, PostgreSQL version and settings (jsonb).';

COMMENT ON TABLE runs IS 'One workload run on one target in one round. Round 0 is settling (not counted); only status ok is counted.';
COMMENT ON COLUMN runs.campaign_uuid IS 'Its campaign.';
COMMENT ON COLUMN runs.id IS 'Its id within the campaign.';
COMMENT ON COLUMN runs.target_id IS 'Its target (targets.id in the same campaign).';
COMMENT ON COLUMN runs.workload IS 'Workload type (pgbench, fsync, fileio...).';
COMMENT ON COLUMN runs.label IS 'The measurement within a sweep (clients=8), or empty.';
COMMENT ON COLUMN runs.repetition IS 'Round: 0 settling (left out of every statistic), 1.. counted.';
COMMENT ON COLUMN runs.params_json IS 'The workload''s parameters (jsonb).';
COMMENT ON COLUMN runs.status IS 'ok, failed, interrupted, running, superseded (run again on resume) or redone (disturbed by other load on the machine: run again in its round, kept, never counted).';
COMMENT ON COLUMN runs.error IS 'Why it failed.';
COMMENT ON COLUMN runs.started IS 'When it started.';
COMMENT ON COLUMN runs.ended IS 'When it ended; NULL if it never did.';

COMMENT ON TABLE metrics IS 'Each figure a run measured. Query measurements or counted_measurements for tidy rows.';
COMMENT ON COLUMN metrics.campaign_uuid IS 'Its campaign.';
COMMENT ON COLUMN metrics.run_id IS 'Its run (runs.id in the same campaign).';
COMMENT ON COLUMN metrics.seq IS 'Order it was recorded in.';
COMMENT ON COLUMN metrics.name IS 'Stable dotted metric name (pgbench.tps).';
COMMENT ON COLUMN metrics.value IS 'The figure, in unit; NULL if not measured.';
COMMENT ON COLUMN metrics.unit IS 'Its unit (tps, ms, MB/s...).';
COMMENT ON COLUMN metrics.higher_is_better IS '1 higher is better, 0 lower is better, NULL informational (views say it as direction).';
COMMENT ON COLUMN metrics.note IS 'What the metric is when its name cannot say (a statement''s SQL).';

COMMENT ON TABLE series IS 'Per-second series of a run (tps, latency, CPU, I/O), timed from the run''s start.';
COMMENT ON COLUMN series.campaign_uuid IS 'Its campaign.';
COMMENT ON COLUMN series.run_id IS 'Its run.';
COMMENT ON COLUMN series.name IS 'Series name.';
COMMENT ON COLUMN series.unit IS 'Unit of value.';
COMMENT ON COLUMN series.t IS 'Seconds since the run started (runs.started + t * interval ''1 second'' is when).';
COMMENT ON COLUMN series.value IS 'The sample.';

COMMENT ON TABLE artifacts IS 'Files a campaign kept (tool outputs, commands), in its results directory.';
COMMENT ON COLUMN artifacts.campaign_uuid IS 'Its campaign.';
COMMENT ON COLUMN artifacts.id IS 'Its id within the campaign.';
COMMENT ON COLUMN artifacts.target_id IS 'The target it belongs to, if any.';
COMMENT ON COLUMN artifacts.run_id IS 'The run it belongs to, if any.';
COMMENT ON COLUMN artifacts.kind IS 'What it is (command, output...).';
COMMENT ON COLUMN artifacts.path IS 'Relative to the campaign''s results_dir.';
COMMENT ON COLUMN artifacts.command_json IS 'The command''s argument list (jsonb array), for a command''s output.';
COMMENT ON COLUMN artifacts.exit_code IS 'The command''s exit code.';

COMMENT ON TABLE decisions IS 'Each contender''s decision against the campaign''s baseline, as pgfsbench made it at import (paired, sequential, corrected; not recomputable in SQL). Query the verdicts view.';
COMMENT ON COLUMN decisions.campaign_uuid IS 'Its campaign.';
COMMENT ON COLUMN decisions.workload IS 'Workload type.';
COMMENT ON COLUMN decisions.label IS 'The measurement within a sweep, or empty.';
COMMENT ON COLUMN decisions.metric IS 'Metric name.';
COMMENT ON COLUMN decisions.unit IS 'Its unit.';
COMMENT ON COLUMN decisions.direction IS 'higher, lower (is better) or none.';
COMMENT ON COLUMN decisions.headline IS 'The metric its measurement''s verdict is about.';
COMMENT ON COLUMN decisions.target IS 'The contender.';
COMMENT ON COLUMN decisions.baseline IS 'The target it was compared with: the campaign''s baseline, or on a headline metric the other target of a pair (what the tiers rest on).';
COMMENT ON COLUMN decisions.verdict IS 'better, worse, different (no direction), equivalent, inconclusive or na.';
COMMENT ON COLUMN decisions.reason IS 'The finding in one sentence with its figures, as every output says it.';
COMMENT ON COLUMN decisions.centre IS 'Contender''s value over counted rounds: the geometric mean (the median where the metric has a value at or below zero), as the report shows it.';
COMMENT ON COLUMN decisions.baseline_centre IS 'Baseline''s value, likewise.';
COMMENT ON COLUMN decisions.n IS 'Contender''s counted values.';
COMMENT ON COLUMN decisions.baseline_n IS 'Baseline''s counted values.';
COMMENT ON COLUMN decisions.ratio IS 'Contender / baseline: the estimate the decision tested (paired: geometric mean of per-round ratios, on the rounds of the deciding look).';
COMMENT ON COLUMN decisions.ratio_low IS 'Low end of the ratio''s interval at the level of the decision (confidence).';
COMMENT ON COLUMN decisions.ratio_high IS 'High end of that interval.';
COMMENT ON COLUMN decisions.confidence IS 'The interval''s confidence (0.992 for 99.2%): alpha shared over the comparisons and looks.';
COMMENT ON COLUMN decisions.p_value IS 'The deciding test''s p as tested.';
COMMENT ON COLUMN decisions.paired IS 'Compared within rounds.';
COMMENT ON COLUMN decisions.decided_at_round IS 'Sequential: the round whose look decided it (the figure rests on rounds 1 to it).';
COMMENT ON COLUMN decisions.detectable_change IS 'Open headline pairs: the smallest change (0.12 = 12%) its rounds would likely (80%) have decided.';

COMMENT ON VIEW campaigns IS 'One row per campaign, times as timestamptz.';
COMMENT ON COLUMN campaigns.campaign_uuid IS 'The campaign''s key.';
COMMENT ON COLUMN campaigns.campaign IS 'Readable id (unique per host).';
COMMENT ON COLUMN campaigns.host IS 'Host it ran on.';
COMMENT ON COLUMN campaigns.machine_id IS 'That host''s /etc/machine-id.';
COMMENT ON COLUMN campaigns.plan IS 'Plan name.';
COMMENT ON COLUMN campaigns.status IS 'ok, partial, failed, running, interrupted or killed.';
COMMENT ON COLUMN campaigns.started IS 'Start.';
COMMENT ON COLUMN campaigns.ended IS 'End; NULL while running or if killed.';
COMMENT ON COLUMN campaigns.pgfsbench_version IS 'pgfsbench version that ran it.';
COMMENT ON COLUMN campaigns.results_dir IS 'Its results directory (artifacts).';
COMMENT ON COLUMN campaigns.imported_at IS 'When it was imported.';
COMMENT ON COLUMN campaigns.decided_at IS 'When its decisions were stored (NULL: import it again).';
COMMENT ON COLUMN campaigns.decided_by IS 'pgfsbench version that made the stored decisions.';

COMMENT ON VIEW measurements IS 'Every figure of every run, one tidy row each, settling and failed runs marked (counted = what the statistics use).';
COMMENT ON COLUMN measurements.campaign_uuid IS 'The campaign''s key.';
COMMENT ON COLUMN measurements.campaign IS 'Readable campaign id.';
COMMENT ON COLUMN measurements.host IS 'Host it ran on.';
COMMENT ON COLUMN measurements.machine_id IS 'That host''s /etc/machine-id.';
COMMENT ON COLUMN measurements.plan IS 'Plan name.';
COMMENT ON COLUMN measurements.target IS 'Target name in the plan.';
COMMENT ON COLUMN measurements.filesystem IS 'Target''s filesystem.';
COMMENT ON COLUMN measurements.target_kind IS 'loop, device or directory.';
COMMENT ON COLUMN measurements.workload IS 'Workload type.';
COMMENT ON COLUMN measurements.label IS 'The measurement within a sweep, or empty.';
COMMENT ON COLUMN measurements.parameters IS 'The workload''s parameters (jsonb: parameters->>''clients'').';
COMMENT ON COLUMN measurements.metric IS 'Metric name.';
COMMENT ON COLUMN measurements.unit IS 'Its unit.';
COMMENT ON COLUMN measurements.direction IS 'higher, lower (is better) or none.';
COMMENT ON COLUMN measurements.round IS 'Round: 0 settling, 1.. counted.';
COMMENT ON COLUMN measurements.value IS 'The figure as counted: of a run a burst touched in part (disturb.trimmed), its headline over the seconds no burst touched (the figure as measured is in the metrics table).';
COMMENT ON COLUMN measurements.settling IS 'Round 0: warms the target, left out of every statistic.';
COMMENT ON COLUMN measurements.run_status IS 'ok, failed, interrupted, running, superseded (run again on resume) or redone (disturbed by other load on the machine: run again in its round, kept, never counted).';
COMMENT ON COLUMN measurements.counted IS 'Counted by the statistics: not settling, run ok, a value, not disturbed by others'' load (disturb.left_out), and of a run a burst touched in part only its headline (disturb.trimmed).';
COMMENT ON COLUMN measurements.run_id IS 'The run''s id within the campaign.';
COMMENT ON COLUMN measurements.run_started IS 'When the run started.';
COMMENT ON COLUMN measurements.run_ended IS 'When the run ended.';
COMMENT ON COLUMN measurements.campaign_started IS 'When the campaign started.';
COMMENT ON COLUMN measurements.campaign_status IS 'The campaign''s status.';

COMMENT ON VIEW counted_measurements IS 'The measurements the statistics use: no settling round, runs that ended ok, none kept though disturbed by others'' load.';
COMMENT ON COLUMN counted_measurements.campaign_uuid IS 'The campaign''s key.';
COMMENT ON COLUMN counted_measurements.campaign IS 'Readable campaign id.';
COMMENT ON COLUMN counted_measurements.host IS 'Host it ran on.';
COMMENT ON COLUMN counted_measurements.machine_id IS 'That host''s /etc/machine-id.';
COMMENT ON COLUMN counted_measurements.plan IS 'Plan name.';
COMMENT ON COLUMN counted_measurements.target IS 'Target name in the plan.';
COMMENT ON COLUMN counted_measurements.filesystem IS 'Target''s filesystem.';
COMMENT ON COLUMN counted_measurements.target_kind IS 'loop, device or directory.';
COMMENT ON COLUMN counted_measurements.workload IS 'Workload type.';
COMMENT ON COLUMN counted_measurements.label IS 'The measurement within a sweep, or empty.';
COMMENT ON COLUMN counted_measurements.parameters IS 'The workload''s parameters (jsonb).';
COMMENT ON COLUMN counted_measurements.metric IS 'Metric name.';
COMMENT ON COLUMN counted_measurements.unit IS 'Its unit.';
COMMENT ON COLUMN counted_measurements.direction IS 'higher, lower (is better) or none.';
COMMENT ON COLUMN counted_measurements.round IS 'Round (1..).';
COMMENT ON COLUMN counted_measurements.value IS 'The figure.';
COMMENT ON COLUMN counted_measurements.settling IS 'Always false here.';
COMMENT ON COLUMN counted_measurements.run_status IS 'Always ok here.';
COMMENT ON COLUMN counted_measurements.counted IS 'Always true here.';
COMMENT ON COLUMN counted_measurements.run_id IS 'The run''s id within the campaign.';
COMMENT ON COLUMN counted_measurements.run_started IS 'When the run started.';
COMMENT ON COLUMN counted_measurements.run_ended IS 'When the run ended.';
COMMENT ON COLUMN counted_measurements.campaign_started IS 'When the campaign started.';
COMMENT ON COLUMN counted_measurements.campaign_status IS 'The campaign''s status.';

COMMENT ON VIEW medians IS 'Median and geometric mean of the counted rounds per campaign, target and metric, with n (the report shows the geometric mean; its findings are in verdicts).';
COMMENT ON COLUMN medians.campaign_uuid IS 'The campaign''s key.';
COMMENT ON COLUMN medians.campaign IS 'Readable campaign id.';
COMMENT ON COLUMN medians.host IS 'Host it ran on.';
COMMENT ON COLUMN medians.machine_id IS 'That host''s /etc/machine-id.';
COMMENT ON COLUMN medians.plan IS 'Plan name.';
COMMENT ON COLUMN medians.campaign_started IS 'When the campaign started.';
COMMENT ON COLUMN medians.target IS 'Target name in the plan.';
COMMENT ON COLUMN medians.filesystem IS 'Target''s filesystem.';
COMMENT ON COLUMN medians.workload IS 'Workload type.';
COMMENT ON COLUMN medians.label IS 'The measurement within a sweep, or empty.';
COMMENT ON COLUMN medians.metric IS 'Metric name.';
COMMENT ON COLUMN medians.unit IS 'Its unit.';
COMMENT ON COLUMN medians.direction IS 'higher, lower (is better) or none.';
COMMENT ON COLUMN medians.n IS 'Counted values (rounds).';
COMMENT ON COLUMN medians.median IS 'Their median.';
COMMENT ON COLUMN medians.min IS 'Their smallest.';
COMMENT ON COLUMN medians.max IS 'Their largest.';
COMMENT ON COLUMN medians.geometric_mean IS 'Their geometric mean: the value the report and every comparison use (NULL where a value is at or below zero: the report shows the medians of that metric).';

COMMENT ON VIEW verdicts IS 'Each contender''s decision against its campaign''s baseline, with the campaign''s host, plan and time.';
COMMENT ON COLUMN verdicts.campaign_uuid IS 'The campaign''s key.';
COMMENT ON COLUMN verdicts.campaign IS 'Readable campaign id.';
COMMENT ON COLUMN verdicts.host IS 'Host it ran on.';
COMMENT ON COLUMN verdicts.machine_id IS 'That host''s /etc/machine-id.';
COMMENT ON COLUMN verdicts.plan IS 'Plan name.';
COMMENT ON COLUMN verdicts.campaign_started IS 'When the campaign started.';
COMMENT ON COLUMN verdicts.target IS 'The contender.';
COMMENT ON COLUMN verdicts.filesystem IS 'The contender''s filesystem.';
COMMENT ON COLUMN verdicts.baseline IS 'The target it was compared with.';
COMMENT ON COLUMN verdicts.workload IS 'Workload type.';
COMMENT ON COLUMN verdicts.label IS 'The measurement within a sweep, or empty.';
COMMENT ON COLUMN verdicts.metric IS 'Metric name.';
COMMENT ON COLUMN verdicts.unit IS 'Its unit.';
COMMENT ON COLUMN verdicts.direction IS 'higher, lower (is better) or none.';
COMMENT ON COLUMN verdicts.headline IS 'The metric its measurement''s verdict is about.';
COMMENT ON COLUMN verdicts.verdict IS 'better, worse, different, equivalent, inconclusive or na.';
COMMENT ON COLUMN verdicts.reason IS 'The decision in one sentence with its figures.';
COMMENT ON COLUMN verdicts.centre IS 'Contender''s value (geometric mean, or median), as the report shows it.';
COMMENT ON COLUMN verdicts.baseline_centre IS 'Baseline''s value, likewise.';
COMMENT ON COLUMN verdicts.n IS 'Contender''s counted values.';
COMMENT ON COLUMN verdicts.baseline_n IS 'Baseline''s counted values.';
COMMENT ON COLUMN verdicts.ratio IS 'Contender / baseline.';
COMMENT ON COLUMN verdicts.ratio_low IS 'Low end of the ratio''s interval at the level of the decision.';
COMMENT ON COLUMN verdicts.ratio_high IS 'High end of that interval.';
COMMENT ON COLUMN verdicts.confidence IS 'The interval''s confidence.';
COMMENT ON COLUMN verdicts.p_value IS 'The deciding p as tested.';
COMMENT ON COLUMN verdicts.paired IS 'Compared within rounds.';
COMMENT ON COLUMN verdicts.decided_at_round IS 'Sequential: the round whose look decided it.';
COMMENT ON COLUMN verdicts.detectable_change IS 'Open headline pairs: the smallest change its rounds would likely have decided.';
COMMENT ON COLUMN verdicts.decided_by IS 'pgfsbench version that made the decision.';

COMMENT ON VIEW target_provenance IS 'One row per campaign target: how its filesystem was made and mounted, the PostgreSQL that ran on it, the host. provenance holds everything recorded.';
COMMENT ON COLUMN target_provenance.campaign_uuid IS 'The campaign''s key.';
COMMENT ON COLUMN target_provenance.campaign IS 'Readable campaign id.';
COMMENT ON COLUMN target_provenance.host IS 'Host it ran on.';
COMMENT ON COLUMN target_provenance.machine_id IS 'That host''s /etc/machine-id.';
COMMENT ON COLUMN target_provenance.plan IS 'Plan name.';
COMMENT ON COLUMN target_provenance.campaign_started IS 'When the campaign started.';
COMMENT ON COLUMN target_provenance.target IS 'Target name in the plan.';
COMMENT ON COLUMN target_provenance.position IS 'Its place in the plan.';
COMMENT ON COLUMN target_provenance.target_kind IS 'loop, device or directory.';
COMMENT ON COLUMN target_provenance.filesystem IS 'Filesystem the plan asked for.';
COMMENT ON COLUMN target_provenance.target_status IS 'ok, skipped, failed or pending.';
COMMENT ON COLUMN target_provenance.target_reason IS 'Why it was skipped or failed.';
COMMENT ON COLUMN target_provenance.device IS 'The block device its filesystem was made on (a loop device for an image).';
COMMENT ON COLUMN target_provenance.devices IS 'Every device under it (jsonb array: several for RAID, btrfs or ZFS over devices).';
COMMENT ON COLUMN target_provenance.log_device IS 'Its external journal or log device, if any.';
COMMENT ON COLUMN target_provenance.mkfs IS 'The commands that made the filesystem, each argv joined by spaces, ''; '' between (mkfs; for ZFS zpool create; zfs create). NULL for a directory target.';
COMMENT ON COLUMN target_provenance.mkfs_argv IS 'Those commands'' argument lists, exactly (jsonb array of arrays).';
COMMENT ON COLUMN target_provenance.mount_options_asked IS 'Mount options the plan asked for.';
COMMENT ON COLUMN target_provenance.mount_options IS 'Mount options as the kernel applied them (/proc/self/mountinfo, comma-separated).';
COMMENT ON COLUMN target_provenance.mount_option_changes IS 'Options asked for that the kernel changed or dropped (jsonb).';
COMMENT ON COLUMN target_provenance.mount_point IS 'Where it was mounted.';
COMMENT ON COLUMN target_provenance.geometry IS 'Filesystem geometry as its tool reported it (xfs_info, dumpe2fs...; jsonb).';
COMMENT ON COLUMN target_provenance.sysctls_set IS 'Sysctls pgfsbench set for it (jsonb).';
COMMENT ON COLUMN target_provenance.queue_set IS 'Block queue settings pgfsbench set for it (jsonb).';
COMMENT ON COLUMN target_provenance.postgres_version IS 'PostgreSQL version that ran on it.';
COMMENT ON COLUMN target_provenance.postgres_settings IS 'PostgreSQL settings as the server reported them (jsonb: postgres_settings->>''shared_buffers'').';
COMMENT ON COLUMN target_provenance.data_checksums IS 'Whether the cluster had data checksums.';
COMMENT ON COLUMN target_provenance.kernel IS 'Host kernel release.';
COMMENT ON COLUMN target_provenance.os IS 'Host operating system.';
COMMENT ON COLUMN target_provenance.cpu IS 'Host CPU model.';
COMMENT ON COLUMN target_provenance.cpus IS 'Host CPU count.';
COMMENT ON COLUMN target_provenance.memory_mb IS 'Host memory, MB.';
COMMENT ON COLUMN target_provenance.provenance IS 'Everything recorded about the target (targets.provenance_json).';
COMMENT ON COLUMN target_provenance.postgres_io_settings IS 'Every durability and I/O setting the server ran with, defaults included (fsync, synchronous_commit, full_page_writes, wal_sync_method, wal_level, data_checksums, io_method, ...); NULL for campaigns recorded before they were.';
