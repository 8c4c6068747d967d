//! NodeResourcesFit: the request must fit the node's free CPU, memory and pod slots; scoring
//! prefers the least allocated node.

use super::Cycle;
use crate::cluster::timing::{MAX_NODE_SCORE, NODE_ALLOWED_PODS};

/// Rejects nodes without room for the template's requests or another pod.
pub fn filter(c: &mut Cycle) {
    for n in c.node_ids() {
        let node = c.state.node(n);
        if c.template.cpu_requested > node.cpu_left as i32
            || c.template.mem_requested > node.mem_left as i32
            || node.num_pods as i32 + 1 > NODE_ALLOWED_PODS
        {
            c.score[n] = -1;
        }
    }
}

/// LeastAllocated: the share of CPU and memory left after placing the pod, averaged.
pub fn score(c: &mut Cycle) {
    for n in c.node_ids() {
        if !c.feasible(n) {
            continue;
        }
        let node = c.state.node(n);
        let left = |free: i16, request: i32| {
            let free = free as i32;
            if free == 0 {
                0
            } else {
                (free - request) * MAX_NODE_SCORE / free
            }
        };
        let cpu = left(node.cpu_left, c.template.cpu_requested);
        let mem = left(node.mem_left, c.template.mem_requested);
        c.score[n] += (cpu + mem) / 2;
    }
}
