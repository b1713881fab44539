//! Cron windows (see issue: cron).
