//! The tree: paths, common ancestors, children and roots.

use super::*;

impl Session {
    /// The path from the root to `leaf` (entry indices, root first). Linear; stops at a cycle.
    pub fn path(&self, leaf: Option<usize>) -> Vec<usize> {
        let Some(mut cur) = leaf else { return Vec::new() };
        let mut out = Vec::new();
        loop {
            out.push(cur);
            if out.len() > self.entries.len() {
                // A cycle: the loader reported it; stop.
                break;
            }
            match self.parent_of(cur) {
                Some(p) => cur = p,
                None => break,
            }
        }
        out.reverse();
        out
    }

    /// The ids on `path(leaf)`.
    pub fn path_ids(&self, leaf: Option<usize>) -> Vec<&str> {
        self.path(leaf).into_iter().map(|i| self.id(i)).collect()
    }

    /// The deepest entry on both paths (Pi's common-ancestor rule: walk the target's path
    /// from the target towards the root; the first id on the old path).
    pub fn common_ancestor(&self, a: usize, b: usize) -> Option<usize> {
        // Mark a's ancestors, then walk up from b to the first marked one: one bit per entry,
        // each walk bounded by the entry count (cycles).
        let n = self.entries.len();
        let mut on_a = vec![false; n];
        let mut cur = Some(a);
        let mut steps = 0;
        while let Some(c) = cur {
            if on_a[c] || steps > n {
                break;
            }
            on_a[c] = true;
            steps += 1;
            cur = self.parent_of(c);
        }
        let mut cur = Some(b);
        let mut steps = 0;
        while let Some(c) = cur {
            if on_a[c] {
                return Some(c);
            }
            steps += 1;
            if steps > n {
                break;
            }
            cur = self.parent_of(c);
        }
        None
    }

    fn tree(&self) -> &Children {
        self.children.get_or_init(|| {
            let n = self.entries.len();
            // Pi's getTree: nodes by id (a later duplicate replaces the earlier one);
            // roots: parentId null or own id, or a parent that is not present.
            let mut roots = Vec::new();
            let mut counts = vec![0u32; n + 1];
            let mut edges: Vec<(u32, u32)> = Vec::with_capacity(n);
            for (i, e) in self.entries.iter().enumerate() {
                let node = self.by_id[&e.id];
                if node as usize != i {
                    // An earlier duplicate: Pi attaches the later node for it again; skip.
                    continue;
                }
                match e.parent_id.as_deref() {
                    None => roots.push(node),
                    Some(p) if p == &*e.id => roots.push(node),
                    Some(p) => match self.by_id.get(p) {
                        Some(&par) => {
                            edges.push((par, node));
                            counts[par as usize] += 1;
                        }
                        None => roots.push(node),
                    },
                }
            }
            let mut start = vec![0u32; n + 1];
            for i in 0..n {
                start[i + 1] = start[i] + counts[i];
            }
            let mut fill = start.clone();
            let mut list = vec![0u32; edges.len()];
            for (p, c) in edges {
                list[fill[p as usize] as usize] = c;
                fill[p as usize] += 1;
            }
            for i in 0..n {
                let slice = &mut list[start[i] as usize..start[i + 1] as usize];
                if slice.len() > 1 {
                    slice.sort_by_key(|&c| {
                        crate::time::parse_iso_ms(&self.entries[c as usize].timestamp).unwrap_or(i64::MIN)
                    });
                }
            }
            Children { start, list, roots }
        })
    }

    /// Children of an entry, oldest first (by timestamp, as Pi's `getTree`).
    pub fn children(&self, idx: usize) -> &[u32] {
        let t = self.tree();
        &t.list[t.start[idx] as usize..t.start[idx + 1] as usize]
    }

    /// Roots of the tree in file order: real roots and orphans.
    pub fn roots(&self) -> &[u32] {
        &self.tree().roots
    }
}
