//! Policies: the autoscaler specs a simulation compares, read from manifests
//! (EffectiveHorizontalPodAutoscaler or native autoscaling/v2 HPA) and compiled by the core.

use foresight_api::manifest::{classify, parse_documents, Document};
use foresight_api::validation::ValidationErrors;
use foresight_api::EffectiveHorizontalPodAutoscalerSpec;
use foresight_core::autoscaler::{Autoscaler, ControllerConfig, MetricSource};
use foresight_core::resources::ResourceName;
use foresight_core::version::KubernetesVersion;

use crate::error::SimError;

/// One policy to simulate: a name for the report and the spec.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Shown in the score table and the charts.
    pub name: String,
    /// The spec, as written.
    pub spec: EffectiveHorizontalPodAutoscalerSpec,
}

/// The namespace simulated autoscalers live in (it only appears in messages).
pub const NAMESPACE: &str = "simulation";

impl Policy {
    /// Validates and compiles the spec with the controller's defaults, and checks that the
    /// model can feed every metric. Errors list every problem with its field path.
    pub fn compile(&self) -> Result<Autoscaler, SimError> {
        self.compile_as(KubernetesVersion::default())
    }

    /// As [`Policy::compile`], deciding as the HPA of Kubernetes `kubernetes`.
    pub fn compile_as(&self, kubernetes: KubernetesVersion) -> Result<Autoscaler, SimError> {
        let fail = |message: String| SimError::Policy {
            policy: self.name.clone(),
            message,
        };
        let autoscaler = Autoscaler::new(
            NAMESPACE,
            &self.name,
            &self.spec,
            &ControllerConfig {
                kubernetes,
                ..ControllerConfig::default()
            },
        )
        .map_err(|errors| fail(ValidationErrors(errors).to_string()))?;
        for (i, metric) in autoscaler.metrics.iter().enumerate() {
            if let MetricSource::Resource { resource, .. } = &metric.source {
                if *resource != ResourceName::Cpu {
                    return Err(fail(format!(
                        "spec.metrics[{i}]: the simulator models one load signal, which CPU metrics \
                         read as cores; a {resource} metric cannot be simulated"
                    )));
                }
            }
            if let MetricSource::Unknown { type_ } = &metric.source {
                return Err(fail(format!(
                    "spec.metrics[{i}].type: {type_:?} cannot be simulated"
                )));
            }
        }
        Ok(autoscaler)
    }

    /// The same policy without prediction and crons: what a plain HPA would do.
    pub fn reactive(&self, name: &str) -> Policy {
        let mut spec = self.spec.clone();
        spec.prediction = None;
        // An objective is met by tuning prediction: without it, the spec runs as written.
        spec.objective = None;
        spec.crons.clear();
        Policy {
            name: name.to_owned(),
            spec,
        }
    }

    /// The same policy without crons.
    pub fn without_crons(&self, name: &str) -> Policy {
        let mut spec = self.spec.clone();
        spec.crons.clear();
        Policy {
            name: name.to_owned(),
            spec,
        }
    }
}

/// Reads every autoscaler in a manifest file: Foresight's EffectiveHorizontalPodAutoscaler
/// and native autoscaling/v2 HorizontalPodAutoscalers. Other kinds are skipped; a file
/// without any autoscaler is an error. Each policy is named after `metadata.name`, or
/// `default_name` when it has none.
pub fn policies_from_manifest(text: &str, default_name: &str) -> Result<Vec<Policy>, String> {
    let documents = parse_documents(text).map_err(|e| e.to_string())?;
    let mut policies = Vec::new();
    let mut skipped = Vec::new();
    for (i, doc) in documents.iter().enumerate() {
        let located = |e: foresight_api::validation::FieldError| {
            if documents.len() > 1 {
                format!("document {}: {e}", i + 1)
            } else {
                e.to_string()
            }
        };
        let document = classify(doc).map_err(located)?;
        // A misspelt field would silently replay the default instead of the user's setting.
        if let Some(first) = foresight_api::unknown_fields::in_spec_of(doc)
            .into_iter()
            .next()
        {
            return Err(located(first));
        }
        match document {
            Document::Foresight(ehpa) => policies.push(Policy {
                name: ehpa
                    .metadata
                    .name
                    .clone()
                    .unwrap_or_else(|| default_name.to_owned()),
                spec: ehpa.spec,
            }),
            Document::Hpa(hpa) => policies.push(Policy {
                name: hpa
                    .metadata
                    .name
                    .clone()
                    .unwrap_or_else(|| default_name.to_owned()),
                spec: foresight_api::import::spec_from_hpa(&hpa.spec),
            }),
            Document::Crane(_) => {
                return Err(
                    "a Crane autoscaling.crane.io EffectiveHorizontalPodAutoscaler: convert it \
                     with `foresight import` first"
                        .to_owned(),
                )
            }
            Document::Keda(_) => {
                return Err(
                    "a KEDA keda.sh ScaledObject: convert it with `foresight import` first"
                        .to_owned(),
                )
            }
            Document::Other { api_version, kind } => skipped.push(format!("{api_version} {kind}")),
        }
    }
    if policies.is_empty() {
        return Err(format!(
            "no EffectiveHorizontalPodAutoscaler or autoscaling/v2 HorizontalPodAutoscaler found{}",
            if skipped.is_empty() {
                String::new()
            } else {
                format!(" (found: {})", skipped.join(", "))
            }
        ));
    }
    Ok(policies)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HPA: &str = r#"
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 20
  metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
"#;

    #[test]
    fn reads_native_hpas_and_skips_other_kinds() {
        let policies = policies_from_manifest(HPA, "file").unwrap();
        assert_eq!(policies.len(), 1);
        assert_eq!(policies[0].name, "web");
        assert_eq!(policies[0].spec.max_replicas, 20);
        assert!(policies[0].compile().is_ok());
    }

    #[test]
    fn a_file_without_autoscalers_says_what_it_found() {
        let err = policies_from_manifest("apiVersion: v1\nkind: Service\n", "f").unwrap_err();
        assert!(err.contains("v1 Service"), "{err}");
    }

    #[test]
    fn invalid_specs_name_the_field() {
        let text = HPA.replace("maxReplicas: 20", "maxReplicas: 0");
        let policy = &policies_from_manifest(&text, "f").unwrap()[0];
        let err = policy.compile().unwrap_err().to_string();
        assert!(err.contains("spec.maxReplicas"), "{err}");
    }

    #[test]
    fn memory_metrics_are_refused_with_their_index() {
        let text = HPA.replace("name: cpu", "name: memory");
        let policy = &policies_from_manifest(&text, "f").unwrap()[0];
        let err = policy.compile().unwrap_err().to_string();
        assert!(
            err.contains("spec.metrics[0]") && err.contains("memory"),
            "{err}"
        );
    }
}
