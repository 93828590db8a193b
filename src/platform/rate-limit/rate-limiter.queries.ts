// The rate limiter's SQL (durable-object.ts), raw because the object is the hot path of every
// request: its tables are created in place (no Drizzle migrator on an object that starts for every
// new bucket key), and each statement is one constant string, so the runtime's cache of prepared
// statements serves it from the second call on. Bound values are positional (`?`).

// The tables. `counters`: one row per counter name and window; `seen`: row 1 the last real-time
// use, row 2 a longer idle time once a counter with longer windows was counted; the meter's units
// per service and month (`usage`) and per day (`daily`), each with a dirty mark until the roll-up
// wrote it; `months`: the months seeded from D1, with the team they belong to.
export const CREATE_COUNTERS =
  "CREATE TABLE IF NOT EXISTS counters (name TEXT NOT NULL, start INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (name, start))";
export const CREATE_SEEN = "CREATE TABLE IF NOT EXISTS seen (id INTEGER PRIMARY KEY, at INTEGER NOT NULL)";
export const CREATE_USAGE =
  "CREATE TABLE IF NOT EXISTS usage (service TEXT NOT NULL, period TEXT NOT NULL, used REAL NOT NULL, dirty INTEGER NOT NULL, PRIMARY KEY (service, period))";
export const CREATE_DAILY =
  "CREATE TABLE IF NOT EXISTS daily (day TEXT NOT NULL, service TEXT NOT NULL, used REAL NOT NULL, dirty INTEGER NOT NULL, PRIMARY KEY (day, service))";
export const CREATE_MONTHS = "CREATE TABLE IF NOT EXISTS months (period TEXT PRIMARY KEY, team_id TEXT NOT NULL)";

// Objects written before named counters kept one unnamed counter in `windows`.
/** Whether the legacy `windows` table exists (a row when it does). */
export const HAS_LEGACY_WINDOWS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'windows'";
/** Carries the legacy window's count over to the own counter (name ''). */
export const COPY_LEGACY_WINDOWS = "INSERT OR IGNORE INTO counters (name, start, count) SELECT '', start, count FROM windows";
export const DROP_LEGACY_WINDOWS = "DROP TABLE windows";

/** Notes real-time use (?: ms). */
export const TOUCH_SEEN = "INSERT OR REPLACE INTO seen (id, at) VALUES (1, ?)";
/** Keeps the longest idle time asked for (?: ms). */
export const KEEP_LONGER_IDLE = "INSERT INTO seen (id, at) VALUES (2, ?) ON CONFLICT DO UPDATE SET at = MAX(at, excluded.at)";
/** Both rows of `seen`. */
export const SELECT_SEEN = "SELECT id, at FROM seen";

// Seeding a month from D1: a seeded count never lowers one the object holds.
/** (service, period, used) */
export const SEED_USAGE = "INSERT INTO usage (service, period, used, dirty) VALUES (?, ?, ?, 0) ON CONFLICT DO UPDATE SET used = MAX(used, excluded.used)";
/** (day, service, used) */
export const SEED_DAILY = "INSERT INTO daily (day, service, used, dirty) VALUES (?, ?, ?, 0) ON CONFLICT DO UPDATE SET used = MAX(used, excluded.used)";
/** Finished months rolled up already (?: the first month kept). */
export const FORGET_OLD_USAGE = "DELETE FROM usage WHERE period < ? AND dirty = 0";
/** Finished days rolled up already (?: the first day kept). */
export const FORGET_OLD_DAILY = "DELETE FROM daily WHERE day < ? AND dirty = 0";
/** (period, team id) */
export const MARK_MONTH_SEEDED = "INSERT OR REPLACE INTO months (period, team_id) VALUES (?, ?)";
export const SELECT_SEEDED_PERIODS = "SELECT period FROM months";
export const SELECT_MONTHS = "SELECT period, team_id FROM months";

// Reading the month.
/** Units per service of a month (?: period). */
export const SELECT_MONTH_USAGE = "SELECT service, used FROM usage WHERE period = ?";
/** Units per day and service between two days (?: from, ?: until, exclusive). */
export const SELECT_MONTH_DAILY = "SELECT day, service, used FROM daily WHERE day >= ? AND day < ? AND used > 0 ORDER BY day, service";

// The roll-up to D1.
export const SELECT_DIRTY_USAGE = "SELECT service, period, used FROM usage WHERE dirty = 1";
export const SELECT_DIRTY_DAILY = "SELECT day, service, used FROM daily WHERE dirty = 1";
/** Clears the mark of a row still holding what was written (service, period, used). */
export const CLEAN_USAGE = "UPDATE usage SET dirty = 0 WHERE service = ? AND period = ? AND used = ?";
/** Clears the mark of a row still holding what was written (day, service, used). */
export const CLEAN_DAILY = "UPDATE daily SET dirty = 0 WHERE day = ? AND service = ? AND used = ?";
/** A row when anything is left to roll up. */
export const ANY_DIRTY = "SELECT 1 FROM usage WHERE dirty = 1 UNION ALL SELECT 1 FROM daily WHERE dirty = 1 LIMIT 1";

// A tally's reads and writes.
/** (name, start) */
export const SELECT_COUNT = "SELECT count FROM counters WHERE name = ? AND start = ?";
/** (service, period) */
export const SELECT_USED_IN_MONTH = "SELECT used FROM usage WHERE service = ? AND period = ?";
/** (day, service) */
export const SELECT_USED_ON_DAY = "SELECT used FROM daily WHERE day = ? AND service = ?";
/** (service, period, used), marked for the roll-up. */
export const WRITE_USAGE = "INSERT INTO usage (service, period, used, dirty) VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET used = excluded.used, dirty = 1";
/** (day, service, used), marked for the roll-up. */
export const WRITE_DAILY = "INSERT INTO daily (day, service, used, dirty) VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET used = excluded.used, dirty = 1";
/** (name, start, count) */
export const WRITE_COUNT = "INSERT INTO counters (name, start, count) VALUES (?, ?, ?) ON CONFLICT(name, start) DO UPDATE SET count = excluded.count";
/** A counter's older windows (name, start of the current one). */
export const DROP_OLDER_WINDOWS = "DELETE FROM counters WHERE name = ? AND start < ?";
/** Every client network's windows before the current one (?: its start): the counters named `ip:…` (NETWORK_PREFIX, buckets.ts) of a block's object, all of 60 s. */
export const DROP_OLDER_NETWORK_WINDOWS = "DELETE FROM counters WHERE name >= 'ip:' AND name < 'ip;' AND start < ?";
/** Every client network's daily counters before the current day (?: its start): the counters named `ipday:…` (NETWORK_DAY_PREFIX) of a block's object. */
export const DROP_OLDER_NETWORK_DAYS = "DELETE FROM counters WHERE name >= 'ipday:' AND name < 'ipday;' AND start < ?";
