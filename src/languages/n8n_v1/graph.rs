//! The workflow as a graph: where runs start (the triggers, or the nodes
//! nothing leads to when there is none), what reaches what, and which
//! constructs enclose a node. An If or Switch node `B` encloses a node `N`
//! in its arm `k` when every run reaching `N` passes through `B` and only
//! output `k` of `B` leads to `N`; a node reached from several arms is a
//! join and belongs to none of them. A Loop Over Items node encloses the
//! nodes only its `loop` output leads to. The order of enclosing
//! constructs follows the shortest distance from a start: a node every run
//! passes before another is farther out.

use super::document::{IF, LOOP_OVER_ITEMS, Node, STICKY_NOTE, SWITCH, Workflow};
use super::ports;
use std::collections::VecDeque;

/// A construct enclosing a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Construct {
    /// Output `output` of the If or Switch node `branch`.
    Arm { branch: usize, output: usize },
    /// The body of the Loop Over Items node `node`.
    Loop { node: usize },
}

/// One If or Switch node: which nodes it decides for, through which outputs.
#[derive(Debug)]
pub struct Branching {
    pub node: usize,
    /// Nodes every run to which passes through this node.
    pub dominated: Vec<bool>,
    /// Per output, the nodes it leads to without passing the node again.
    pub arms: Vec<Vec<bool>>,
}

/// Reachability over the `main` connections.
#[derive(Debug)]
pub struct Graph {
    /// Per node, its `(output, target)` connections.
    pub succ: Vec<Vec<(usize, usize)>>,
    pub has_pred: Vec<bool>,
    /// Where runs start.
    pub roots: Vec<usize>,
    /// Shortest number of connections from a start (`None`: never reached).
    pub dist: Vec<Option<usize>>,
    pub branchings: Vec<Branching>,
    /// Per node, the constructs enclosing it, outermost first.
    pub enclosing: Vec<Vec<Construct>>,
}

/// Whether a node is an If or a Switch.
pub fn is_branch(node: &Node) -> bool {
    matches!(node.kind, IF | SWITCH)
}

/// Whether a node is a Loop Over Items with a `loop` output.
pub fn is_loop(node: &Node) -> bool {
    node.kind == LOOP_OVER_ITEMS && ports::loop_output(node).is_some()
}

impl Graph {
    /// The graph of `wf`; `is_trigger` tells the nodes that start runs.
    pub fn new(wf: &Workflow, is_trigger: &dyn Fn(&Node) -> bool) -> Graph {
        let n = wf.nodes.len();
        let mut succ = vec![Vec::new(); n];
        let mut has_pred = vec![false; n];
        for e in &wf.edges {
            succ[e.from].push((e.output, e.to));
            has_pred[e.to] = true;
        }
        let mut roots: Vec<usize> = (0..n).filter(|&i| is_trigger(&wf.nodes[i])).collect();
        if roots.is_empty() {
            // n8n runs a workflow without a trigger from its first nodes.
            roots = (0..n)
                .filter(|&i| !has_pred[i] && wf.nodes[i].kind != STICKY_NOTE)
                .collect();
        }
        let mut graph = Graph {
            succ,
            has_pred,
            roots,
            dist: Vec::new(),
            branchings: Vec::new(),
            enclosing: vec![Vec::new(); n],
        };
        graph.dist = graph.distances();
        graph.place(wf);
        graph
    }

    /// Nodes reachable from `starts` without entering `blocked`.
    pub fn reach(&self, starts: &[usize], blocked: Option<usize>) -> Vec<bool> {
        let mut seen = vec![false; self.succ.len()];
        let mut queue: VecDeque<usize> = VecDeque::new();
        for &s in starts {
            if Some(s) != blocked && !seen[s] {
                seen[s] = true;
                queue.push_back(s);
            }
        }
        while let Some(i) = queue.pop_front() {
            for &(_, t) in &self.succ[i] {
                if Some(t) != blocked && !seen[t] {
                    seen[t] = true;
                    queue.push_back(t);
                }
            }
        }
        seen
    }

    /// Nodes a run can reach after node `i` (`i` itself when in a cycle).
    pub fn descendants(&self, i: usize) -> Vec<bool> {
        let next: Vec<usize> = self.succ[i].iter().map(|&(_, t)| t).collect();
        self.reach(&next, None)
    }

    /// The targets of output `k` of node `i`.
    pub fn targets(&self, i: usize, k: usize) -> Vec<usize> {
        self.succ[i]
            .iter()
            .filter(|&&(o, _)| o == k)
            .map(|&(_, t)| t)
            .collect()
    }

    fn distances(&self) -> Vec<Option<usize>> {
        let mut dist = vec![None; self.succ.len()];
        let mut queue = VecDeque::new();
        for &r in &self.roots {
            dist[r] = Some(0);
            queue.push_back(r);
        }
        while let Some(i) = queue.pop_front() {
            let d = dist[i].unwrap_or(0) + 1;
            for &(_, t) in &self.succ[i] {
                if dist[t].is_none() {
                    dist[t] = Some(d);
                    queue.push_back(t);
                }
            }
        }
        dist
    }

    fn place(&mut self, wf: &Workflow) {
        let n = wf.nodes.len();
        let mut found: Vec<Vec<(usize, Construct)>> = vec![Vec::new(); n];
        for (b, node) in wf.nodes.iter().enumerate() {
            let Some(depth) = self.dist[b] else { continue };
            if !is_branch(node) && !is_loop(node) {
                continue;
            }
            let others = self.reach(&self.roots, Some(b));
            let dominated: Vec<bool> = (0..n)
                .map(|i| i != b && self.dist[i].is_some() && !others[i])
                .collect();
            let outputs = self.succ[b].iter().map(|&(o, _)| o + 1).max().unwrap_or(0);
            let arms: Vec<Vec<bool>> = (0..outputs)
                .map(|k| self.reach(&self.targets(b, k), Some(b)))
                .collect();
            for i in (0..n).filter(|&i| dominated[i]) {
                let through: Vec<usize> = (0..outputs).filter(|&k| arms[k][i]).collect();
                let construct = if is_loop(node) {
                    let body = ports::loop_output(node);
                    (through.len() == 1 && Some(through[0]) == body)
                        .then_some(Construct::Loop { node: b })
                } else {
                    (through.len() == 1).then(|| Construct::Arm {
                        branch: b,
                        output: through[0],
                    })
                };
                if let Some(c) = construct {
                    found[i].push((depth, c));
                }
            }
            if is_branch(node) {
                self.branchings.push(Branching {
                    node: b,
                    dominated,
                    arms,
                });
            }
        }
        for (i, mut list) in found.into_iter().enumerate() {
            list.sort_by_key(|(depth, _)| *depth);
            self.enclosing[i] = list.into_iter().map(|(_, c)| c).collect();
        }
    }

    /// Whether `a` and `b` sit on different arms of one If or Switch, so
    /// that a run reaching one never reached the other.
    pub fn on_exclusive_arms(&self, a: usize, b: usize) -> bool {
        self.branchings.iter().any(|br| {
            br.dominated[a]
                && br.dominated[b]
                && br.arms.iter().any(|arm| arm[a])
                && br.arms.iter().any(|arm| arm[b])
                && !br.arms.iter().any(|arm| arm[a] && arm[b])
        })
    }

    /// The strongly connected components with a cycle (two nodes or more,
    /// or a node connected to itself), each as its nodes.
    pub fn cycles(&self) -> Vec<Vec<usize>> {
        let n = self.succ.len();
        // Kosaraju, iteratively: finishing order on the graph, then
        // components on the reversed graph.
        let mut order = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        for s in 0..n {
            if seen[s] {
                continue;
            }
            seen[s] = true;
            let mut stack = vec![(s, 0usize)];
            while let Some(&mut (i, ref mut next)) = stack.last_mut() {
                if let Some(&(_, t)) = self.succ[i].get(*next) {
                    *next += 1;
                    if !seen[t] {
                        seen[t] = true;
                        stack.push((t, 0));
                    }
                } else {
                    order.push(i);
                    stack.pop();
                }
            }
        }
        let mut pred = vec![Vec::new(); n];
        for (i, list) in self.succ.iter().enumerate() {
            for &(_, t) in list {
                pred[t].push(i);
            }
        }
        let mut component = vec![usize::MAX; n];
        let mut out = Vec::new();
        for &s in order.iter().rev() {
            if component[s] != usize::MAX {
                continue;
            }
            let id = out.len();
            let mut members = vec![s];
            component[s] = id;
            let mut stack = vec![s];
            while let Some(i) = stack.pop() {
                for &p in &pred[i] {
                    if component[p] == usize::MAX {
                        component[p] = id;
                        members.push(p);
                        stack.push(p);
                    }
                }
            }
            out.push(members);
        }
        out.into_iter()
            .filter(|m| m.len() > 1 || self.succ[m[0]].iter().any(|&(_, t)| t == m[0]))
            .map(|mut m| {
                m.sort_unstable();
                m
            })
            .collect()
    }
}
