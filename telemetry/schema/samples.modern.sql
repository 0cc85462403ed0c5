-- telemetry_samples for ClickHouse 21.x and later (chdb 3.x embeds 26.x): one row per robot sample.
-- Placeholders filled by src/telemetry/store/schema.ts: {retention_days}.
-- `ts` is computed from `ts_ms` (DEFAULT) so the gateway's row encoders never write it.
CREATE TABLE IF NOT EXISTS telemetry_samples
(
    robot_id             LowCardinality(String),
    fleet_id             LowCardinality(String),
    ts                   DateTime64(3, 'UTC') DEFAULT fromUnixTimestamp64Milli(ts_ms, 'UTC') CODEC(DoubleDelta, ZSTD(1)),
    ts_ms                Int64 CODEC(DoubleDelta, ZSTD(1)),
    received_at_ms       Int64 CODEC(DoubleDelta, ZSTD(1)),
    lat                  Float64 CODEC(Gorilla, ZSTD(1)),
    lon                  Float64 CODEC(Gorilla, ZSTD(1)),
    elevation_m          Float64 CODEC(Gorilla, ZSTD(1)),
    pose_x_m             Float64 CODEC(Gorilla, ZSTD(1)),
    pose_y_m             Float64 CODEC(Gorilla, ZSTD(1)),
    pose_z_m             Float64 CODEC(Gorilla, ZSTD(1)),
    heading_deg          Float64 CODEC(Gorilla, ZSTD(1)),
    speed_mps            Float64 CODEC(Gorilla, ZSTD(1)),
    yaw_rate_dps         Float64 CODEC(Gorilla, ZSTD(1)),
    battery_pct          Float32 CODEC(Gorilla, ZSTD(1)),
    voltage_v            Float32 CODEC(Gorilla, ZSTD(1)),
    charging             UInt8,
    mode                 LowCardinality(String),
    estop                UInt8,
    gps_fix              Int32 CODEC(T64, ZSTD(1)),
    mission_run_id       String CODEC(ZSTD(1)),
    mission_state        LowCardinality(String),
    progress_pct         Float32 CODEC(Gorilla, ZSTD(1)),
    step_index           Int32 CODEC(T64, ZSTD(1)),
    remaining_distance_m Float64 CODEC(Gorilla, ZSTD(1)),
    eta_s                Float64 CODEC(Gorilla, ZSTD(1)),
    health_level         Enum8('unspecified' = 0, 'ok' = 1, 'warn' = 2, 'error' = 3),
    faults               Array(LowCardinality(String)),
    cpu_temp_c           Float32 CODEC(Gorilla, ZSTD(1)),
    map_id               LowCardinality(String),
    load_count           Int32 CODEC(T64, ZSTD(1)),
    load_ids             Array(String) CODEC(ZSTD(1)),
    load_types           Array(LowCardinality(String)),
    load_weight_kg       Float32 CODEC(Gorilla, ZSTD(1))
)
ENGINE = MergeTree
PARTITION BY toYYYYMMDD(ts)
ORDER BY (fleet_id, robot_id, ts)
TTL toDateTime(ts) + INTERVAL {retention_days} DAY
SETTINGS index_granularity = 8192
