//! Strongly connected components, for the searches that look for cycles in a graph they
//! stored (the lasso's replay graph, the shortest lasso's explored states).

/// Tarjan's strongly connected components of the graph on `0..n` with successors `next`,
/// iteratively: the component number of each state.
pub(crate) fn components<I: Iterator<Item = u32>>(n: usize, next: impl Fn(usize) -> I) -> Vec<u32> {
    const UNSEEN: u32 = u32::MAX;
    let mut order = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut component = vec![UNSEEN; n];
    let mut stack = Vec::new();
    let mut calls: Vec<(u32, I)> = Vec::new();
    let (mut next_order, mut next_component) = (0u32, 0u32);
    for root in 0..n {
        if order[root] != UNSEEN {
            continue;
        }
        order[root] = next_order;
        low[root] = next_order;
        next_order += 1;
        stack.push(root as u32);
        on_stack[root] = true;
        calls.push((root as u32, next(root)));
        while let Some((v, successors)) = calls.last_mut() {
            let v = *v as usize;
            if let Some(w) = successors.next() {
                let w = w as usize;
                if order[w] == UNSEEN {
                    order[w] = next_order;
                    low[w] = next_order;
                    next_order += 1;
                    stack.push(w as u32);
                    on_stack[w] = true;
                    calls.push((w as u32, next(w)));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            calls.pop();
            if let Some((parent, _)) = calls.last() {
                let parent = *parent as usize;
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    component[w as usize] = next_component;
                    if w as usize == v {
                        break;
                    }
                }
                next_component += 1;
            }
        }
    }
    component
}
