//! The event queue: a binary heap ordered by time, ties broken by the order
//! events were scheduled, so a run is the same on every machine.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Nanoseconds of simulated time since the run started.
pub type Nanos = u64;

pub struct EventQueue<E: Ord> {
    heap: BinaryHeap<Reverse<(Nanos, u64, E)>>,
    next_seq: u64,
}

impl<E: Ord> EventQueue<E> {
    /// A queue with room for `capacity` pending events, so a closed loop of
    /// that many workers schedules without allocating.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(capacity),
            next_seq: 0,
        }
    }

    pub fn schedule(&mut self, at: Nanos, event: E) {
        self.heap.push(Reverse((at, self.next_seq, event)));
        self.next_seq += 1;
    }

    /// The earliest event; among events at the same instant, the one
    /// scheduled first.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.heap.pop().map(|Reverse((t, _, e))| (t, e))
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_ties_in_scheduling_order() {
        let mut q = EventQueue::with_capacity(4);
        q.schedule(5, 'c');
        q.schedule(1, 'z');
        q.schedule(5, 'a');
        q.schedule(5, 'b');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(1, 'z'), (5, 'c'), (5, 'a'), (5, 'b')]);
    }
}
