//! ringbuffer-trace: capture a trace of the REAL Concurrency Kit `ck_ring` in SPSC mode
//! (`ck_ring_enqueue_spsc` / `ck_ring_dequeue_spsc` from Debian's libck-dev 0.7.1, compiled from
//! its header by build.rs) and print it as NDJSON in the canonical vocabulary of
//! `tasks/ringbuffer/task.yaml`.
//!
//! Two real OS threads share one ring of SIZE slots: the producer enqueues the items 1..N in
//! order, retrying while the ring is full; the consumer dequeues until it has N items, retrying
//! while it is empty. Every call is stamped with a global SeqCst counter just before and just
//! after it, and the history is linearized (`lintrace`) against a bounded FIFO queue of capacity
//! SIZE - 1 (ck_ring keeps one slot empty). See README.md for why such an order exists.

use lintrace::{busy, fail, linearize, Clock, Event, Model, SplitMix64};
use std::fmt::Write as _;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const PROG: &str = "ringbuffer-trace";
const HARNESS: &str = "ringbuffer-trace 1";
const SYSTEM: &str = "Concurrency Kit ck_ring 0.7.1 (libck-dev), SPSC: ck_ring_enqueue_spsc / ck_ring_dequeue_spsc";
const THREADS: [&str; 2] = ["producer", "consumer"];
const PRODUCER: usize = 0;
const CONSUMER: usize = 1;
/// Slots of the ring (a power of two, as ck_ring_init requires); it holds SIZE - 1 items.
const SIZE: u32 = 4;
const CAPACITY: u32 = SIZE - 1;

/// Busy work between two calls, per thread and phase.
const GAP_UNITS: (u64, u64) = (0, 1500);
/// Percent of calls after which the thread sleeps SLEEP, as a preempted thread would: only then
/// does the other side find the ring full or empty (see README.md).
const SLEEP_PERCENT: u64 = 15;
const SLEEP: Duration = Duration::from_micros(60);
/// After a failed call the thread backs off this long before it retries, so that a trace holds
/// a handful of failures per stall rather than hundreds.
const BACKOFF: Duration = Duration::from_micros(20);

const ORDERING: &str = "Each event carries an invocation and a response stamp from one global \
AtomicU64 fetch_add(SeqCst) taken just before and just after the ck_ring call that contains its \
atomic step (the store of p_tail for a successful enqueue, the load of c_head for a full one, the \
store of c_head for a successful dequeue, the load of p_tail for an empty one). The trace is a \
linearization: a total order that places every event inside its (invocation, response) interval, \
keeps each thread's program order and satisfies the canonical semantics (a FIFO queue of capacity \
Size - 1) at every step.";

// ---------------------------------------------------------------------------------------------
// ck_ring through shim.c
// ---------------------------------------------------------------------------------------------

#[repr(C)]
struct ShimRing {
    _private: [u8; 0],
}

extern "C" {
    fn shim_new(size: u32) -> *mut ShimRing;
    fn shim_enqueue(r: *mut ShimRing, value: usize) -> bool;
    fn shim_dequeue(r: *mut ShimRing, value: *mut usize) -> bool;
    fn shim_size(r: *mut ShimRing) -> u32;
    fn shim_capacity(r: *mut ShimRing) -> u32;
}

/// The ring, shared by exactly one producer and one consumer thread (ck_ring's SPSC contract).
struct Ring(*mut ShimRing);

// SAFETY: ck_ring's SPSC functions are safe for one enqueuing and one dequeuing thread at a time;
// the harness gives `enqueue` to the producer thread only and `dequeue` to the consumer only.
unsafe impl Send for Ring {}
unsafe impl Sync for Ring {}

impl Ring {
    fn new(size: u32) -> Ring {
        // SAFETY: shim_new allocates and initialises a ring, or returns null.
        let r = unsafe { shim_new(size) };
        if r.is_null() {
            fail(PROG, "cannot allocate the ring".to_string());
        }
        Ring(r)
    }
    fn enqueue(&self, value: usize) -> bool {
        // SAFETY: called by the single producer thread.
        unsafe { shim_enqueue(self.0, value) }
    }
    fn dequeue(&self) -> Option<usize> {
        let mut v = 0usize;
        // SAFETY: called by the single consumer thread.
        unsafe { shim_dequeue(self.0, &mut v) }.then_some(v)
    }
    fn size(&self) -> u32 {
        // SAFETY: read after both threads joined.
        unsafe { shim_size(self.0) }
    }
    fn capacity(&self) -> u32 {
        // SAFETY: reads the constant size field.
        unsafe { shim_capacity(self.0) }
    }
}

// ---------------------------------------------------------------------------------------------
// The canonical vocabulary and its sequential semantics
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    /// A successful enqueue of the item.
    Push(u32),
    PushFull,
    /// A successful dequeue that returned the item.
    Pop(u32),
    PopEmpty,
}

const NAMES: [&str; 4] = ["Push", "PushFull", "Pop", "PopEmpty"];

impl Action {
    fn index(self) -> usize {
        match self {
            Action::Push(_) => 0,
            Action::PushFull => 1,
            Action::Pop(_) => 2,
            Action::PopEmpty => 3,
        }
    }
}

/// Everything canonical follows from how many items were pushed and popped: the k-th push
/// enqueues item k, head and tail are the counters masked to a slot, and the ring holds the
/// items popped+1 .. pushed.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct State {
    pushed: u32,
    popped: u32,
}

struct RingModel;

impl Model for RingModel {
    type Action = Action;
    type State = State;
    const THREADS: &'static [&'static str] = &THREADS;

    fn init() -> State {
        State { pushed: 0, popped: 0 }
    }

    fn step(s: &State, t: usize, a: Action) -> Option<State> {
        let len = s.pushed - s.popped;
        match a {
            Action::Push(v) if t == PRODUCER && len < CAPACITY && v == s.pushed + 1 => {
                Some(State { pushed: v, ..*s })
            }
            Action::PushFull if t == PRODUCER && len == CAPACITY => Some(*s),
            Action::Pop(v) if t == CONSUMER && len > 0 && v == s.popped + 1 => Some(State { popped: v, ..*s }),
            Action::PopEmpty if t == CONSUMER && len == 0 => Some(*s),
            _ => None,
        }
    }

    fn name(a: Action) -> &'static str {
        NAMES[a.index()]
    }
}

impl State {
    fn to_json(self) -> String {
        let items: Vec<String> = (self.popped + 1..=self.pushed).map(|k| k.to_string()).collect();
        format!(
            "{{\"head\":{},\"tail\":{},\"items\":[{}],\"pushed\":{},\"popped\":{}}}",
            self.popped % SIZE,
            self.pushed % SIZE,
            items.join(","),
            self.pushed,
            self.popped
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Capture: a real producer and a real consumer on one ck_ring
// ---------------------------------------------------------------------------------------------

/// Pause after a call: busy work, sometimes a sleep (a preempted thread), and a back-off after a
/// failure.
fn pause(rng: &mut SplitMix64, failed: bool) {
    busy(rng.range(GAP_UNITS));
    if failed {
        std::thread::sleep(BACKOFF);
    } else if rng.percent(SLEEP_PERCENT) {
        std::thread::sleep(SLEEP);
    }
}

fn producer(seed: u64, n: u32, ring: &Ring, clock: &Clock, barrier: &Barrier) -> Vec<Event<Action>> {
    let mut rng = SplitMix64::for_thread(seed, PRODUCER);
    let mut log = Vec::with_capacity(2 * n as usize);
    barrier.wait();
    let mut next = 1u32;
    while next <= n {
        let a = clock.stamp();
        let ok = ring.enqueue(next as usize);
        let b = clock.stamp();
        log.push(Event::new(if ok { Action::Push(next) } else { Action::PushFull }, a, b));
        if ok {
            next += 1;
        }
        pause(&mut rng, !ok);
    }
    log
}

fn consumer(seed: u64, n: u32, ring: &Ring, clock: &Clock, barrier: &Barrier) -> Vec<Event<Action>> {
    let mut rng = SplitMix64::for_thread(seed, CONSUMER);
    let mut log = Vec::with_capacity(2 * n as usize);
    barrier.wait();
    let mut got = 0u32;
    while got < n {
        let a = clock.stamp();
        let v = ring.dequeue();
        let b = clock.stamp();
        match v {
            Some(v) => {
                // A value that is not an item at all is a finding, not something to trace.
                let Ok(v) = u32::try_from(v) else { fail(PROG, format!("dequeued {:#x}, which was never enqueued", v)) };
                log.push(Event::new(Action::Pop(v), a, b));
                got += 1;
            }
            None => log.push(Event::new(Action::PopEmpty, a, b)),
        }
        pause(&mut rng, v.is_none());
    }
    log
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

fn main() {
    let usage = lintrace::usage(PROG, "every action, pushes into a ring holding items, and pops that leave items behind");
    let args = lintrace::parse_args(PROG, &usage);
    let n = u32::try_from(args.ops).unwrap_or_else(|_| fail(PROG, "--ops is too large".to_string()));

    // ---- capture ------------------------------------------------------------------------
    let ring = Arc::new(Ring::new(SIZE));
    if ring.capacity() != SIZE {
        fail(PROG, format!("ck_ring_capacity is {}, expected {}", ring.capacity(), SIZE));
    }
    let clock = Arc::new(Clock::new());
    let t0 = Instant::now();
    let (r, c, seed) = (ring.clone(), clock.clone(), args.seed);
    let logs = lintrace::run_threads(&THREADS, move |tid, barrier| {
        if tid == PRODUCER {
            producer(seed, n, &r, &c, barrier)
        } else {
            consumer(seed, n, &r, &c, barrier)
        }
    });
    let capture_time = t0.elapsed();

    // ---- post-run checks on the real data -----------------------------------------------
    if ring.size() != 0 {
        fail(PROG, format!("the ring holds {} items after every item was consumed", ring.size()));
    }
    let got: Vec<u32> = logs[CONSUMER].iter().filter_map(|e| if let Action::Pop(v) = e.action { Some(v) } else { None }).collect();
    if let Some((k, v)) = got.iter().enumerate().find(|(k, &v)| v != *k as u32 + 1) {
        fail(PROG, format!("the consumer's item #{} was {} (FIFO order broken)", k + 1, v));
    }

    // ---- linearize ------------------------------------------------------------------------
    let t1 = Instant::now();
    let lin = linearize::<RingModel>(&logs).unwrap_or_else(|e| fail(PROG, e));
    let lin_time = t1.elapsed();

    let constants = format!("{{\"Size\":{},\"N\":{}}}", SIZE, n);
    let mut out = lintrace::meta_line("ringbuffer", args.seed, args.ops, &THREADS, &constants, HARNESS, SYSTEM, ORDERING);
    let mut state = RingModel::init();
    lintrace::step_line(&mut out, 0, "Init", None, &state.to_json());
    let mut counts = [0usize; 4];
    let (mut push_beside_items, mut pop_leaving_items, mut full_states) = (0usize, 0usize, 0usize);
    for (i, (t, e)) in lintrace::in_order(&logs, &lin.order).into_iter().enumerate() {
        let before = state;
        state = RingModel::step(&state, t, e.action)
            .unwrap_or_else(|| fail(PROG, format!("internal error: step {} ({:?}) not enabled", i + 1, e.action)));
        counts[e.action.index()] += 1;
        match e.action {
            Action::Push(_) if before.pushed > before.popped => push_beside_items += 1,
            Action::Pop(_) if state.pushed > state.popped => pop_leaving_items += 1,
            _ => {}
        }
        if state.pushed - state.popped == CAPACITY {
            full_states += 1;
        }
        lintrace::step_line(&mut out, i + 1, RingModel::name(e.action), Some(THREADS[t]), &state.to_json());
    }
    if state.pushed != n || state.popped != n {
        fail(PROG, "internal error: the trace does not end with every item consumed".to_string());
    }

    let mut summary = String::new();
    for (name, c) in NAMES.iter().zip(counts.iter()) {
        let _ = write!(summary, "{}={} ", name, c);
    }
    eprintln!(
        "{}: seed={} items={} steps={} | {}| pushes beside items={} pops leaving items={} steps ending full={} \
         | capture {:.3} ms, linearize {:.3} ms ({} dead ends)",
        PROG,
        args.seed,
        n,
        lin.order.len(),
        summary,
        push_beside_items,
        pop_leaving_items,
        full_states,
        capture_time.as_secs_f64() * 1e3,
        lin_time.as_secs_f64() * 1e3,
        lin.dead_ends
    );
    let mut required: Vec<(String, usize)> = NAMES.iter().zip(counts.iter()).map(|(a, &c)| (a.to_string(), c)).collect();
    required.push(("pushes into a ring holding items".to_string(), push_beside_items));
    required.push(("pops that leave items behind".to_string(), pop_leaving_items));
    lintrace::require_each(PROG, &required, args.min_each);
    lintrace::write_trace(PROG, &args.out, &out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use Action::*;

    fn ev(action: Action, inv: u64, resp: u64) -> Event<Action> {
        Event::new(action, inv, resp)
    }

    #[test]
    fn capacity_is_one_less_than_the_slots() {
        let full = State { pushed: 3, popped: 0 };
        assert!(RingModel::step(&full, PRODUCER, Push(4)).is_none());
        assert_eq!(RingModel::step(&full, PRODUCER, PushFull), Some(full));
        assert!(RingModel::step(&State { pushed: 2, popped: 0 }, PRODUCER, PushFull).is_none());
    }

    #[test]
    fn items_leave_in_order() {
        let s = State { pushed: 2, popped: 0 };
        assert!(RingModel::step(&s, CONSUMER, Pop(2)).is_none());
        assert_eq!(RingModel::step(&s, CONSUMER, Pop(1)), Some(State { pushed: 2, popped: 1 }));
        assert!(RingModel::step(&s, CONSUMER, PopEmpty).is_none());
        assert!(RingModel::step(&s, PRODUCER, Pop(1)).is_none(), "only the consumer dequeues");
    }

    #[test]
    fn an_empty_pop_overlapping_a_push_goes_first() {
        // The consumer's empty dequeue (2, 6) overlaps the producer's first enqueue (1, 5): it can
        // only be placed before it. A later pop (7, 8) takes the item.
        let logs = vec![vec![ev(Push(1), 1, 5)], vec![ev(PopEmpty, 2, 6), ev(Pop(1), 7, 8)]];
        let l = linearize::<RingModel>(&logs).unwrap();
        assert_eq!(l.order, vec![1, 0, 1]);
        // An empty dequeue after the push had returned is not linearizable.
        let logs = vec![vec![ev(Push(1), 1, 2)], vec![ev(PopEmpty, 3, 4), ev(Pop(1), 5, 6)]];
        assert!(linearize::<RingModel>(&logs).is_err());
    }

    #[test]
    fn json_shape() {
        assert_eq!(
            State { pushed: 5, popped: 3 }.to_json(),
            "{\"head\":3,\"tail\":1,\"items\":[4,5],\"pushed\":5,\"popped\":3}"
        );
    }
}
