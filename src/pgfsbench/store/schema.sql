-- Schema version 2 (store/version.py); PRAGMA user_version is set when it is created.
CREATE TABLE IF NOT EXISTS campaign (
    id TEXT PRIMARY KEY,
    plan_name TEXT NOT NULL,
    plan_json TEXT NOT NULL,
    host_json TEXT NOT NULL,
    pgfsbench_version TEXT NOT NULL,
    started REAL NOT NULL,
    ended REAL,
    status TEXT NOT NULL,  -- running, ok, partial, failed, interrupted, killed
    schedule_json TEXT,  -- repetitions: order, seed, fresh, and why each cell stopped
    uuid TEXT NOT NULL UNIQUE,  -- its key in every store, across hosts (id is for people)
    schema_version INTEGER NOT NULL  -- the layout it was written with (store/version.py)
);
CREATE TABLE IF NOT EXISTS targets (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    position INTEGER NOT NULL,
    kind TEXT NOT NULL,
    fs TEXT NOT NULL,
    spec_json TEXT NOT NULL,
    status TEXT NOT NULL,  -- pending, running, ok, skipped, failed, interrupted
    reason TEXT,
    provenance_json TEXT
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    target_id INTEGER NOT NULL REFERENCES targets(id),
    workload TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',  -- what tells it from its siblings (clients=8)
    repetition INTEGER NOT NULL DEFAULT 1,  -- its round, from 1; 0: a settling run, not counted
    params_json TEXT NOT NULL,
    status TEXT NOT NULL,  -- running, ok, failed, interrupted, superseded (run again on resume), redone (disturbed: run again in its round)
    error TEXT,
    started REAL NOT NULL,
    ended REAL
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    value REAL,  -- NULL: unsupported on this target, not zero
    unit TEXT NOT NULL,
    higher_is_better INTEGER,  -- NULL: no direction (a count, a size)
    note TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, name)
);
CREATE TABLE IF NOT EXISTS series (
    run_id INTEGER NOT NULL REFERENCES runs(id),
    name TEXT NOT NULL,
    unit TEXT NOT NULL,
    t REAL NOT NULL,
    value REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS series_run ON series(run_id, name, t);
CREATE TABLE IF NOT EXISTS artifacts (
    id INTEGER PRIMARY KEY,
    target_id INTEGER REFERENCES targets(id),
    run_id INTEGER REFERENCES runs(id),
    kind TEXT NOT NULL,
    path TEXT NOT NULL,  -- relative to the results directory
    command_json TEXT,
    exit_code INTEGER
);
