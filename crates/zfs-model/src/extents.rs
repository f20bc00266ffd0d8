//! The extents a disk's write cache holds: offset -> length, ordered by
//! offset, never overlapping once merged by their user.
//!
//! A cache usually holds a handful (a commit writes a log block and flushes
//! it; a txg's writes are sequential and merge), so the extents sit in a
//! sorted vector whose allocation lives as long as the disk: a map node
//! allocated and freed per commit and per written disk was a tenth of a
//! wide-pool `plan`. Past [`FEW`] extents (random writes through a large
//! cache in the lab, up to tens of thousands) they move to a B-tree, where
//! an insert stays logarithmic, and come back to the vector when the cache
//! empties.

use std::collections::BTreeMap;

/// Most extents kept in the sorted vector; an insert shifts at most this
/// many entries (1 KiB).
const FEW: usize = 64;

#[derive(Debug, Clone, Default)]
pub(crate) struct Extents {
    /// Sorted by offset; empty while `many` holds the extents.
    few: Vec<(u64, u64)>,
    many: BTreeMap<u64, u64>,
}

impl Extents {
    pub(crate) fn is_empty(&self) -> bool {
        self.few.is_empty() && self.many.is_empty()
    }

    /// How many extents there are.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.few.len() + self.many.len()
    }

    /// Entries of `few` with an offset below `offset`.
    fn few_below(&self, offset: u64) -> usize {
        self.few.partition_point(|&(o, _)| o < offset)
    }

    /// The first extent at or after `offset`, else the first of all: where
    /// an elevator sweep from `offset` goes next.
    pub(crate) fn next_from(&self, offset: u64) -> Option<(u64, u64)> {
        if self.many.is_empty() {
            let i = self.few_below(offset);
            self.few.get(i).or_else(|| self.few.first()).copied()
        } else {
            self.many
                .range(offset..)
                .next()
                .or_else(|| self.many.iter().next())
                .map(|(o, l)| (*o, *l))
        }
    }

    /// The extent starting at or below `offset` nearest to it.
    pub(crate) fn at_or_below(&self, offset: u64) -> Option<(u64, u64)> {
        if self.many.is_empty() {
            let i = self.few.partition_point(|&(o, _)| o <= offset);
            i.checked_sub(1).map(|i| self.few[i])
        } else {
            self.many
                .range(..=offset)
                .next_back()
                .map(|(o, l)| (*o, *l))
        }
    }

    /// Remove the extent starting at `offset`; its length, if there was one.
    pub(crate) fn remove(&mut self, offset: u64) -> Option<u64> {
        if self.many.is_empty() {
            let i = self.few_below(offset);
            match self.few.get(i) {
                Some(&(o, _)) if o == offset => Some(self.few.remove(i).1),
                _ => None,
            }
        } else {
            self.many.remove(&offset)
        }
    }

    /// Add an extent starting at `offset`, which no extent starts at.
    pub(crate) fn insert(&mut self, offset: u64, len: u64) {
        if self.many.is_empty() {
            if self.few.len() < FEW {
                let i = self.few_below(offset);
                self.few.insert(i, (offset, len));
                return;
            }
            self.many.extend(self.few.drain(..));
        }
        self.many.insert(offset, len);
    }

    /// Remove the extents touching `start..=end` that a walk down from the
    /// last one starting at or below `end` meets before one ending below
    /// `start`, handing each to `each`, highest offset first.
    pub(crate) fn take_touching(&mut self, start: u64, end: u64, mut each: impl FnMut(u64, u64)) {
        if self.many.is_empty() {
            let hi = self.few.partition_point(|&(o, _)| o <= end);
            let lo = self.few[..hi]
                .iter()
                .rposition(|&(o, l)| o + l < start)
                .map_or(0, |i| i + 1);
            for (o, l) in self.few.drain(lo..hi).rev() {
                each(o, l);
            }
        } else {
            let touching: Vec<(u64, u64)> = self
                .many
                .range(..=end)
                .rev()
                .take_while(|(o, l)| **o + **l >= start)
                .map(|(o, l)| (*o, *l))
                .collect();
            for (o, l) in touching {
                self.many.remove(&o);
                each(o, l);
            }
        }
    }

    /// Every extent in elevator order from `offset` (those at or after it,
    /// then those before it), handed to `each`; the set is empty after.
    pub(crate) fn drain_sweep(&mut self, offset: u64, mut each: impl FnMut(u64, u64)) {
        if self.many.is_empty() {
            let split = self.few_below(offset);
            for &(o, l) in self.few[split..].iter().chain(&self.few[..split]) {
                each(o, l);
            }
        } else {
            for (&o, &l) in self.many.range(offset..).chain(self.many.range(..offset)) {
                each(o, l);
            }
        }
        self.clear();
    }

    /// Forget every extent (the vector keeps its allocation).
    pub(crate) fn clear(&mut self) {
        self.few.clear();
        self.many.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A B-tree map driven through the same calls: what `Extents` must
    /// answer, in either representation.
    #[derive(Default)]
    struct Reference(BTreeMap<u64, u64>);

    impl Reference {
        fn next_from(&self, offset: u64) -> Option<(u64, u64)> {
            self.0
                .range(offset..)
                .next()
                .or_else(|| self.0.iter().next())
                .map(|(o, l)| (*o, *l))
        }
        fn at_or_below(&self, offset: u64) -> Option<(u64, u64)> {
            self.0.range(..=offset).next_back().map(|(o, l)| (*o, *l))
        }
        fn take_touching(&mut self, start: u64, end: u64) -> Vec<(u64, u64)> {
            let t: Vec<(u64, u64)> = self
                .0
                .range(..=end)
                .rev()
                .take_while(|(o, l)| **o + **l >= start)
                .map(|(o, l)| (*o, *l))
                .collect();
            for (o, _) in &t {
                self.0.remove(o);
            }
            t
        }
        fn drain_sweep(&mut self, offset: u64) -> Vec<(u64, u64)> {
            let order = self
                .0
                .range(offset..)
                .chain(self.0.range(..offset))
                .map(|(o, l)| (*o, *l))
                .collect();
            self.0.clear();
            order
        }
    }

    /// xorshift: the same pseudo-random calls every run.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    #[test]
    fn answers_as_a_btree_map_does_below_and_above_the_vector_limit() {
        // Caches that stay in the vector, cross the limit, and go far past
        // it; each merged the way the disk merges its writes.
        for (offsets, seed) in [(40u64, 7u64), (4 * FEW as u64, 11), (100_000, 13)] {
            let (mut e, mut r) = (Extents::default(), Reference::default());
            let mut x = seed;
            let mut in_tree = false;
            for step in 0..6_000u64 {
                // One of `offsets` offsets 32 bytes apart (at most that many
                // extents); a fifth of the writes reach the next one.
                let offset = next(&mut x) % offsets * 32;
                let len = 8 * (1 + next(&mut x) % 5);
                match next(&mut x) % 10 {
                    0..=5 => {
                        // A write, merged with what it touches.
                        let (mut start, mut end) = (offset, offset + len);
                        let mut taken = Vec::new();
                        e.take_touching(start, end, |o, l| taken.push((o, l)));
                        assert_eq!(taken, r.take_touching(start, end), "step {step}");
                        for (o, l) in taken {
                            start = start.min(o);
                            end = end.max(o + l);
                        }
                        e.insert(start, end - start);
                        r.0.insert(start, end - start);
                    }
                    6 => {
                        let o = r.next_from(offset).map_or(offset, |(o, _)| o);
                        assert_eq!(e.remove(o), r.0.remove(&o), "step {step}");
                    }
                    7 => assert_eq!(e.next_from(offset), r.next_from(offset), "step {step}"),
                    8 => assert_eq!(e.at_or_below(offset), r.at_or_below(offset), "step {step}"),
                    _ if step % 500 == 9 => {
                        let mut order = Vec::new();
                        e.drain_sweep(offset, |o, l| order.push((o, l)));
                        assert_eq!(order, r.drain_sweep(offset), "step {step}");
                        assert!(e.is_empty());
                    }
                    _ => assert_eq!(e.is_empty(), r.0.is_empty()),
                }
                assert!(
                    e.few.is_empty() || e.many.is_empty(),
                    "one representation at a time"
                );
                in_tree |= !e.many.is_empty();
            }
            // The small case stays in the vector; the others reach the tree.
            assert_eq!(in_tree, offsets > FEW as u64, "{offsets}");
        }
    }

    #[test]
    fn moves_to_the_tree_past_the_limit_and_back_when_emptied() {
        let mut e = Extents::default();
        for k in 0..FEW as u64 {
            e.insert(100 * k, 10);
        }
        assert_eq!((e.few.len(), e.many.len()), (FEW, 0));
        e.insert(1, 10);
        assert_eq!((e.few.len(), e.many.len()), (0, FEW + 1));
        assert_eq!(e.next_from(2), Some((100, 10)));
        e.drain_sweep(0, |_, _| {});
        assert!(e.is_empty());
        e.insert(5, 1);
        assert_eq!((e.few.len(), e.many.len()), (1, 0));
    }
}
