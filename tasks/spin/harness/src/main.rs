//! spin-trace: capture a trace of the REAL `spin::mutex::SpinMutex` (spin 0.9.5) under contention
//! and print it as NDJSON in the canonical vocabulary of `tasks/spin/task.yaml`.
//!
//! Four real OS threads (t1 to t4) start together on a Barrier and run a seeded workload of
//! `lock()` and `try_lock()` calls on one `SpinMutex<u64>`. Every operation is stamped with a global
//! `AtomicU64::fetch_add(1, SeqCst)` sequence number just before (invocation) and just after
//! (response) the atomic step it stands for. After the threads join, the events are linearized:
//! a total order is searched in which every event sits inside its (invocation, response) interval,
//! program order per thread is kept, and every step satisfies the canonical sequential semantics.
//! See README.md for the argument why such an order must exist and what it guarantees.

use lintrace::{busy, fail, linearize, Clock, Event, Model, SplitMix64};
use spin::mutex::SpinMutex;
use std::fmt::Write as _;
use std::sync::{Arc, Barrier};
use std::time::Instant;

const HARNESS: &str = "spin-trace 1";
const CRATE: &str = "spin 0.9.5";
const PROG: &str = "spin-trace";
const THREADS: [&str; 4] = ["t1", "t2", "t3", "t4"];
const N: usize = THREADS.len();

/// Workload shape (percent / busy-work units). Chosen so that traces show failed try_locks,
/// threads spinning while another one holds the lock, and hand-offs to a spinning thread.
const LOCK_PERCENT: u64 = 55; // the rest are try_lock() calls
const CS_UNITS: (u64, u64) = (50, 1500); // busy work inside the critical section
const GAP_UNITS: (u64, u64) = (0, 1500); // busy work between two operations
/// Percent of critical sections in which the holder sleeps for CS_SLEEP while it holds the
/// lock, i.e. it is descheduled as a preempted user-space lock holder would be. Without it,
/// contention only arises where two threads happen to run at the same moment on different
/// cores: on a loaded machine (or one with fewer free cores than threads) the scheduler tends
/// to run whole threads back to back and the trace shows no contention at all. While the holder
/// sleeps, the other threads run against the held lock on whatever core they have.
const CS_SLEEP_PERCENT: u64 = 25;
const CS_SLEEP: std::time::Duration = std::time::Duration::from_micros(50);
/// Percent of gaps between operations that start with `yield_now()` (never while holding the
/// lock), so that threads sharing a core interleave at operation granularity.
const GAP_YIELD_PERCENT: u64 = 20;

const ORDERING: &str = "Each event carries an invocation and a response stamp from one global \
AtomicU64 fetch_add(SeqCst) taken just before and just after the real atomic step (the lock() call \
for Lock, the winning CAS for Acquire and TryLock, the failing CAS for TryLockFail, the store(false) \
of the guard's drop for Unlock), and the trace is a linearization: a total order that places every \
event inside its (invocation, response) interval, keeps each thread's program order and satisfies \
the canonical sequential semantics at every step.";

// ---------------------------------------------------------------------------------------------
// The canonical vocabulary and its sequential semantics
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    Lock,
    Acquire,
    TryLock,
    TryLockFail,
    Unlock,
}

const ACTIONS: [Action; 5] = [Action::Lock, Action::Acquire, Action::TryLock, Action::TryLockFail, Action::Unlock];

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Pc {
    Idle,
    Spinning,
    Locked,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Req {
    None,
    Lock,
    Try,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct State {
    locked: bool,
    pc: [Pc; N],
    request: [Req; N],
}

struct SpinModel;

impl Model for SpinModel {
    type Action = Action;
    type State = State;
    const THREADS: &'static [&'static str] = &THREADS;

    fn init() -> State {
        State { locked: false, pc: [Pc::Idle; N], request: [Req::None; N] }
    }

    fn step(s: &State, t: usize, a: Action) -> Option<State> {
        let mut s = *s;
        match a {
            Action::Lock if s.pc[t] == Pc::Idle => {
                s.pc[t] = Pc::Spinning;
                s.request[t] = Req::Lock;
            }
            Action::Acquire if s.pc[t] == Pc::Spinning && !s.locked => {
                s.locked = true;
                s.pc[t] = Pc::Locked;
            }
            Action::TryLock if s.pc[t] == Pc::Idle && !s.locked => {
                s.locked = true;
                s.pc[t] = Pc::Locked;
                s.request[t] = Req::Try;
            }
            Action::TryLockFail if s.pc[t] == Pc::Idle && s.locked => {}
            Action::Unlock if s.pc[t] == Pc::Locked => {
                s.locked = false;
                s.pc[t] = Pc::Idle;
                s.request[t] = Req::None;
            }
            _ => return None,
        }
        Some(s)
    }

    fn name(a: Action) -> &'static str {
        match a {
            Action::Lock => "Lock",
            Action::Acquire => "Acquire",
            Action::TryLock => "TryLock",
            Action::TryLockFail => "TryLockFail",
            Action::Unlock => "Unlock",
        }
    }
}

impl State {
    fn to_json(&self) -> String {
        let pc = |p: Pc| match p {
            Pc::Idle => "\"idle\"",
            Pc::Spinning => "\"spinning\"",
            Pc::Locked => "\"locked\"",
        };
        let rq = |r: Req| match r {
            Req::None => "\"none\"",
            Req::Lock => "\"lock\"",
            Req::Try => "\"try\"",
        };
        let mut out = format!("{{\"locked\":{},\"pc\":", self.locked);
        lintrace::thread_map(&mut out, &THREADS, |i| pc(self.pc[i]).to_string());
        out.push_str(",\"request\":");
        lintrace::thread_map(&mut out, &THREADS, |i| rq(self.request[i]).to_string());
        out.push('}');
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Capture: real threads on a real SpinMutex
// ---------------------------------------------------------------------------------------------

struct Op {
    is_lock: bool,
    gap_yield: bool,
    gap: u64,
    cs_sleep: bool,
    cs: u64,
}

fn worker(tid: usize, seed: u64, ops: usize, mutex: &SpinMutex<u64>, clock: &Clock, barrier: &Barrier) -> Vec<Event<Action>> {
    // The whole workload is drawn up front so that nothing but busy work, yields and stamps
    // happens between operations.
    let mut rng = SplitMix64::for_thread(seed, tid);
    let plan: Vec<Op> = (0..ops)
        .map(|_| Op {
            is_lock: rng.percent(LOCK_PERCENT),
            gap_yield: rng.percent(GAP_YIELD_PERCENT),
            gap: rng.range(GAP_UNITS),
            cs_sleep: rng.percent(CS_SLEEP_PERCENT),
            cs: rng.range(CS_UNITS),
        })
        .collect();
    let mut log = Vec::with_capacity(3 * ops);
    barrier.wait();
    for op in &plan {
        if op.gap_yield {
            std::thread::yield_now();
        }
        busy(op.gap);
        let sleep = op.cs_sleep.then_some(CS_SLEEP);
        if op.is_lock {
            let a = clock.stamp(); // invocation of lock(): the point of Lock
            let mut g = mutex.lock();
            let b = clock.stamp(); // response of the winning CAS, inside the CS
            let seen = lintrace::counted_section(&mut g, op.cs, sleep);
            let c = clock.stamp(); // inside the CS, just before the guard's drop
            drop(g);
            let d = clock.stamp(); // just after store(false)
            log.push(Event::point(Action::Lock, a));
            log.push(Event::section(Action::Acquire, a, b, seen, (b, c)));
            log.push(Event::new(Action::Unlock, c, d));
        } else {
            let a = clock.stamp(); // invocation of try_lock()
            let r = mutex.try_lock();
            let b = clock.stamp(); // response of try_lock()
            match r {
                Some(mut g) => {
                    let seen = lintrace::counted_section(&mut g, op.cs, sleep);
                    let c = clock.stamp();
                    drop(g);
                    let d = clock.stamp();
                    log.push(Event::section(Action::TryLock, a, b, seen, (b, c)));
                    log.push(Event::new(Action::Unlock, c, d));
                }
                None => log.push(Event::new(Action::TryLockFail, a, b)),
            }
        }
    }
    log
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

fn main() {
    let usage = lintrace::usage(PROG, "every action");
    let args = lintrace::parse_args(PROG, &usage);

    // ---- capture ------------------------------------------------------------------------
    let mutex = Arc::new(SpinMutex::<u64>::new(0));
    let clock = Arc::new(Clock::new());
    let t0 = Instant::now();
    let (m, c, seed, ops) = (mutex.clone(), clock.clone(), args.seed, args.ops);
    let logs = lintrace::run_threads(&THREADS, move |tid, barrier| worker(tid, seed, ops, &m, &c, barrier));
    let capture_time = t0.elapsed();

    // ---- post-run checks on the real data -----------------------------------------------
    let final_counter = *mutex.lock();
    let sections: Vec<(u64, u64, u64)> = logs
        .iter()
        .flatten()
        .filter(|e| matches!(e.action, Action::Acquire | Action::TryLock))
        .map(|e| (e.cs.0, e.cs.1, e.seen))
        .collect();
    if let Err(e) = lintrace::check_exclusive_sections(sections, final_counter) {
        fail(PROG, e);
    }

    // ---- linearize ------------------------------------------------------------------------
    let t1 = Instant::now();
    let lin = linearize::<SpinModel>(&logs).unwrap_or_else(|e| fail(PROG, e));
    let lin_time = t1.elapsed();

    // Replay the order through the canonical semantics, collect the trace and statistics.
    let mut out = lintrace::meta_line("spin", args.seed, args.ops, &THREADS, &lintrace::threads_constant(&THREADS), HARNESS, CRATE, ORDERING);
    let mut state = SpinModel::init();
    lintrace::step_line(&mut out, 0, "Init", None, &state.to_json());
    let mut counts = [0usize; 5];
    // Hand-off: the next acquisition after an Unlock by u is an Acquire by a thread that was
    // already spinning when u unlocked.
    let mut handoffs_to_spinner = 0usize;
    let mut spinning_at_unlock: Option<[bool; N]> = None;
    let mut max_spinners = 0usize;
    let mut steps_with_waiter = 0usize; // steps after which the lock is held and someone spins
    let mut lin_seen = 0u64;
    for (i, (t, e)) in lintrace::in_order(&logs, &lin.order).into_iter().enumerate() {
        state = SpinModel::step(&state, t, e.action)
            .unwrap_or_else(|| fail(PROG, format!("internal error: step {} ({:?} by {}) not enabled", i + 1, e.action, THREADS[t])));
        counts[ACTIONS.iter().position(|&a| a == e.action).expect("a known action")] += 1;
        if matches!(e.action, Action::Acquire | Action::TryLock) {
            if e.seen != lin_seen {
                fail(PROG, format!("linearized acquisition #{} read counter {}", lin_seen, e.seen));
            }
            lin_seen += 1;
            if e.action == Action::Acquire && spinning_at_unlock.map_or(false, |w| w[t]) {
                handoffs_to_spinner += 1;
            }
            spinning_at_unlock = None;
        }
        if e.action == Action::Unlock {
            spinning_at_unlock = Some(state.pc.map(|p| p == Pc::Spinning));
        }
        let spinners = state.pc.iter().filter(|&&p| p == Pc::Spinning).count();
        max_spinners = max_spinners.max(spinners);
        if state.locked && spinners > 0 {
            steps_with_waiter += 1;
        }
        lintrace::step_line(&mut out, i + 1, SpinModel::name(e.action), Some(THREADS[t]), &state.to_json());
    }

    let mut summary = String::new();
    for (a, c) in ACTIONS.iter().zip(counts.iter()) {
        let _ = write!(summary, "{}={} ", SpinModel::name(*a), c);
    }
    eprintln!(
        "{}: seed={} ops={} events={} | {}| counter={} | hand-offs to a spinning thread={} \
         steps with a spinner waiting on a held lock={} max spinners={} | capture {:.3} ms, linearize {:.3} ms ({} dead ends)",
        PROG,
        args.seed,
        args.ops,
        lin.order.len(),
        summary,
        final_counter,
        handoffs_to_spinner,
        steps_with_waiter,
        max_spinners,
        capture_time.as_secs_f64() * 1e3,
        lin_time.as_secs_f64() * 1e3,
        lin.dead_ends
    );
    let counts: Vec<(String, usize)> =
        ACTIONS.iter().zip(counts.iter()).map(|(a, &c)| (SpinModel::name(*a).to_string(), c)).collect();
    lintrace::require_each(PROG, &counts, args.min_each);
    lintrace::write_trace(PROG, &args.out, &out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use lintrace::linearize_with;

    fn ev(action: Action, inv: u64, resp: u64) -> Event<Action> {
        Event::new(action, inv, resp)
    }

    fn replay(logs: &[Vec<Event<Action>>], order: &[usize]) -> bool {
        let mut s = SpinModel::init();
        for (t, e) in lintrace::in_order(logs, order) {
            match SpinModel::step(&s, t, e.action) {
                Some(n) => s = n,
                None => return false,
            }
        }
        order.len() == logs.iter().map(|l| l.len()).sum::<usize>()
    }

    #[test]
    fn sequential_history_linearizes() {
        let logs = vec![
            vec![ev(Action::Lock, 1, 1), ev(Action::Acquire, 1, 2), ev(Action::Unlock, 3, 4)],
            vec![ev(Action::TryLock, 5, 6), ev(Action::Unlock, 7, 8)],
            vec![ev(Action::TryLockFail, 9, 10)],
        ];
        // t3's TryLockFail needs a held lock but runs after everything was released.
        assert!(linearize::<SpinModel>(&logs).is_err());
        let logs = vec![
            vec![ev(Action::Lock, 1, 1), ev(Action::Acquire, 1, 2), ev(Action::Unlock, 3, 4)],
            vec![ev(Action::TryLock, 5, 6), ev(Action::Unlock, 9, 10)],
            vec![ev(Action::TryLockFail, 7, 8)],
        ];
        let l = linearize::<SpinModel>(&logs).unwrap();
        assert_eq!(l.order, vec![0, 0, 0, 1, 2, 1]);
        assert!(replay(&logs, &l.order));
    }

    #[test]
    fn overlapping_intervals_need_search() {
        // t1 and t2 both spin; t3 holds the lock and unlocks within (20, 21). t2 really wins
        // (response 25), t1 acquires later (response 40): t1's Acquire must not be placed at the
        // hand-off although its interval allows it there in isolation.
        let logs = vec![
            vec![ev(Action::Lock, 10, 10), ev(Action::Acquire, 10, 40), ev(Action::Unlock, 41, 42)],
            vec![ev(Action::Lock, 12, 12), ev(Action::Acquire, 12, 25), ev(Action::Unlock, 30, 31)],
            vec![ev(Action::TryLock, 1, 2), ev(Action::Unlock, 20, 21)],
        ];
        let l = linearize::<SpinModel>(&logs).unwrap();
        assert!(replay(&logs, &l.order));
        assert_eq!(l.order, vec![2, 0, 1, 2, 1, 1, 0, 0]);
        assert_eq!(l.dead_ends, 0);
        // Preferring the latest response first tries t1's Acquire at the hand-off, gets stuck
        // and must backtrack to the same answer.
        let l = linearize_with::<SpinModel>(&logs, true).unwrap();
        assert!(replay(&logs, &l.order));
        assert_eq!(l.order, vec![2, 0, 1, 2, 1, 1, 0, 0]);
        assert!(l.dead_ends > 0);
    }

    #[test]
    fn two_holders_at_once_is_rejected() {
        // Both acquisitions respond before either unlock is invoked: mutual exclusion broken.
        let logs = vec![
            vec![ev(Action::Lock, 1, 1), ev(Action::Acquire, 1, 3), ev(Action::Unlock, 5, 6)],
            vec![ev(Action::TryLock, 2, 4), ev(Action::Unlock, 7, 8)],
            vec![],
        ];
        let e = linearize::<SpinModel>(&logs).unwrap_err();
        assert!(e.contains("no linearization exists"), "{}", e);
    }

    #[test]
    fn spurious_failure_is_rejected() {
        // A try_lock fails although the lock is free during its whole interval.
        let logs = vec![vec![ev(Action::TryLock, 1, 2), ev(Action::Unlock, 3, 4)], vec![ev(Action::TryLockFail, 5, 6)], vec![]];
        assert!(linearize::<SpinModel>(&logs).is_err());
    }

    #[test]
    fn json_shape() {
        assert_eq!(
            SpinModel::step(&SpinModel::init(), 1, Action::Lock).unwrap().to_json(),
            "{\"locked\":false,\"pc\":{\"t1\":\"idle\",\"t2\":\"spinning\",\"t3\":\"idle\",\"t4\":\"idle\"},\
             \"request\":{\"t1\":\"none\",\"t2\":\"lock\",\"t3\":\"none\",\"t4\":\"none\"}}"
        );
    }
}
