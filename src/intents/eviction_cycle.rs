//! `no_oscillation_eviction` (Kivi's `checkEvictionCycle`): a deployment's pods must not be
//! removed and then started again `LOOP_TIMES` times over.
//!
//! The kubelet flags a deployment when one of its pods is removed (`evicted`) and when one is
//! started (`added`). Kivi's monitor waits for `evicted`, clears it, waits for `added`, clears it
//! and counts one round. Here the monitor takes every step it can after each cluster step: it
//! clears flags as early as Kivi's monitor possibly could, which counts the most rounds any
//! interleaving of Kivi's monitor counts. Its stage is `2 * rounds`, plus 1 while waiting for
//! `added`.

use crate::cluster::timing::LOOP_TIMES;
use crate::cluster::{ClusterState, Recorder};

/// Advances the monitor of intent `intent` on deployment `d`; returns whether it is violated.
pub fn observe(state: &mut ClusterState, intent: usize, d: usize, rec: &mut Recorder) -> bool {
    let mut stage = state.monitors.stage[intent];
    loop {
        let dep = state.deployment_mut(d);
        if stage.is_multiple_of(2) && dep.evicted {
            dep.evicted = false;
            stage += 1;
        } else if !stage.is_multiple_of(2) && dep.added {
            dep.added = false;
            stage += 1;
            if stage / 2 >= LOOP_TIMES {
                state.monitors.stage[intent] = stage;
                rec.log(Some("checkEvictionCycle"), || {
                    format!("Pods are being scheduled and descheduled in deployment {d}!")
                });
                return true;
            }
        } else {
            break;
        }
    }
    state.monitors.stage[intent] = stage;
    false
}
