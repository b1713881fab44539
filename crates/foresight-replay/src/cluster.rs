//! The modelled cluster: one workload's pods, how they start and stop, and the Kubernetes view
//! of them that the controller would list (phase, `Ready` condition, start time, requests).
//!
//! A pod is created by a scale-up, runs without serving (Ready=False) for the start-up delay,
//! then becomes ready and serves an equal share of the load, up to its capacity. A scale-down
//! deletes pods at once, the not-yet-ready ones first and then the newest, as a ReplicaSet
//! picks them.

use foresight_api::status::ConditionStatus;
use foresight_core::decision::Observation;
use foresight_core::pods::{Container, Pod, PodPhase, ReadyCondition};
use foresight_core::proposals::Scale;
use foresight_core::resources::ResourceList;
use jiff::Timestamp;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How pods of the workload behave.
#[derive(Clone, Debug, PartialEq)]
pub struct PodTemplate {
    /// Load one ready pod can serve.
    pub capacity: f64,
    /// CPU request, millicores.
    pub cpu_request_millicores: i64,
    /// Seconds from creation to ready.
    pub startup_delay: i64,
    /// Up to this many extra seconds, uniformly drawn per pod.
    pub startup_jitter: i64,
    /// Mean of an exponentially distributed extra delay per pod (at most ten times it).
    pub startup_tail: i64,
}

/// What the model knows about a pod that Kubernetes does not show.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PodLife {
    /// Unix seconds of creation (also its `startTime`).
    pub created: i64,
    /// Unix seconds at which it becomes ready.
    pub ready_at: i64,
    /// Whether the model has passed `ready_at`.
    pub ready: bool,
    /// The meter's per-pod integral when it became ready (see [`crate::meter`]).
    pub per_pod_at_ready: f64,
}

/// The workload's pods, in creation order, with what the controller observes of them
/// alongside: the pod list and scale here, the metrics filled in by [`crate::pipeline`].
#[derive(Clone, Debug)]
pub struct Cluster {
    template: PodTemplate,
    rng: ChaCha8Rng,
    prefix: String,
    lives: Vec<PodLife>,
    /// What the controller observes; its pods are in the order of `lives`.
    observation: Observation,
    ready: usize,
    next_ready: i64,
    next_number: u64,
    /// Pods created by scale-ups (the initial pods are not counted).
    pub pods_started: u64,
    /// Bumped whenever pods are created or deleted, so that cached views know to rebuild.
    pub generation: u64,
}

/// A timestamp from Unix seconds; the simulation's clock stays far inside jiff's range.
pub fn timestamp(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).unwrap_or(Timestamp::UNIX_EPOCH)
}

impl Cluster {
    /// A cluster at `now` with `replicas` pods that have been ready for a day.
    pub fn new(name: &str, replicas: i32, now: i64, template: PodTemplate, seed: u64) -> Self {
        let mut cluster = Cluster {
            template,
            rng: ChaCha8Rng::seed_from_u64(seed),
            prefix: format!("{name}-"),
            lives: Vec::new(),
            observation: Observation {
                scale: Ok(Scale {
                    spec_replicas: 0,
                    status_replicas: 0,
                    // Policy names need not be label values ("predictive+cron"): every
                    // modelled workload carries the same label.
                    selector: "app=simulated".to_owned(),
                }),
                ..Observation::default()
            },
            ready: 0,
            next_ready: i64::MAX,
            next_number: 0,
            pods_started: 0,
            generation: 0,
        };
        // The same parsing as every shell, so a selector the model could not parse would be
        // InvalidSelector here too.
        cluster.observation.parse_selector();
        let long_ago = now - 86_400;
        for _ in 0..replicas.max(0) {
            cluster.create(long_ago, long_ago);
            if let Some(last) = cluster.lives.last_mut() {
                last.ready = true;
            }
            if let Some(pod) = cluster.observation.pods.last_mut() {
                pod.ready = Some(ReadyCondition {
                    status: ConditionStatus::True,
                    last_transition_time: timestamp(long_ago),
                });
            }
            cluster.ready += 1;
        }
        cluster.next_ready = i64::MAX;
        cluster.sync_scale();
        cluster
    }

    /// The scale subresource follows the pod count: pods are created as soon as it changes.
    fn sync_scale(&mut self) {
        let replicas = self.replicas();
        if let Ok(scale) = &mut self.observation.scale {
            scale.spec_replicas = replicas;
            scale.status_replicas = replicas;
        }
    }

    /// What the controller observes.
    pub fn observation(&self) -> &Observation {
        &self.observation
    }

    /// What the controller observes, for the metrics pipeline and the forecaster to fill in.
    pub fn observation_mut(&mut self) -> &mut Observation {
        &mut self.observation
    }

    /// The pods as the controller lists them.
    pub fn pods(&self) -> &[Pod] {
        &self.observation.pods
    }

    /// Pods that exist (what the scale subresource reports).
    pub fn replicas(&self) -> i32 {
        i32::try_from(self.observation.pods.len()).unwrap_or(i32::MAX)
    }

    /// Pods that are ready.
    pub fn ready_count(&self) -> usize {
        self.ready
    }

    /// Load the ready pods can serve.
    pub fn ready_capacity(&self) -> f64 {
        self.ready as f64 * self.template.capacity
    }

    /// The pods' model-only state, in the order of [`Cluster::pods`].
    pub fn lives(&self) -> &[PodLife] {
        &self.lives
    }

    /// The template pods are made from.
    pub fn template(&self) -> &PodTemplate {
        &self.template
    }

    /// The next instant a pod becomes ready (`i64::MAX` when none is starting).
    pub fn next_ready(&self) -> i64 {
        self.next_ready
    }

    fn create(&mut self, created: i64, ready_at: i64) {
        self.next_number += 1;
        self.lives.push(PodLife {
            created,
            ready_at,
            ready: false,
            per_pod_at_ready: 0.0,
        });
        self.observation.pods.push(Pod {
            name: format!("{}{}", self.prefix, self.next_number),
            phase: PodPhase::Running,
            ready: Some(ReadyCondition {
                status: ConditionStatus::False,
                last_transition_time: timestamp(created),
            }),
            start_time: Some(timestamp(created)),
            deletion_timestamp: None,
            containers: vec![Container {
                name: "app".to_owned(),
                requests: ResourceList::cpu(self.template.cpu_request_millicores),
            }],
            ..Default::default()
        });
        self.next_ready = self.next_ready.min(ready_at);
        self.generation += 1;
    }

    /// Scales to `replicas` at `now`: creates pods that start up, or deletes pods at once.
    /// `per_pod_now` is the meter's per-pod integral now, for pods ready at once.
    pub fn scale_to(&mut self, replicas: i32, now: i64, per_pod_now: f64) {
        let target = usize::try_from(replicas.max(0)).unwrap_or(0);
        while self.observation.pods.len() < target {
            let jitter = if self.template.startup_jitter > 0 {
                self.rng.random_range(0..=self.template.startup_jitter)
            } else {
                0
            };
            let tail = if self.template.startup_tail > 0 {
                // Inverse transform sampling of an exponential with the given mean.
                let u: f64 = self.rng.random_range(0.0..1.0);
                let mean = self.template.startup_tail as f64;
                ((-(1.0 - u).ln()) * mean).min(10.0 * mean).round() as i64
            } else {
                0
            };
            let ready_at = now + self.template.startup_delay + jitter + tail;
            self.create(now, ready_at);
            self.pods_started += 1;
            if ready_at <= now {
                // No start-up delay: ready at once.
                self.mark_ready(now, per_pod_now);
            }
        }
        while self.observation.pods.len() > target {
            // A ReplicaSet deletes not-ready pods before ready ones, newer before older.
            let victim = self
                .lives
                .iter()
                .rposition(|l| !l.ready)
                .unwrap_or(self.lives.len() - 1);
            let life = self.lives.remove(victim);
            self.observation.pods.remove(victim);
            if life.ready {
                self.ready -= 1;
            }
            self.generation += 1;
        }
        self.next_ready = self
            .lives
            .iter()
            .filter(|l| !l.ready)
            .map(|l| l.ready_at)
            .min()
            .unwrap_or(i64::MAX);
        self.sync_scale();
    }

    /// Marks every pod whose start-up is over at `now` ready; `per_pod` is the meter's
    /// per-pod integral at that instant.
    pub fn mark_ready(&mut self, now: i64, per_pod: f64) {
        let mut next = i64::MAX;
        for (life, pod) in self.lives.iter_mut().zip(self.observation.pods.iter_mut()) {
            if life.ready {
                continue;
            }
            if life.ready_at <= now {
                life.ready = true;
                life.per_pod_at_ready = per_pod;
                pod.ready = Some(ReadyCondition {
                    status: ConditionStatus::True,
                    last_transition_time: timestamp(life.ready_at),
                });
                self.ready += 1;
            } else {
                next = next.min(life.ready_at);
            }
        }
        self.next_ready = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(delay: i64, jitter: i64) -> PodTemplate {
        PodTemplate {
            capacity: 2.0,
            cpu_request_millicores: 500,
            startup_delay: delay,
            startup_jitter: jitter,
            startup_tail: 0,
        }
    }

    #[test]
    fn a_long_tail_delays_some_pods_much_more_than_the_mean_and_repeats_by_seed() {
        let tailed = PodTemplate {
            startup_tail: 60,
            ..template(30, 0)
        };
        let delays = |seed| {
            let mut c = Cluster::new("web", 0, 0, tailed.clone(), seed);
            c.scale_to(400, 0, 0.0);
            c.lives().iter().map(|l| l.ready_at).collect::<Vec<i64>>()
        };
        let d = delays(7);
        assert_eq!(d, delays(7), "the same seed, the same start-ups");
        assert!(d.iter().all(|&t| (30..=30 + 600).contains(&t)), "{d:?}");
        let mean = d.iter().map(|&t| (t - 30) as f64).sum::<f64>() / d.len() as f64;
        assert!((45.0..75.0).contains(&mean), "mean tail {mean}");
        // An exponential tail: about e^-3 ≈ 5% of pods wait more than three means.
        let long = d.iter().filter(|&&t| t - 30 > 180).count();
        assert!((5..=40).contains(&long), "{long} of 400 over 3 means");
    }

    #[test]
    fn new_pods_serve_only_after_the_startup_delay() {
        let mut c = Cluster::new("web", 2, 1000, template(60, 0), 1);
        assert_eq!((c.replicas(), c.ready_count()), (2, 2));
        assert_eq!(c.ready_capacity(), 4.0);
        c.scale_to(4, 1000, 0.0);
        assert_eq!((c.replicas(), c.ready_count()), (4, 2));
        assert_eq!(c.next_ready(), 1060);
        assert_eq!(c.pods_started, 2);
        let fresh = &c.pods()[3];
        assert_eq!(fresh.start_time, Some(timestamp(1000)));
        assert_eq!(fresh.ready.map(|r| r.status), Some(ConditionStatus::False));
        c.mark_ready(1060, 5.0);
        assert_eq!(c.ready_count(), 4);
        assert_eq!(c.next_ready(), i64::MAX);
        let ready = c.pods()[3].ready.unwrap();
        assert_eq!(ready.status, ConditionStatus::True);
        assert_eq!(ready.last_transition_time, timestamp(1060));
        assert_eq!(c.lives()[3].per_pod_at_ready, 5.0);
    }

    #[test]
    fn scale_down_removes_starting_pods_first_then_the_newest() {
        let mut c = Cluster::new("web", 3, 0, template(60, 0), 1);
        c.scale_to(5, 10, 0.0);
        let names = |c: &Cluster| c.pods().iter().map(|p| p.name.clone()).collect::<Vec<_>>();
        c.scale_to(4, 20, 0.0);
        assert_eq!(names(&c), ["web-1", "web-2", "web-3", "web-4"]);
        assert_eq!(c.ready_count(), 3);
        c.scale_to(2, 20, 0.0);
        assert_eq!(names(&c), ["web-1", "web-2"]);
        assert_eq!(c.ready_count(), 2);
        assert_eq!(c.next_ready(), i64::MAX);
    }

    #[test]
    fn jitter_is_seeded_and_bounded() {
        let ready_times = |seed| {
            let mut c = Cluster::new("w", 0, 0, template(60, 30), seed);
            c.scale_to(20, 100, 0.0);
            c.lives().iter().map(|l| l.ready_at).collect::<Vec<_>>()
        };
        let a = ready_times(7);
        assert_eq!(a, ready_times(7));
        assert!(a.iter().all(|t| (160..=190).contains(t)));
        assert!(a.iter().any(|t| *t != a[0]), "jitter should vary: {a:?}");
    }
}
