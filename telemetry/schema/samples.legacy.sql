-- telemetry_samples for old ClickHouse servers (tested on Debian's 18.16): no DateTime64, no CODEC,
-- no TTL, no LowCardinality by default. Same column names and insert order as samples.modern.sql;
-- `ts` has second resolution here (ts_ms keeps the milliseconds). Retention is the operator's job
-- (ALTER TABLE ... DROP PARTITION), see telemetry/README.md.
CREATE TABLE IF NOT EXISTS telemetry_samples
(
    robot_id             String,
    fleet_id             String,
    ts                   DateTime DEFAULT toDateTime(intDiv(ts_ms, 1000)),
    ts_ms                Int64,
    received_at_ms       Int64,
    lat                  Float64,
    lon                  Float64,
    elevation_m          Float64,
    pose_x_m             Float64,
    pose_y_m             Float64,
    pose_z_m             Float64,
    heading_deg          Float64,
    speed_mps            Float64,
    yaw_rate_dps         Float64,
    battery_pct          Float32,
    voltage_v            Float32,
    charging             UInt8,
    mode                 String,
    estop                UInt8,
    gps_fix              Int32,
    mission_run_id       String,
    mission_state        String,
    progress_pct         Float32,
    step_index           Int32,
    remaining_distance_m Float64,
    eta_s                Float64,
    health_level         Enum8('unspecified' = 0, 'ok' = 1, 'warn' = 2, 'error' = 3),
    faults               Array(String),
    cpu_temp_c           Float32,
    map_id               String,
    load_count           Int32,
    load_ids             Array(String),
    load_types           Array(String),
    load_weight_kg       Float32
)
ENGINE = MergeTree
PARTITION BY toYYYYMMDD(ts)
ORDER BY (fleet_id, robot_id, ts)
SETTINGS index_granularity = 8192
