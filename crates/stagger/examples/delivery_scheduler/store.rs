//! The SQLite table of deliveries.
//!
//! A row keeps what the schedule needs to be recomputed (`id`, `attempts`,
//! `first_failure_ms`) and, so that "what is due?" is one indexed query, the time it computed
//! (`next_attempt_ms`). Every change to a row is a single `UPDATE`, so a process killed at
//! any moment leaves each row either before or after an attempt, never in between.

use rusqlite::{Connection, OptionalExtension, params};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS deliveries (
    id               TEXT PRIMARY KEY,
    url              TEXT NOT NULL,
    payload          TEXT NOT NULL,
    status           TEXT NOT NULL DEFAULT 'pending', -- pending, delivered or failed
    attempts         INTEGER NOT NULL DEFAULT 0,      -- attempts made so far
    first_failure_ms INTEGER,                         -- unix ms; NULL until an attempt fails
    next_attempt_ms  INTEGER,                         -- unix ms; NULL once no longer pending
    last_error       TEXT
);
CREATE INDEX IF NOT EXISTS deliveries_due ON deliveries (status, next_attempt_ms);
";

/// One stored delivery.
#[derive(Clone, Debug)]
pub(crate) struct Delivery {
    pub(crate) id: String,
    pub(crate) url: String,
    pub(crate) payload: String,
    pub(crate) attempts: u32,
    pub(crate) first_failure_ms: Option<u64>,
    pub(crate) next_attempt_ms: Option<u64>,
}

/// What became of an attempt.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The receiver answered 2xx.
    Delivered,
    /// It failed; the next attempt is due at this unix-millisecond time.
    RetryAt(u64),
    /// It failed and was the last, for this reason.
    GaveUp(&'static str),
}

/// One attempt and its outcome.
#[derive(Debug)]
pub(crate) struct Attempt {
    pub(crate) id: String,
    /// 1 for the first attempt.
    pub(crate) attempt: u32,
    pub(crate) first_failure_ms: Option<u64>,
    pub(crate) outcome: Outcome,
    pub(crate) error: Option<String>,
}

/// The deliveries table.
pub(crate) struct Store {
    db: Connection,
}

impl Store {
    /// Opens (or creates) the database at `path` and creates the schema if it is missing.
    pub(crate) fn open(path: &str) -> rusqlite::Result<Self> {
        let db = Connection::open(path)?;
        // Another process (`list`, `enqueue`) may hold the lock for a moment.
        db.busy_timeout(std::time::Duration::from_secs(5))?;
        db.execute_batch(SCHEMA)?;
        Ok(Self { db })
    }

    /// Adds a delivery, due at once (at `now_ms`).
    pub(crate) fn enqueue(
        &self,
        id: &str,
        url: &str,
        payload: &str,
        now_ms: u64,
    ) -> rusqlite::Result<()> {
        self.db.execute(
            "INSERT INTO deliveries (id, url, payload, next_attempt_ms) VALUES (?1, ?2, ?3, ?4)",
            params![id, url, payload, to_sql(now_ms)],
        )?;
        Ok(())
    }

    /// Pending deliveries due at or before `now_ms`, earliest first.
    pub(crate) fn due(&self, now_ms: u64) -> rusqlite::Result<Vec<Delivery>> {
        self.select(Some(now_ms))
    }

    /// Every pending delivery, earliest first.
    pub(crate) fn pending(&self) -> rusqlite::Result<Vec<Delivery>> {
        self.select(None)
    }

    /// The earliest time any pending delivery is due.
    pub(crate) fn earliest_due(&self) -> rusqlite::Result<Option<u64>> {
        self.db
            .query_row(
                "SELECT MIN(next_attempt_ms) FROM deliveries WHERE status = 'pending'",
                [],
                |row| row.get(0),
            )
            .optional()
            .map(|min| from_sql(min.flatten()))
    }

    /// Records an attempt, in one statement. It applies only if the row is still pending and
    /// at the previous attempt, so a stale writer cannot overwrite newer state.
    pub(crate) fn record(&self, a: &Attempt) -> rusqlite::Result<()> {
        let (status, next_ms) = match a.outcome {
            Outcome::Delivered => ("delivered", None),
            Outcome::RetryAt(at) => ("pending", Some(at)),
            Outcome::GaveUp(_) => ("failed", None),
        };
        self.db.execute(
            "UPDATE deliveries SET status = ?3, attempts = ?2, first_failure_ms = ?4,
                 next_attempt_ms = ?5, last_error = ?6
             WHERE id = ?1 AND attempts = ?2 - 1 AND status = 'pending'",
            params![
                a.id,
                a.attempt,
                status,
                a.first_failure_ms.map(to_sql),
                next_ms.map(to_sql),
                a.error
            ],
        )?;
        Ok(())
    }

    /// Pending deliveries due by `due_by_ms`, or all of them.
    fn select(&self, due_by_ms: Option<u64>) -> rusqlite::Result<Vec<Delivery>> {
        let mut statement = self.db.prepare(
            "SELECT id, url, payload, attempts, first_failure_ms, next_attempt_ms FROM deliveries
             WHERE status = 'pending' AND (?1 IS NULL OR next_attempt_ms <= ?1)
             ORDER BY next_attempt_ms, id",
        )?;
        let rows = statement.query_map([due_by_ms.map(to_sql)], |row| {
            Ok(Delivery {
                id: row.get(0)?,
                url: row.get(1)?,
                payload: row.get(2)?,
                attempts: row.get(3)?,
                first_failure_ms: from_sql(row.get(4)?),
                next_attempt_ms: from_sql(row.get(5)?),
            })
        })?;
        rows.collect()
    }
}

/// SQLite integers are `i64`: unix milliseconds fit for the next 292 million years.
fn to_sql(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn from_sql(ms: Option<i64>) -> Option<u64> {
    ms.map(|ms| u64::try_from(ms).unwrap_or(0))
}
