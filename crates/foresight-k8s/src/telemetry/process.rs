//! The standard `process_*` series every Prometheus client library exports (CPU time,
//! memory, file descriptors, threads, start time), read from `/proc/self` at each scrape.
//! Off Linux, or when `/proc` cannot be read, the series are left out rather than faked.

use std::fmt;

use procfs::process::{LimitValue, Process};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;

/// Collects `process_*` at scrape time.
#[derive(Debug, Default)]
pub struct ProcessCollector;

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), fmt::Error> {
        let Ok(me) = Process::myself() else {
            return Ok(());
        };
        if let Ok(stat) = me.stat() {
            let ticks = procfs::ticks_per_second().max(1) as f64;
            let cpu = (stat.utime + stat.stime) as f64 / ticks;
            counter(
                &mut encoder,
                "process_cpu_seconds",
                "Total user and system CPU time spent in seconds",
                cpu,
            )?;
            gauge(
                &mut encoder,
                "process_resident_memory_bytes",
                "Resident memory size in bytes",
                stat.rss as f64 * procfs::page_size() as f64,
            )?;
            gauge(
                &mut encoder,
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes",
                stat.vsize as f64,
            )?;
            gauge(
                &mut encoder,
                "process_threads",
                "Number of OS threads in the process",
                stat.num_threads as f64,
            )?;
            if let Ok(boot) = procfs::boot_time_secs() {
                gauge(
                    &mut encoder,
                    "process_start_time_seconds",
                    "Start time of the process since unix epoch in seconds",
                    boot as f64 + stat.starttime as f64 / ticks,
                )?;
            }
        }
        if let Ok(n) = me.fd_count() {
            gauge(
                &mut encoder,
                "process_open_fds",
                "Number of open file descriptors",
                n as f64,
            )?;
        }
        if let Ok(limits) = me.limits() {
            if let LimitValue::Value(n) = limits.max_open_files.soft_limit {
                gauge(
                    &mut encoder,
                    "process_max_fds",
                    "Maximum number of open file descriptors",
                    n as f64,
                )?;
            }
        }
        Ok(())
    }
}

fn gauge(encoder: &mut DescriptorEncoder, name: &str, help: &str, v: f64) -> fmt::Result {
    ConstGauge::new(v).encode(encoder.encode_descriptor(name, help, None, MetricType::Gauge)?)
}

fn counter(encoder: &mut DescriptorEncoder, name: &str, help: &str, v: f64) -> fmt::Result {
    ConstCounter::new(v).encode(encoder.encode_descriptor(name, help, None, MetricType::Counter)?)
}
