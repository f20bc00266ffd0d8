//! The event queue: a binary heap ordered by time, ties broken by the order
//! events were scheduled, so a run is the same on every machine.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Nanoseconds of simulated time since the run started.
pub type Nanos = u64;

pub struct EventQueue<E: Ord> {
    heap: BinaryHeap<Reverse<(Nanos, u64, E)>>,
    /// Events scheduled for the instant being processed, in scheduling
    /// order: a good share of a request's steps take no time (a reply
    /// sent as soon as the data is ready), and these skip the heap. Same
    /// order as through the heap: time, then scheduling order.
    now_fifo: VecDeque<(u64, E)>,
    now: Nanos,
    next_seq: u64,
}

impl<E: Ord> EventQueue<E> {
    /// A queue with room for `capacity` pending events, so a closed loop of
    /// that many workers schedules without allocating.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(capacity),
            now_fifo: VecDeque::with_capacity(capacity),
            now: 0,
            next_seq: 0,
        }
    }

    /// Schedule `event` at `at`; a time before the instant being processed
    /// is taken as that instant (the queue never goes back in time).
    pub(crate) fn schedule(&mut self, at: Nanos, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        if at <= self.now {
            self.now_fifo.push_back((seq, event));
        } else {
            self.heap.push(Reverse((at, seq, event)));
        }
    }

    /// The earliest event; among events at the same instant, the one
    /// scheduled first.
    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        if let Some(&(seq, _)) = self.now_fifo.front() {
            // An event in the heap at this instant was scheduled earlier
            // (before the clock reached it) only if its number is lower.
            let heap_first = self
                .heap
                .peek()
                .is_some_and(|Reverse((t, s, _))| *t == self.now && *s < seq);
            if !heap_first {
                return self.now_fifo.pop_front().map(|(_, e)| (self.now, e));
            }
        }
        let Reverse((t, _, e)) = self.heap.pop()?;
        self.now = t;
        Some((t, e))
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.now_fifo.is_empty()
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

    #[test]
    fn events_for_the_current_instant_keep_the_order_of_scheduling() {
        let mut q = EventQueue::with_capacity(4);
        q.schedule(5, 'a');
        q.schedule(5, 'b');
        q.schedule(7, 'z');
        assert_eq!(q.pop(), Some((5, 'a')));
        // Scheduled at the current instant after 'b' was: comes after it,
        // before anything later.
        q.schedule(5, 'c');
        q.schedule(3, 'd');
        assert_eq!(q.pop(), Some((5, 'b')));
        q.schedule(5, 'e');
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(5, 'c'), (5, 'd'), (5, 'e'), (7, 'z')]);
        assert!(q.is_empty());
    }
}
