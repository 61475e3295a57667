//! mutex-trace: capture a trace of the REAL `parking_lot::Mutex` (parking_lot 0.12.1, lock_api
//! 0.4.9, parking_lot_core 0.9.3) under contention and print it as NDJSON in the canonical
//! vocabulary of `tasks/mutex/task.yaml`.
//!
//! Four real OS threads (t1 to t4) start together on a Barrier and run a seeded workload of
//! `lock()` and `try_lock()` calls on one `parking_lot::Mutex<u64>`; every guard is released
//! either by dropping it (`unlock`) or by `MutexGuard::unlock_fair` (a fair unlock, which hands
//! the lock directly to a parked waiter). parking_lot is used as shipped: no instrumentation
//! inside it. Every operation is stamped with a global `AtomicU64::fetch_add(1, SeqCst)` sequence
//! number just before (invocation) and just after (response) the call that contains its atomic
//! step. After the threads join, the events are linearized: a total order is searched in which
//! every event sits inside its (invocation, response) interval, program order per thread is kept,
//! and every step satisfies the canonical sequential semantics. An `unlock_fair` directly followed
//! by the acquisition of a thread that was already waiting is then written as ONE step, the
//! hand-off (see README.md for why this is a faithful reading and what is not observable).

use lintrace::{busy, fail, linearize, Clock, Event, Model, SplitMix64};
use parking_lot::{Mutex, MutexGuard};
use std::fmt::Write as _;
use std::sync::{Arc, Barrier};
use std::time::Instant;

const HARNESS: &str = "mutex-trace 1";
const CRATE: &str = "parking_lot 0.12.1 (lock_api 0.4.9, parking_lot_core 0.9.3)";
const PROG: &str = "mutex-trace";
const THREADS: [&str; 4] = ["t1", "t2", "t3", "t4"];
const N: usize = THREADS.len();

/// Workload shape (percent / busy-work units).
const LOCK_PERCENT: u64 = 55; // the rest are try_lock() calls
/// Percent of releases done with `MutexGuard::unlock_fair` instead of dropping the guard.
const FAIR_PERCENT: u64 = 45;
const CS_UNITS: (u64, u64) = (50, 1500); // busy work inside the critical section
const GAP_UNITS: (u64, u64) = (0, 1500); // busy work between two operations
/// Percent of critical sections in which the holder sleeps for CS_SLEEP while it holds the lock,
/// as a preempted holder would. Only then do waiters in lock() exhaust parking_lot's short
/// adaptive spinning (SpinWait: 3 rounds of cpu_relax, then 7 yields) and park, so that a
/// fair unlock has somebody to hand the lock to. See README.md.
const CS_SLEEP_PERCENT: u64 = 30;
const CS_SLEEP: std::time::Duration = std::time::Duration::from_micros(60);
/// Percent of gaps between operations that start with `yield_now()` (never while holding).
const GAP_YIELD_PERCENT: u64 = 20;

const ORDERING: &str = "Each event carries an invocation and a response stamp from one global \
AtomicU64 fetch_add(SeqCst) taken just before and just after the call that contains the real \
atomic step (the lock() call for Lock, lock() until it returned for Acquire, try_lock() for TryLock \
and TryLockFail, the guard's drop for Unlock, MutexGuard::unlock_fair for UnlockFair), and the trace \
is a linearization: a total order that places every event inside its (invocation, response) \
interval, keeps each thread's program order and satisfies the canonical sequential semantics at \
every step. An UnlockFair directly followed in that order by the Acquire of a thread that was \
already waiting is written as one UnlockFair step that hands the lock over (locked stays TRUE).";


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
    UnlockFair,
}

const ACTIONS: [Action; 6] =
    [Action::Lock, Action::Acquire, Action::TryLock, Action::TryLockFail, Action::Unlock, Action::UnlockFair];

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Pc {
    Idle,
    Waiting,
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

struct MutexModel;

impl Model for MutexModel {
    type Action = Action;
    type State = State;
    const THREADS: &'static [&'static str] = &THREADS;

    fn init() -> State {
        State { locked: false, pc: [Pc::Idle; N], request: [Req::None; N] }
    }

    /// UnlockFair here is its releasing branch; its hand-off branch is `State::handoff` (an
    /// UnlockFair fused with the waiter's Acquire).
    fn step(s: &State, t: usize, a: Action) -> Option<State> {
        let mut s = *s;
        match a {
            Action::Lock if s.pc[t] == Pc::Idle => {
                s.pc[t] = Pc::Waiting;
                s.request[t] = Req::Lock;
            }
            Action::Acquire if s.pc[t] == Pc::Waiting && !s.locked => {
                s.locked = true;
                s.pc[t] = Pc::Locked;
            }
            Action::TryLock if s.pc[t] == Pc::Idle && !s.locked => {
                s.locked = true;
                s.pc[t] = Pc::Locked;
                s.request[t] = Req::Try;
            }
            Action::TryLockFail if s.pc[t] == Pc::Idle && s.locked => {}
            Action::Unlock | Action::UnlockFair if s.pc[t] == Pc::Locked => {
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
            Action::UnlockFair => "UnlockFair",
        }
    }

    /// Right after an UnlockFair the acquisition of a waiting thread is tried first, so that a
    /// hand-off is written as one step whenever the stamps allow it.
    fn rank(last: Option<Action>, next: Action) -> u8 {
        u8::from(!(last == Some(Action::UnlockFair) && next == Action::Acquire))
    }
}

impl State {
    /// The hand-off branch of UnlockFair(t): the holder t passes the lock to the waiting
    /// thread w; the flag stays set.
    fn handoff(&self, t: usize, w: usize) -> Option<State> {
        let mut s = *self;
        if t == w || s.pc[t] != Pc::Locked || s.pc[w] != Pc::Waiting || !s.locked {
            return None;
        }
        s.pc[t] = Pc::Idle;
        s.request[t] = Req::None;
        s.pc[w] = Pc::Locked;
        Some(s)
    }

    fn waiters(&self) -> usize {
        self.pc.iter().filter(|&&p| p == Pc::Waiting).count()
    }

    fn to_json(&self) -> String {
        let pc = |p: Pc| match p {
            Pc::Idle => "\"idle\"",
            Pc::Waiting => "\"waiting\"",
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
// Capture: real threads on a real parking_lot::Mutex
// ---------------------------------------------------------------------------------------------

struct Op {
    is_lock: bool,
    fair: bool,
    gap_yield: bool,
    gap: u64,
    cs_sleep: bool,
    cs: u64,
}

/// Release the guard the way the plan says and return the (invocation, response) stamps.
#[inline(always)]
fn release(g: MutexGuard<'_, u64>, fair: bool, clock: &Clock) -> (Action, u64, u64) {
    let c = clock.stamp(); // inside the CS, just before the release
    if fair {
        MutexGuard::unlock_fair(g);
    } else {
        drop(g);
    }
    let d = clock.stamp(); // just after the release returned
    (if fair { Action::UnlockFair } else { Action::Unlock }, c, d)
}

fn worker(tid: usize, seed: u64, ops: usize, mutex: &Mutex<u64>, clock: &Clock, barrier: &Barrier) -> Vec<Event<Action>> {
    // The whole workload is drawn up front so that nothing but busy work, yields and stamps
    // happens between operations.
    let mut rng = SplitMix64::for_thread(seed, tid);
    let plan: Vec<Op> = (0..ops)
        .map(|_| Op {
            is_lock: rng.percent(LOCK_PERCENT),
            fair: rng.percent(FAIR_PERCENT),
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
        if op.is_lock {
            let a = clock.stamp(); // invocation of lock(): the point of Lock
            let mut g = mutex.lock();
            let b = clock.stamp(); // lock() returned: we hold the lock
            let seen = lintrace::counted_section(&mut g, op.cs, op.cs_sleep.then_some(CS_SLEEP));
            let (rel, c, d) = release(g, op.fair, clock);
            log.push(Event::point(Action::Lock, a));
            log.push(Event::section(Action::Acquire, a, b, seen, (b, c)));
            log.push(Event::new(rel, c, d));
        } else {
            let a = clock.stamp(); // invocation of try_lock()
            let r = mutex.try_lock();
            let b = clock.stamp(); // response of try_lock()
            match r {
                Some(mut g) => {
                    let seen = lintrace::counted_section(&mut g, op.cs, op.cs_sleep.then_some(CS_SLEEP));
                    let (rel, c, d) = release(g, op.fair, clock);
                    log.push(Event::section(Action::TryLock, a, b, seen, (b, c)));
                    log.push(Event::new(rel, c, d));
                }
                None => log.push(Event::new(Action::TryLockFail, a, b)),
            }
        }
    }
    log
}

// ---------------------------------------------------------------------------------------------
// Hand-offs
// ---------------------------------------------------------------------------------------------

/// One step of the written trace: an event, or an UnlockFair fused with the Acquire of the
/// thread it handed the lock to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Single { t: usize, action: Action },
    Handoff { t: usize, to: usize },
}

type Events<'a> = Vec<(usize, &'a Event<Action>)>;

/// Turn the linearized order into trace steps: an UnlockFair by t directly followed by the
/// Acquire of a thread w (which was therefore waiting when t released) becomes one hand-off
/// step. Both events' intervals contain a common point, so the fused step, too, lies inside
/// the real calls: the order keeps Acquire(w) after UnlockFair(t), hence b_w > c_t, and it keeps
/// Lock(w) before UnlockFair(t), hence a_w < d_t.
fn fuse(events: &Events<'_>) -> Result<Vec<(Step, Vec<Event<Action>>)>, String> {
    let mut steps = Vec::with_capacity(events.len());
    let mut i = 0;
    while i < events.len() {
        let (t, e) = events[i];
        if e.action == Action::UnlockFair && i + 1 < events.len() && events[i + 1].1.action == Action::Acquire {
            let (w, f) = events[i + 1];
            if !(f.resp > e.inv && f.inv < e.resp) {
                return Err(format!(
                    "internal error: hand-off {}->{} without overlapping intervals ({},{}) ({},{})",
                    THREADS[t], THREADS[w], e.inv, e.resp, f.inv, f.resp
                ));
            }
            steps.push((Step::Handoff { t, to: w }, vec![*e, *f]));
            i += 2;
            continue;
        }
        steps.push((Step::Single { t, action: e.action }, vec![*e]));
        i += 1;
    }
    Ok(steps)
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

/// What the written trace shows, for stderr and --min-each.
#[derive(Default, Debug)]
struct Stats {
    counts: [usize; 6],
    /// UnlockFair steps that handed the lock over (locked stayed TRUE).
    handoffs: usize,
    /// UnlockFair steps that released the lock while some thread was waiting.
    fair_release_with_waiter: usize,
    /// UnlockFair steps that released the lock with nobody waiting.
    fair_release_alone: usize,
    /// Unlock steps directly followed by the Acquire of a waiting thread.
    unlock_then_waiter_acquires: usize,
    /// TryLock steps that won while some thread was waiting in lock().
    trylock_barging: usize,
    /// Steps after which the lock is held and some thread waits.
    steps_with_waiter: usize,
    max_waiters: usize,
}

fn main() {
    let usage = lintrace::usage(
        PROG,
        "every action, UnlockFair hand-offs, UnlockFair releases while a thread waits, and TryLock wins while a thread waits",
    );
    let args = lintrace::parse_args(PROG, &usage);

    // ---- capture ------------------------------------------------------------------------
    let mutex = Arc::new(Mutex::<u64>::new(0));
    let clock = Arc::new(Clock::new());
    let t0 = Instant::now();
    let (m, c, seed, ops) = (mutex.clone(), clock.clone(), args.seed, args.ops);
    let logs = lintrace::run_threads(&THREADS, move |tid, barrier| worker(tid, seed, ops, &m, &c, barrier));
    let capture_time = t0.elapsed();

    // ---- post-run checks on the real data -----------------------------------------------
    if mutex.is_locked() {
        fail(PROG, "the mutex is still locked after every guard was released".to_string());
    }
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
    let lin = linearize::<MutexModel>(&logs).unwrap_or_else(|e| fail(PROG, e));
    let steps = fuse(&lintrace::in_order(&logs, &lin.order)).unwrap_or_else(|e| fail(PROG, e));
    let lin_time = t1.elapsed();

    // Replay the steps through the canonical semantics, collect the trace and statistics.
    let mut out = lintrace::meta_line("mutex", args.seed, args.ops, &THREADS, &lintrace::threads_constant(&THREADS), HARNESS, CRATE, ORDERING);
    let mut state = MutexModel::init();
    lintrace::step_line(&mut out, 0, "Init", None, &state.to_json());
    let mut st = Stats::default();
    let mut lin_seen = 0u64;
    let mut prev_plain_unlock = false;
    for (i, (step, events)) in steps.iter().enumerate() {
        let before = state;
        let (actor, action, next) = match *step {
            Step::Single { t, action } => (t, action, MutexModel::step(&state, t, action)),
            Step::Handoff { t, to } => (t, Action::UnlockFair, state.handoff(t, to)),
        };
        state = next.unwrap_or_else(|| fail(PROG, format!("internal error: step {} ({:?}) not enabled", i + 1, step)));
        st.counts[ACTIONS.iter().position(|&a| a == action).expect("a known action")] += 1;
        let acquisition = events.iter().find(|e| matches!(e.action, Action::Acquire | Action::TryLock));
        if let Some(e) = acquisition {
            if e.seen != lin_seen {
                fail(PROG, format!("linearized acquisition #{} read counter {}", lin_seen, e.seen));
            }
            lin_seen += 1;
        }
        match *step {
            Step::Handoff { .. } => st.handoffs += 1,
            Step::Single { action: Action::Acquire, .. } if prev_plain_unlock => st.unlock_then_waiter_acquires += 1,
            Step::Single { action: Action::TryLock, .. } if before.waiters() > 0 => st.trylock_barging += 1,
            Step::Single { action: Action::UnlockFair, .. } if before.waiters() > 0 => st.fair_release_with_waiter += 1,
            Step::Single { action: Action::UnlockFair, .. } => st.fair_release_alone += 1,
            _ => {}
        }
        prev_plain_unlock = matches!(step, Step::Single { action: Action::Unlock, .. });
        let waiters = state.waiters();
        st.max_waiters = st.max_waiters.max(waiters);
        if state.locked && waiters > 0 {
            st.steps_with_waiter += 1;
        }
        lintrace::step_line(&mut out, i + 1, MutexModel::name(action), Some(THREADS[actor]), &state.to_json());
    }
    if state != MutexModel::init() {
        fail(PROG, "internal error: the trace does not end in the initial state".to_string());
    }

    let mut summary = String::new();
    for (a, c) in ACTIONS.iter().zip(st.counts.iter()) {
        let _ = write!(summary, "{}={} ", MutexModel::name(*a), c);
    }
    eprintln!(
        "{}: seed={} ops={} events={} steps={} | {}| counter={} | UnlockFair: hand-offs={} \
         releases with a waiter={} releases alone={} | Unlock directly followed by a waiter's Acquire={} \
         | TryLock while a thread waits={} | steps with a waiter on a held lock={} max waiters={} \
         | capture {:.3} ms, linearize {:.3} ms ({} dead ends)",
        PROG,
        args.seed,
        args.ops,
        lin.order.len(),
        steps.len(),
        summary,
        final_counter,
        st.handoffs,
        st.fair_release_with_waiter,
        st.fair_release_alone,
        st.unlock_then_waiter_acquires,
        st.trylock_barging,
        st.steps_with_waiter,
        st.max_waiters,
        capture_time.as_secs_f64() * 1e3,
        lin_time.as_secs_f64() * 1e3,
        lin.dead_ends
    );
    let mut counts: Vec<(String, usize)> =
        ACTIONS.iter().zip(st.counts.iter()).map(|(a, &c)| (MutexModel::name(*a).to_string(), c)).collect();
    counts.push(("UnlockFair hand-offs".to_string(), st.handoffs));
    counts.push(("UnlockFair releases while a thread waits".to_string(), st.fair_release_with_waiter));
    counts.push(("TryLock wins while a thread waits".to_string(), st.trylock_barging));
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
        let mut s = MutexModel::init();
        for (t, e) in lintrace::in_order(logs, order) {
            match MutexModel::step(&s, t, e.action) {
                Some(n) => s = n,
                None => return false,
            }
        }
        order.len() == logs.iter().map(|l| l.len()).sum::<usize>()
    }

    fn steps(logs: &[Vec<Event<Action>>]) -> Vec<Step> {
        let l = linearize::<MutexModel>(logs).unwrap();
        assert!(replay(logs, &l.order));
        fuse(&lintrace::in_order(logs, &l.order)).unwrap().into_iter().map(|(s, _)| s).collect()
    }

    #[test]
    fn sequential_history_linearizes() {
        let logs = vec![
            vec![ev(Action::Lock, 1, 1), ev(Action::Acquire, 1, 2), ev(Action::Unlock, 3, 4)],
            vec![ev(Action::TryLock, 5, 6), ev(Action::UnlockFair, 7, 8)],
            vec![ev(Action::TryLockFail, 9, 10)],
        ];
        // t3's TryLockFail needs a held lock but runs after everything was released.
        assert!(linearize::<MutexModel>(&logs).is_err());
        let logs = vec![
            vec![ev(Action::Lock, 1, 1), ev(Action::Acquire, 1, 2), ev(Action::Unlock, 3, 4)],
            vec![ev(Action::TryLock, 5, 6), ev(Action::UnlockFair, 9, 10)],
            vec![ev(Action::TryLockFail, 7, 8)],
        ];
        let l = linearize::<MutexModel>(&logs).unwrap();
        assert_eq!(l.order, vec![0, 0, 0, 1, 2, 1]);
        assert!(steps(&logs).iter().all(|s| matches!(s, Step::Single { .. })));
    }

    #[test]
    fn fair_unlock_to_a_waiter_is_one_handoff_step() {
        // t1 holds the lock (TryLock), t2 calls lock() and waits; t1's unlock_fair (20, 23)
        // overlaps t2's lock() which returns at 24. A Lock by t3 at 21 could be placed between
        // the release and t2's acquisition; the preference puts the acquisition first.
        let logs = vec![
            vec![ev(Action::TryLock, 1, 2), ev(Action::UnlockFair, 20, 23)],
            vec![ev(Action::Lock, 5, 5), ev(Action::Acquire, 5, 24), ev(Action::Unlock, 30, 31)],
            vec![ev(Action::Lock, 21, 21), ev(Action::Acquire, 21, 40), ev(Action::UnlockFair, 41, 42)],
        ];
        let steps = steps(&logs);
        assert!(steps.contains(&Step::Handoff { t: 0, to: 1 }), "{:?}", steps);
        // t3's final UnlockFair has nobody waiting: a plain release step.
        assert!(matches!(steps.last().unwrap(), Step::Single { t: 2, action: Action::UnlockFair }));
        let mut s = MutexModel::init();
        for step in &steps {
            s = match *step {
                Step::Single { t, action } => MutexModel::step(&s, t, action).unwrap(),
                Step::Handoff { t, to } => s.handoff(t, to).unwrap(),
            };
        }
        assert_eq!(s, MutexModel::init());
    }

    #[test]
    fn barging_try_lock_leaves_a_fair_release() {
        // t2 waits in lock(); t1's unlock_fair releases and t3's try_lock (which responded before
        // t2's lock() returned) takes the lock first: no hand-off, a release with a waiter.
        let logs = vec![
            vec![ev(Action::TryLock, 1, 2), ev(Action::UnlockFair, 10, 11)],
            vec![ev(Action::Lock, 3, 3), ev(Action::Acquire, 3, 30), ev(Action::Unlock, 31, 32)],
            vec![ev(Action::TryLock, 12, 13), ev(Action::Unlock, 14, 15)],
        ];
        assert!(steps(&logs).iter().all(|s| matches!(s, Step::Single { .. })));
    }

    #[test]
    fn overlapping_intervals_need_search() {
        // t1 and t2 wait; t3 holds the lock and unlocks within (20, 21). t2 really wins
        // (response 25), t1 acquires later (response 40): t1's Acquire must not be placed at the
        // hand-off although its interval allows it there in isolation.
        let logs = vec![
            vec![ev(Action::Lock, 10, 10), ev(Action::Acquire, 10, 40), ev(Action::Unlock, 41, 42)],
            vec![ev(Action::Lock, 12, 12), ev(Action::Acquire, 12, 25), ev(Action::Unlock, 30, 31)],
            vec![ev(Action::TryLock, 1, 2), ev(Action::Unlock, 20, 21)],
        ];
        let l = linearize::<MutexModel>(&logs).unwrap();
        assert!(replay(&logs, &l.order));
        assert_eq!(l.order, vec![2, 0, 1, 2, 1, 1, 0, 0]);
        assert_eq!(l.dead_ends, 0);
        let l = linearize_with::<MutexModel>(&logs, true).unwrap();
        assert!(replay(&logs, &l.order));
        assert_eq!(l.order, vec![2, 0, 1, 2, 1, 1, 0, 0]);
        assert!(l.dead_ends > 0);
    }

    #[test]
    fn two_holders_at_once_is_rejected() {
        let logs = vec![
            vec![ev(Action::Lock, 1, 1), ev(Action::Acquire, 1, 3), ev(Action::Unlock, 5, 6)],
            vec![ev(Action::TryLock, 2, 4), ev(Action::UnlockFair, 7, 8)],
            vec![],
        ];
        let e = linearize::<MutexModel>(&logs).unwrap_err();
        assert!(e.contains("no linearization exists"), "{}", e);
    }

    #[test]
    fn spurious_failure_is_rejected() {
        let logs = vec![vec![ev(Action::TryLock, 1, 2), ev(Action::Unlock, 3, 4)], vec![ev(Action::TryLockFail, 5, 6)], vec![]];
        assert!(linearize::<MutexModel>(&logs).is_err());
    }

    #[test]
    fn handoff_needs_a_waiter() {
        let s = MutexModel::step(&MutexModel::init(), 0, Action::TryLock).unwrap();
        assert!(s.handoff(0, 1).is_none());
        let s = MutexModel::step(&s, 1, Action::Lock).unwrap();
        let h = s.handoff(0, 1).unwrap();
        assert!(h.locked && h.pc[1] == Pc::Locked && h.pc[0] == Pc::Idle && h.request[0] == Req::None);
        assert_eq!(h.request[1], Req::Lock);
    }

    #[test]
    fn json_shape() {
        let s = MutexModel::step(&MutexModel::init(), 1, Action::Lock).unwrap().to_json();
        assert_eq!(
            s,
            "{\"locked\":false,\"pc\":{\"t1\":\"idle\",\"t2\":\"waiting\",\"t3\":\"idle\",\"t4\":\"idle\"},\
             \"request\":{\"t1\":\"none\",\"t2\":\"lock\",\"t3\":\"none\",\"t4\":\"none\"}}"
        );
    }
}
