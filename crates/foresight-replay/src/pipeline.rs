//! The metrics pipeline: what metrics-server (and the custom and external metrics APIs) would
//! report to the controller at a given instant.
//!
//! Every `scrape` seconds a scrape is taken; it becomes visible `lag` seconds later and stays
//! the latest until the next one. A scrape at `T` reports each pod's average usage over
//! `[T - window, T]`: the pod's share of the load while it was ready, nothing while it was
//! starting. A pod appears in scrapes only once it has run for a whole window (metrics-server
//! needs two readings of a container's counters before it can report a rate).

use foresight_core::autoscaler::{Autoscaler, MetricSource};
use foresight_core::metrics::{
    ContainerUsage, MetricData, PodResourceSample, PodValueSample, ValueSample,
};
use foresight_core::resources::ResourceList;
use jiff::SignedDuration;

use crate::cluster::{timestamp, Cluster};
use crate::config::ModelConfig;
use crate::meter::Meter;

/// How one metric of the spec is fed from the load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feed {
    /// CPU (Resource or ContainerResource): served by the shared PodMetrics list, in cores.
    Resource,
    /// A per-pod custom metric: each pod's share of the served load.
    PerPod,
    /// External and Prometheus metrics: the total served load.
    Total,
    /// An Object metric: the total served load, as one object's value.
    Object,
    /// A formula over this many inputs: the simulation has one load, so each input reads the
    /// total served load, as an External or Prometheus metric would.
    Inputs(usize),
}

impl Feed {
    /// The feed for each metric of `autoscaler` (the policy was checked to be simulable).
    pub fn for_autoscaler(autoscaler: &Autoscaler) -> Vec<Feed> {
        autoscaler
            .metrics
            .iter()
            .map(|m| match m.source {
                MetricSource::Resource { .. } | MetricSource::Unknown { .. } => Feed::Resource,
                MetricSource::Pods { .. } => Feed::PerPod,
                MetricSource::External { .. } | MetricSource::Prometheus { .. } => Feed::Total,
                MetricSource::Object { .. } => Feed::Object,
                MetricSource::Formula { ref formula, .. } => Feed::Inputs(formula.inputs.len()),
            })
            .collect()
    }
}

/// Turns the meter's integrals into the samples the controller reads.
#[derive(Clone, Debug)]
pub struct Pipeline {
    scrape: i64,
    window: i64,
    lag: i64,
    feeds: Vec<Feed>,
    needs_resource: bool,
    /// The scrape and pod list the observation currently shows.
    shown: Option<(i64, u64, usize)>,
    /// Scratch space for the pods' usage, reused from scrape to scrape.
    usage: Vec<i64>,
}

impl Pipeline {
    /// A pipeline with `config`'s timing, feeding `feeds`.
    pub fn new(config: &ModelConfig, feeds: Vec<Feed>) -> Self {
        Pipeline {
            scrape: config.scrape_interval_seconds.max(1),
            window: config.metric_window_seconds.max(1),
            lag: config.metric_lag_seconds.max(0),
            needs_resource: feeds.contains(&Feed::Resource),
            feeds,
            shown: None,
            usage: Vec::new(),
        }
    }

    /// How far back a scrape can look from now, seconds.
    pub fn lookback(&self) -> i64 {
        self.lag + self.scrape + self.window
    }

    /// The latest scrape visible at `now`.
    pub fn scrape_time(&self, now: i64) -> i64 {
        (now - self.lag).div_euclid(self.scrape) * self.scrape
    }

    /// Updates the cluster's observation to what is visible at `now`. Cheap when nothing
    /// changed since the last call (same scrape, same pods).
    pub fn refresh(&mut self, now: i64, cluster: &mut Cluster, meter: &Meter) {
        let scrape = self.scrape_time(now);
        let from = scrape - self.window;
        // Pods are in creation order, so those old enough to be scraped are a prefix.
        let sampled = cluster.lives().partition_point(|l| l.created <= from);
        let key = (scrape, cluster.generation, sampled);
        if self.shown == Some(key) {
            return;
        }
        let shown_count = cluster
            .observation()
            .resource_metrics
            .as_ref()
            .map_or(0, |s| s.len());
        let rebuild = self.shown.is_none_or(|(_, generation, count)| {
            generation != cluster.generation || count != sampled
        }) || (self.needs_resource && shown_count != sampled);
        self.shown = Some(key);

        let end = meter.at(scrape);
        let start = meter.at(from);
        let window = self.window as f64;
        let full_share = (end.per_pod - start.per_pod) / window;
        let total = (end.served - start.served) / window;
        // Each sampled pod's average usage over the window, in thousandths.
        let mut usage = std::mem::take(&mut self.usage);
        usage.clear();
        usage.extend(cluster.lives()[..sampled].iter().map(|l| {
            let share = if !l.ready || l.ready_at > scrape {
                0.0
            } else if l.ready_at <= from {
                full_share
            } else {
                (end.per_pod - l.per_pod_at_ready) / window
            };
            milli(share)
        }));
        let ts = timestamp(scrape);
        let window_duration = SignedDuration::from_secs(self.window);
        let pod_names: Vec<String> = if rebuild {
            cluster.pods()[..sampled]
                .iter()
                .map(|p| p.name.clone())
                .collect()
        } else {
            Vec::new()
        };
        let observation = cluster.observation_mut();

        let seen = Seen {
            pod_names: &pod_names,
            usage: &usage,
            total,
            ts,
            window: window_duration,
        };
        if self.needs_resource {
            if observation.resource_metrics.is_err() {
                observation.resource_metrics = Ok(Vec::new());
            }
            if let Ok(samples) = &mut observation.resource_metrics {
                seen.resource_samples(samples, rebuild);
            }
        }
        observation
            .metrics
            .resize_with(self.feeds.len(), Default::default);
        for (metric, feed) in observation.metrics.iter_mut().zip(&self.feeds) {
            seen.feed(feed, &mut metric.reading);
        }
        self.usage = usage;
    }
}

/// What one scrape saw: each sampled pod's usage (thousandths), the total served, and the
/// pod names when the pods changed (else empty).
struct Seen<'a> {
    pod_names: &'a [String],
    usage: &'a [i64],
    total: f64,
    ts: jiff::Timestamp,
    window: SignedDuration,
}

impl Seen<'_> {
    /// The resource metrics API's samples: rebuilt when the pods changed, else updated in
    /// place.
    fn resource_samples(&self, samples: &mut Vec<PodResourceSample>, rebuild: bool) {
        if rebuild {
            samples.clear();
            samples.extend(self.pod_names.iter().zip(self.usage).map(|(pod, &u)| {
                PodResourceSample {
                    pod: pod.clone(),
                    timestamp: self.ts,
                    window: self.window,
                    containers: vec![ContainerUsage {
                        name: "app".to_owned(),
                        usage: ResourceList::cpu(u),
                    }],
                }
            }));
        } else {
            for (sample, &u) in samples.iter_mut().zip(self.usage) {
                sample.timestamp = self.ts;
                if let Some(c) = sample.containers.first_mut() {
                    c.usage.cpu = Some(u);
                }
            }
        }
    }

    /// What a metric fed `feed` reads.
    fn feed(&self, feed: &Feed, data: &mut MetricData) {
        match feed {
            Feed::Resource => {}
            Feed::PerPod => {
                *data = MetricData::PodValues(
                    cluster_pod_names(self.pod_names, data)
                        .into_iter()
                        .zip(self.usage)
                        .map(|(pod, &value)| PodValueSample {
                            pod,
                            timestamp: self.ts,
                            window: Some(self.window),
                            value,
                        })
                        .collect(),
                )
            }
            Feed::Total => {
                *data = MetricData::Values(vec![ValueSample {
                    value: milli(self.total),
                    timestamp: self.ts,
                }])
            }
            Feed::Object => {
                *data = MetricData::Object(ValueSample {
                    value: milli(self.total),
                    timestamp: self.ts,
                })
            }
            Feed::Inputs(n) => {
                let total = MetricData::Values(vec![ValueSample {
                    value: milli(self.total),
                    timestamp: self.ts,
                }]);
                *data = MetricData::Inputs(vec![total; *n]);
            }
        }
    }
}

/// The pod names for a per-pod metric: the fresh list when the pods changed, else the names
/// the metric already holds.
fn cluster_pod_names(fresh: &[String], current: &MetricData) -> Vec<String> {
    if !fresh.is_empty() {
        return fresh.to_vec();
    }
    match current {
        MetricData::PodValues(samples) => samples.iter().map(|s| s.pod.clone()).collect(),
        _ => Vec::new(),
    }
}

/// A load in thousandths, as the metrics APIs report quantities.
fn milli(value: f64) -> i64 {
    foresight_core::rounding::round(value * 1000.0).max(0.0) as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::PodTemplate;

    fn setup() -> (Cluster, Meter, Pipeline) {
        let template = PodTemplate {
            capacity: 1.0,
            cpu_request_millicores: 1000,
            startup_delay: 60,
            startup_jitter: 0,
            startup_tail: 0,
        };
        let cluster = Cluster::new("web", 2, 0, template, 1);
        let config = ModelConfig::default();
        let pipeline = Pipeline::new(&config, vec![Feed::Resource, Feed::Total]);
        // Before the start, each of the two pods served 0.5.
        let meter = Meter::new(0, 15, pipeline.lookback(), 0.5, 1.0);
        (cluster, meter, pipeline)
    }

    fn cpu(cluster: &Cluster) -> Vec<(String, i64)> {
        cluster
            .observation()
            .resource_metrics
            .as_ref()
            .unwrap()
            .iter()
            .map(|s| (s.pod.clone(), s.containers[0].usage.cpu.unwrap()))
            .collect()
    }

    #[test]
    fn reports_each_ready_pods_share_averaged_over_the_window() {
        let (mut cluster, mut meter, mut pipeline) = setup();
        pipeline.refresh(0, &mut cluster, &meter);
        assert_eq!(
            cpu(&cluster),
            [("web-1".into(), 500), ("web-2".into(), 500)]
        );
        // 15 s at a load of 1.6 shared by two pods.
        meter.add(15, 2, 1.6);
        meter.reach(15);
        // Visible only from the next scrape on.
        pipeline.refresh(14, &mut cluster, &meter);
        assert_eq!(cpu(&cluster)[0].1, 500);
        pipeline.refresh(15, &mut cluster, &meter);
        assert_eq!(cpu(&cluster)[0].1, 800);
        let total = &cluster.observation().metrics[1].reading;
        assert!(
            matches!(total, MetricData::Values(v) if v[0].value == 1600),
            "{total:?}"
        );
    }

    #[test]
    fn a_new_pod_appears_after_a_window_and_reports_nothing_until_ready() {
        let (mut cluster, mut meter, mut pipeline) = setup();
        cluster.scale_to(3, 0, meter.now.per_pod);
        let mut t = 0;
        let mut seen = Vec::new();
        while t < 120 {
            pipeline.refresh(t, &mut cluster, &meter);
            seen.push((t, cpu(&cluster).len(), cpu(&cluster).get(2).map(|p| p.1)));
            let ready = cluster.ready_count();
            meter.add(15, ready, 1.5);
            t += 15;
            meter.reach(t);
            if cluster.next_ready() <= t {
                cluster.mark_ready(t, meter.now.per_pod);
            }
        }
        assert_eq!(seen[0], (0, 2, None));
        assert_eq!(seen[1], (15, 3, Some(0)));
        // Ready at 60: the scrape at 75 covers [60, 75], a whole window of its share.
        assert_eq!(seen[4], (60, 3, Some(0)));
        assert_eq!(seen[5], (75, 3, Some(500)));
    }
}
