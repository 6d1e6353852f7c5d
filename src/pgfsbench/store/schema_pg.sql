-- The PostgreSQL results store: the tables of a results.db (schema.sql), every one keyed
-- by the campaign's UUID, so campaigns from many hosts and directories share them.
-- JSON columns are jsonb (operators and indexes: provenance_json @> '{"fs": "xfs"}'),
-- times timestamptz; series.t stays seconds since its run started. A store made by an
-- older pgfsbench (json, epoch seconds) is brought to these types by views_pg.sql.
CREATE TABLE IF NOT EXISTS pgfsbench_schema (
    version integer NOT NULL  -- one row: store/version.py
);
CREATE TABLE IF NOT EXISTS campaign (
    uuid uuid PRIMARY KEY,
    id text NOT NULL,  -- the readable id (20261124-230842-1a2b3c), unique per host only
    schema_version integer NOT NULL,  -- the layout its results.db was written with
    plan_name text NOT NULL,
    plan_json jsonb NOT NULL,
    host_json jsonb NOT NULL,
    pgfsbench_version text NOT NULL,
    started timestamptz NOT NULL,
    ended timestamptz,
    status text NOT NULL,
    schedule_json jsonb,
    -- The store's own: where it came from and when.
    hostname text,
    machine_id text,
    results_dir text NOT NULL,  -- its artifacts stay there, on that host
    source_digest text NOT NULL,  -- what the directory held when imported
    imported_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS campaign_history ON campaign (machine_id, plan_name, started);
CREATE TABLE IF NOT EXISTS targets (
    campaign_uuid uuid NOT NULL REFERENCES campaign(uuid) ON DELETE CASCADE,
    id integer NOT NULL,
    name text NOT NULL,
    position integer NOT NULL,
    kind text NOT NULL,
    fs text NOT NULL,
    spec_json jsonb NOT NULL,
    status text NOT NULL,
    reason text,
    provenance_json jsonb,
    PRIMARY KEY (campaign_uuid, id),
    UNIQUE (campaign_uuid, name)
);
CREATE TABLE IF NOT EXISTS runs (
    campaign_uuid uuid NOT NULL,
    id integer NOT NULL,
    target_id integer NOT NULL,
    workload text NOT NULL,
    label text NOT NULL DEFAULT '',
    repetition integer NOT NULL DEFAULT 1,
    params_json jsonb NOT NULL,
    status text NOT NULL,
    error text,
    started timestamptz NOT NULL,
    ended timestamptz,
    PRIMARY KEY (campaign_uuid, id),
    FOREIGN KEY (campaign_uuid, target_id) REFERENCES targets ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS metrics (
    campaign_uuid uuid NOT NULL,
    run_id integer NOT NULL,
    seq integer NOT NULL,  -- the order it was recorded in (SQLite's rowid)
    name text NOT NULL,
    value double precision,
    unit text NOT NULL,
    higher_is_better integer,
    note text NOT NULL DEFAULT '',
    PRIMARY KEY (campaign_uuid, run_id, name),
    FOREIGN KEY (campaign_uuid, run_id) REFERENCES runs ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS series (
    campaign_uuid uuid NOT NULL,
    run_id integer NOT NULL,
    name text NOT NULL,
    unit text NOT NULL,
    t double precision NOT NULL,
    value double precision NOT NULL,
    FOREIGN KEY (campaign_uuid, run_id) REFERENCES runs ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS series_run ON series (campaign_uuid, run_id, name, t);
CREATE TABLE IF NOT EXISTS artifacts (
    campaign_uuid uuid NOT NULL REFERENCES campaign(uuid) ON DELETE CASCADE,
    id integer NOT NULL,
    target_id integer,
    run_id integer,
    kind text NOT NULL,
    path text NOT NULL,  -- relative to the campaign's results_dir
    command_json jsonb,
    exit_code integer,
    PRIMARY KEY (campaign_uuid, id)
);
