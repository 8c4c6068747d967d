//! ReplicaSets, StatefulSets, ReplicationControllers and Services by their selectors, and
//! Namespaces by their labels.

use super::super::diagnostics::{Diagnostics, InputError};
use super::super::kubernetes::typed;
use super::super::yaml_documents::Document;
use super::selectors::label_selector;
use crate::cluster::kube::{LabelSelector, Namespace, SelectorOwner, SelectorOwnerKind};
use k8s_openapi::api::{apps::v1 as apps, core::v1 as core};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use std::collections::BTreeMap;

/// The selector owner `document` holds; `kind` is its (checked) kind.
pub fn read(
    document: &Document,
    kind: &str,
    object: &str,
    diagnostics: &mut Diagnostics,
) -> Result<SelectorOwner, InputError> {
    let value = document.value.clone();
    let at = format!("{object}: spec.selector");
    let map = |selector: Option<BTreeMap<String, String>>| {
        selector.map(|match_labels| LabelSelector {
            match_labels,
            match_expressions: Vec::new(),
        })
    };
    let (kind, meta, selector) = match kind {
        "ReplicaSet" => {
            let set: apps::ReplicaSet = typed(document, value, object, diagnostics)?;
            let selector = set.spec.as_ref().map(|s| &s.selector);
            let selector = selector
                .map(|s| label_selector(s, document, &at))
                .transpose()?;
            (SelectorOwnerKind::ReplicaSet, set.metadata, selector)
        }
        "StatefulSet" => {
            let set: apps::StatefulSet = typed(document, value, object, diagnostics)?;
            let selector = set.spec.as_ref().map(|s| &s.selector);
            let selector = selector
                .map(|s| label_selector(s, document, &at))
                .transpose()?;
            (SelectorOwnerKind::StatefulSet, set.metadata, selector)
        }
        "ReplicationController" => {
            let rc: core::ReplicationController = typed(document, value, object, diagnostics)?;
            let selector = map(rc.spec.and_then(|s| s.selector));
            (
                SelectorOwnerKind::ReplicationController,
                rc.metadata,
                selector,
            )
        }
        _ => {
            let service: core::Service = typed(document, value, object, diagnostics)?;
            let selector = map(service.spec.and_then(|s| s.selector));
            (SelectorOwnerKind::Service, service.metadata, selector)
        }
    };
    let ObjectMeta {
        name, namespace, ..
    } = meta;
    Ok(SelectorOwner {
        kind,
        namespace: namespace.unwrap_or_else(|| "default".to_string()),
        name: name.unwrap_or_default(),
        selector,
    })
}

/// A Namespace by its name and labels.
pub fn namespace(namespace: &core::Namespace) -> Namespace {
    Namespace {
        name: namespace.metadata.name.clone().unwrap_or_default(),
        labels: namespace.metadata.labels.clone().unwrap_or_default(),
    }
}
