//! The EffectiveHorizontalPodAutoscaler as a Kubernetes resource: the spec and status types of
//! `foresight-api`, wrapped with object metadata and made known to kube.
//!
//! The spec and status live in `foresight-api`, which knows nothing of kube, so the resource
//! is assembled here by hand instead of with `#[derive(CustomResource)]` (the derive must sit
//! on the spec type itself). The CRD is generated from the same types in [`crate::crd`].

use std::borrow::Cow;

use foresight_api::spec::{API_VERSION, GROUP, KIND, VERSION};
use foresight_api::{EffectiveHorizontalPodAutoscalerSpec, EffectiveHorizontalPodAutoscalerStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::NamespaceResourceScope;
use serde::{Deserialize, Serialize};

/// Plural resource name, as in the API path.
pub const PLURAL: &str = "effectivehorizontalpodautoscalers";
/// Short name for kubectl. Not Crane's `ehpa`: a user migrating from Crane has both CRDs
/// (same kind, other group), and a shared short name would address only one of them.
pub const SHORT_NAME: &str = "fhpa";

/// An EffectiveHorizontalPodAutoscaler object as the API server serves it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveHorizontalPodAutoscaler {
    /// `autoscaling.foresight.dev/v1alpha1`.
    #[serde(default = "api_version")]
    pub api_version: String,
    /// `EffectiveHorizontalPodAutoscaler`.
    #[serde(default = "kind")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// What the user asked for.
    #[serde(default)]
    pub spec: EffectiveHorizontalPodAutoscalerSpec,
    /// What the controller saw, decided and remembers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<EffectiveHorizontalPodAutoscalerStatus>,
}

fn api_version() -> String {
    API_VERSION.to_owned()
}

fn kind() -> String {
    KIND.to_owned()
}

impl EffectiveHorizontalPodAutoscaler {
    /// A new object with `name` in `namespace`.
    pub fn new(namespace: &str, name: &str, spec: EffectiveHorizontalPodAutoscalerSpec) -> Self {
        EffectiveHorizontalPodAutoscaler {
            api_version: api_version(),
            kind: kind(),
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace.to_owned()),
                ..Default::default()
            },
            spec,
            status: None,
        }
    }
}

impl kube::Resource for EffectiveHorizontalPodAutoscaler {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        KIND.into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        GROUP.into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        VERSION.into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        PLURAL.into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::Resource;

    #[test]
    fn api_paths_follow_the_group_and_plural() {
        let url = EffectiveHorizontalPodAutoscaler::url_path(&(), Some("shop"));
        assert_eq!(
            url,
            "/apis/autoscaling.foresight.dev/v1alpha1/namespaces/shop/effectivehorizontalpodautoscalers"
        );
    }

    #[test]
    fn reads_an_object_as_the_api_server_serves_it() {
        let obj: EffectiveHorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
            "apiVersion": "autoscaling.foresight.dev/v1alpha1",
            "kind": "EffectiveHorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop", "generation": 3},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "maxReplicas": 10},
            "status": {"currentReplicas": 2}
        }))
        .unwrap();
        assert_eq!(obj.spec.max_replicas, 10);
        assert_eq!(obj.status.unwrap().current_replicas, Some(2));
    }
}
