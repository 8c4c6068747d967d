//! What a check says before it runs the input's own DeschedulerPolicy under `--semantics
//! kubernetes`: the fields the model's pods cannot show
//! ([`crate::controllers::kube_descheduler::carried`]).

use super::ClusterModel;
use crate::cluster::Semantics;
use crate::controllers::kube_descheduler::carried;

impl ClusterModel {
    /// One warning per field of the input's DeschedulerPolicy that the model's pods cannot
    /// show (a namespace other than the model's, a label key it does not keep); none without
    /// `--semantics kubernetes`, whose descheduler alone runs the policy.
    pub fn descheduler_policy_warnings(&self) -> Vec<String> {
        if self.spec.semantics != Semantics::Kubernetes {
            return Vec::new();
        }
        carried::warnings(&self.spec)
    }
}
