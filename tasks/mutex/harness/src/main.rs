//! mutex-trace: capture a trace of the REAL `parking_lot::Mutex` (parking_lot 0.12.1, lock_api
//! 0.4.9, parking_lot_core 0.9.3) under contention and print it as NDJSON in the canonical
//! vocabulary of `tasks/mutex/task.yaml`.
//!
//! Three real OS threads (t1, t2, t3) start together on a Barrier and run a seeded workload of
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

use parking_lot::{Mutex, MutexGuard};
use std::collections::HashSet;
use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Barrier};
use std::time::Instant;

const HARNESS: &str = "mutex-trace 1";
const CRATE: &str = "parking_lot 0.12.1 (lock_api 0.4.9, parking_lot_core 0.9.3)";
const THREADS: [&str; 3] = ["t1", "t2", "t3"];
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
// Tiny seeded PRNG (splitmix64); no external crates.
// ---------------------------------------------------------------------------------------------

struct SplitMix64(u64);

impl SplitMix64 {
    fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform-ish in [lo, hi] (modulo bias is irrelevant here).
    fn range(&mut self, (lo, hi): (u64, u64)) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
}

/// Busy work that keeps the core (no `pause`: in a VM, pause-loop exiting would hand the vCPU
/// back to the host). One unit is 16 dependent additions.
#[inline(never)]
fn busy(units: u64) {
    let mut x = 0u64;
    for i in 0..units * 16 {
        x = black_box(x.wrapping_add(i));
    }
    black_box(x);
}

/// The critical section's work: read the counter, busy work (maybe sleeping), write it back.
/// A broken mutual exclusion shows as a lost update.
#[inline(always)]
fn critical_section(g: &mut u64, units: u64, sleep_inside: bool) -> u64 {
    let seen = black_box(*g);
    busy(units / 2);
    if sleep_inside {
        std::thread::sleep(CS_SLEEP);
    }
    busy(units - units / 2);
    *g = seen + 1;
    seen
}

// ---------------------------------------------------------------------------------------------
// Events
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

const ACTIONS: [Action; 6] = [
    Action::Lock,
    Action::Acquire,
    Action::TryLock,
    Action::TryLockFail,
    Action::Unlock,
    Action::UnlockFair,
];

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Lock => "Lock",
            Action::Acquire => "Acquire",
            Action::TryLock => "TryLock",
            Action::TryLockFail => "TryLockFail",
            Action::Unlock => "Unlock",
            Action::UnlockFair => "UnlockFair",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Event {
    action: Action,
    /// Stamp taken just before the call (for Lock: the point of the call itself).
    inv: u64,
    /// Stamp taken just after the call returned (for Lock equal to `inv`: a point event).
    resp: u64,
    /// For Acquire/TryLock: the counter value read inside the critical section.
    seen: u64,
    /// For Acquire/TryLock: (first stamp inside the CS, last stamp inside the CS).
    cs: (u64, u64),
}

impl Event {
    fn new(action: Action, inv: u64, resp: u64) -> Self {
        Event { action, inv, resp, seen: 0, cs: (0, 0) }
    }
}

// ---------------------------------------------------------------------------------------------
// Canonical state
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Pc {
    Idle,
    Waiting,
    Locked,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Req {
    None,
    Lock,
    Try,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct State {
    locked: bool,
    pc: [Pc; N],
    request: [Req; N],
}

impl State {
    fn init() -> Self {
        State { locked: false, pc: [Pc::Idle; N], request: [Req::None; N] }
    }

    /// The canonical sequential semantics of single events, used by the linearizer:
    /// Some(next state) if `a` by thread `t` is enabled. UnlockFair here is its releasing branch;
    /// its hand-off branch is `handoff` below (an UnlockFair fused with the waiter's Acquire).
    fn step(&self, t: usize, a: Action) -> Option<State> {
        let mut s = *self;
        match a {
            Action::Lock => {
                if s.pc[t] != Pc::Idle {
                    return None;
                }
                s.pc[t] = Pc::Waiting;
                s.request[t] = Req::Lock;
            }
            Action::Acquire => {
                if s.pc[t] != Pc::Waiting || s.locked {
                    return None;
                }
                s.locked = true;
                s.pc[t] = Pc::Locked;
            }
            Action::TryLock => {
                if s.pc[t] != Pc::Idle || s.locked {
                    return None;
                }
                s.locked = true;
                s.pc[t] = Pc::Locked;
                s.request[t] = Req::Try;
            }
            Action::TryLockFail => {
                if s.pc[t] != Pc::Idle || !s.locked {
                    return None;
                }
            }
            Action::Unlock | Action::UnlockFair => {
                if s.pc[t] != Pc::Locked {
                    return None;
                }
                s.locked = false;
                s.pc[t] = Pc::Idle;
                s.request[t] = Req::None;
            }
        }
        Some(s)
    }

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

    fn to_json(&self, out: &mut String) {
        let pc = |p: Pc| match p {
            Pc::Idle => "idle",
            Pc::Waiting => "waiting",
            Pc::Locked => "locked",
        };
        let rq = |r: Req| match r {
            Req::None => "none",
            Req::Lock => "lock",
            Req::Try => "try",
        };
        let _ = write!(out, "{{\"locked\":{},\"pc\":{{", self.locked);
        for (i, name) in THREADS.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(out, "{}\"{}\":\"{}\"", sep, name, pc(self.pc[i]));
        }
        out.push_str("},\"request\":{");
        for (i, name) in THREADS.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(out, "{}\"{}\":\"{}\"", sep, name, rq(self.request[i]));
        }
        out.push_str("}}");
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
fn release(g: MutexGuard<'_, u64>, fair: bool, seq: &AtomicU64) -> (Action, u64, u64) {
    let c = seq.fetch_add(1, SeqCst); // inside the CS, just before the release
    if fair {
        MutexGuard::unlock_fair(g);
    } else {
        drop(g);
    }
    let d = seq.fetch_add(1, SeqCst); // just after the release returned
    (if fair { Action::UnlockFair } else { Action::Unlock }, c, d)
}

fn worker(tid: usize, seed: u64, ops: usize, mutex: &Mutex<u64>, seq: &AtomicU64, barrier: &Barrier) -> Vec<Event> {
    // Per-thread stream derived from the seed and the thread index. The whole workload is drawn
    // up front so that nothing but busy work, yields and stamps happens between operations.
    let mut rng = SplitMix64::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ ((tid as u64 + 1) << 56));
    let plan: Vec<Op> = (0..ops)
        .map(|_| Op {
            is_lock: rng.next() % 100 < LOCK_PERCENT,
            fair: rng.next() % 100 < FAIR_PERCENT,
            gap_yield: rng.next() % 100 < GAP_YIELD_PERCENT,
            gap: rng.range(GAP_UNITS),
            cs_sleep: rng.next() % 100 < CS_SLEEP_PERCENT,
            cs: rng.range(CS_UNITS),
        })
        .collect();
    let mut log: Vec<Event> = Vec::with_capacity(3 * ops);
    barrier.wait();
    for op in &plan {
        if op.gap_yield {
            std::thread::yield_now();
        }
        busy(op.gap);
        if op.is_lock {
            let a = seq.fetch_add(1, SeqCst); // invocation of lock(): the point of Lock
            let mut g = mutex.lock();
            let b = seq.fetch_add(1, SeqCst); // lock() returned: we hold the lock
            let seen = critical_section(&mut g, op.cs, op.cs_sleep);
            let (rel, c, d) = release(g, op.fair, seq);
            log.push(Event::new(Action::Lock, a, a));
            let mut acq = Event::new(Action::Acquire, a, b);
            acq.seen = seen;
            acq.cs = (b, c);
            log.push(acq);
            log.push(Event::new(rel, c, d));
        } else {
            let a = seq.fetch_add(1, SeqCst); // invocation of try_lock()
            let r = mutex.try_lock();
            let b = seq.fetch_add(1, SeqCst); // response of try_lock()
            match r {
                Some(mut g) => {
                    let seen = critical_section(&mut g, op.cs, op.cs_sleep);
                    let (rel, c, d) = release(g, op.fair, seq);
                    let mut tl = Event::new(Action::TryLock, a, b);
                    tl.seen = seen;
                    tl.cs = (b, c);
                    log.push(tl);
                    log.push(Event::new(rel, c, d));
                }
                None => log.push(Event::new(Action::TryLockFail, a, b)),
            }
        }
    }
    log
}

// ---------------------------------------------------------------------------------------------
// Linearization (Wing & Gong style search with memoised dead ends)
// ---------------------------------------------------------------------------------------------

/// The canonical state is a function of how far each thread has got: pc/request of t follow
/// from t's last linearized event, and (in any valid prefix) locked <=> some pc is "locked".
fn state_of(logs: &[Vec<Event>; N], idx: &[usize; N]) -> State {
    let mut s = State::init();
    for t in 0..N {
        if idx[t] == 0 {
            continue;
        }
        match logs[t][idx[t] - 1].action {
            Action::Lock => {
                s.pc[t] = Pc::Waiting;
                s.request[t] = Req::Lock;
            }
            Action::Acquire => {
                s.pc[t] = Pc::Locked;
                s.request[t] = Req::Lock;
            }
            Action::TryLock => {
                s.pc[t] = Pc::Locked;
                s.request[t] = Req::Try;
            }
            Action::TryLockFail | Action::Unlock | Action::UnlockFair => {}
        }
    }
    s.locked = s.pc.iter().any(|&p| p == Pc::Locked);
    s
}

/// Threads whose next event may be linearized now, best guess first: the earliest response
/// first, except that right after an UnlockFair the acquisition of a waiting thread comes first
/// (so that a hand-off is written as one step whenever the stamps allow it).
/// `worst_first` reverses the preference (tests use it to exercise backtracking).
fn candidates(logs: &[Vec<Event>; N], idx: &[usize; N], last: Option<Action>, worst_first: bool) -> Vec<usize> {
    let heads: Vec<(usize, &Event)> =
        (0..N).filter(|&t| idx[t] < logs[t].len()).map(|t| (t, &logs[t][idx[t]])).collect();
    let state = state_of(logs, idx);
    let after_fair = last == Some(Action::UnlockFair);
    let mut c: Vec<(bool, u64, usize)> = heads
        .iter()
        // e may go next iff no other pending event responded before e was invoked ...
        .filter(|(t, e)| heads.iter().all(|(u, f)| u == t || f.resp >= e.inv))
        // ... and e is enabled in the current state.
        .filter(|(t, e)| state.step(*t, e.action).is_some())
        .map(|(t, e)| (!(after_fair && e.action == Action::Acquire), e.resp, *t))
        .collect();
    c.sort();
    if worst_first {
        c.reverse();
    }
    c.into_iter().map(|(_, _, t)| t).collect()
}

#[derive(Debug)]
struct Linearized {
    order: Vec<usize>, // thread of each step
    dead_ends: usize,
}

fn linearize(logs: &[Vec<Event>; N]) -> Result<Linearized, String> {
    linearize_with(logs, false)
}

fn linearize_with(logs: &[Vec<Event>; N], worst_first: bool) -> Result<Linearized, String> {
    let total: usize = logs.iter().map(|l| l.len()).sum();
    let mut idx = [0usize; N];
    let mut path: Vec<usize> = Vec::with_capacity(total);
    let mut frames: Vec<(Vec<usize>, usize)> = vec![(candidates(logs, &idx, None, worst_first), 0)];
    // The canonical state, and hence whether the rest can be completed, depends only on the
    // per-thread positions: a position that failed once fails again, whatever the path to it.
    let mut dead: HashSet<[usize; N]> = HashSet::new();
    let mut deepest = (0usize, idx);
    const MAX_DEAD: usize = 5_000_000;
    while path.len() < total {
        let frame = match frames.last_mut() {
            Some(f) => f,
            None => {
                return Err(format!(
                    "no linearization exists: search exhausted; deepest prefix {} of {} events, \
                     stuck with per-thread positions {:?} (next events: {})",
                    deepest.0,
                    total,
                    deepest.1,
                    describe_heads(logs, &deepest.1)
                ))
            }
        };
        if frame.1 < frame.0.len() {
            let t = frame.0[frame.1];
            frame.1 += 1;
            idx[t] += 1;
            if dead.contains(&idx) {
                idx[t] -= 1;
                continue;
            }
            path.push(t);
            if path.len() > deepest.0 {
                deepest = (path.len(), idx);
            }
            let last = Some(logs[t][idx[t] - 1].action);
            frames.push((candidates(logs, &idx, last, worst_first), 0));
        } else {
            frames.pop();
            dead.insert(idx);
            if dead.len() > MAX_DEAD {
                return Err(format!("linearization search gave up after {} dead ends", MAX_DEAD));
            }
            if let Some(t) = path.pop() {
                idx[t] -= 1;
            }
        }
    }
    Ok(Linearized { order: path, dead_ends: dead.len() })
}

fn describe_heads(logs: &[Vec<Event>; N], idx: &[usize; N]) -> String {
    let mut s = String::new();
    for t in 0..N {
        if idx[t] < logs[t].len() {
            let e = &logs[t][idx[t]];
            let _ = write!(s, "{}:{}({},{}) ", THREADS[t], e.action.name(), e.inv, e.resp);
        } else {
            let _ = write!(s, "{}:done ", THREADS[t]);
        }
    }
    s.trim_end().to_string()
}

/// One step of the written trace: an event, or an UnlockFair fused with the Acquire of the
/// thread it handed the lock to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Single { t: usize, action: Action },
    Handoff { t: usize, to: usize },
}

/// Turn the linearized order into trace steps: an UnlockFair by t directly followed by the
/// Acquire of a thread w (which was therefore waiting when t released) becomes one hand-off
/// step. Both events' intervals contain a common point, so the fused step, too, lies inside
/// the real calls: the order keeps Acquire(w) after UnlockFair(t), hence b_w > c_t, and it keeps
/// Lock(w) before UnlockFair(t), hence a_w < d_t.
fn fuse(logs: &[Vec<Event>; N], order: &[usize]) -> Result<Vec<(Step, Option<(Event, Event)>)>, String> {
    let mut idx = [0usize; N];
    let mut steps = Vec::with_capacity(order.len());
    let mut i = 0;
    while i < order.len() {
        let t = order[i];
        let e = logs[t][idx[t]];
        idx[t] += 1;
        if e.action == Action::UnlockFair && i + 1 < order.len() {
            let w = order[i + 1];
            let f = logs[w][idx[w]];
            if f.action == Action::Acquire {
                if !(f.resp > e.inv && f.inv < e.resp) {
                    return Err(format!(
                        "internal error: hand-off {}->{} without overlapping intervals ({},{}) ({},{})",
                        THREADS[t], THREADS[w], e.inv, e.resp, f.inv, f.resp
                    ));
                }
                idx[w] += 1;
                steps.push((Step::Handoff { t, to: w }, Some((e, f))));
                i += 2;
                continue;
            }
        }
        steps.push((Step::Single { t, action: e.action }, None));
        i += 1;
    }
    Ok(steps)
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

struct Args {
    seed: u64,
    ops: usize,
    out: Option<String>,
    min_each: usize,
}

const USAGE: &str = concat!(
    "usage: mutex-trace [--seed N] [--ops K] [--out FILE] [--min-each M]\n",
    "  --seed N      workload seed (default 1)\n",
    "  --ops K       operations per thread (default 60)\n",
    "  --out FILE    write the NDJSON trace to FILE instead of stdout\n",
    "  --min-each M  write nothing and exit 3 unless every action, UnlockFair hand-offs, UnlockFair\n",
    "                releases while a thread waits, and TryLock wins while a thread waits each occur\n",
    "                at least M times (default 0)\n",
    "Statistics go to stderr. Exit status 0 on success, 2 if no linearization exists or a\n",
    "post-run check fails, 3 if --min-each is not met, 64 on bad arguments."
);

fn parse_args() -> Result<Args, String> {
    let mut a = Args { seed: 1, ops: 60, out: None, min_each: 0 };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{} needs a value", name));
        match arg.as_str() {
            "--seed" => a.seed = val("--seed")?.parse().map_err(|e| format!("--seed: {}", e))?,
            "--ops" => a.ops = val("--ops")?.parse().map_err(|e| format!("--ops: {}", e))?,
            "--out" => a.out = Some(val("--out")?),
            "--min-each" => {
                a.min_each = val("--min-each")?.parse().map_err(|e| format!("--min-each: {}", e))?
            }
            "-h" | "--help" => {
                println!("{}", USAGE);
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument {:?}", other)),
        }
    }
    Ok(a)
}

fn fail(msg: String) -> ! {
    eprintln!("mutex-trace: FAILURE: {}", msg);
    std::process::exit(2);
}

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
    /// Plain Unlock steps directly followed by the Acquire of a thread that was waiting.
    unlock_then_waiter_acquires: usize,
    /// TryLock steps that won while some thread was waiting in lock() (barging).
    trylock_barging: usize,
    /// Steps after which the lock is held and some thread waits.
    steps_with_waiter: usize,
    max_waiters: usize,
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("mutex-trace: {}\n{}", e, USAGE);
            std::process::exit(64);
        }
    };

    // ---- capture ------------------------------------------------------------------------
    let mutex = Arc::new(Mutex::<u64>::new(0));
    let seq = Arc::new(AtomicU64::new(1));
    let barrier = Arc::new(Barrier::new(N));
    let t0 = Instant::now();
    let handles: Vec<_> = (0..N)
        .map(|tid| {
            let (m, s, b) = (mutex.clone(), seq.clone(), barrier.clone());
            let (seed, ops) = (args.seed, args.ops);
            std::thread::Builder::new()
                .name(THREADS[tid].to_string())
                .spawn(move || worker(tid, seed, ops, &m, &s, &b))
                .expect("spawn thread")
        })
        .collect();
    let mut logs_vec: Vec<Vec<Event>> = Vec::with_capacity(N);
    for h in handles {
        logs_vec.push(h.join().expect("worker thread panicked"));
    }
    let capture_time = t0.elapsed();
    let logs: [Vec<Event>; N] = logs_vec.try_into().expect("three logs");

    // ---- post-run checks on the real data -----------------------------------------------
    if mutex.is_locked() {
        fail("the mutex is still locked after every guard was released".to_string());
    }
    let final_counter = *mutex.lock();
    let mut acqs: Vec<(u64, u64, u64)> = logs
        .iter()
        .flatten()
        .filter(|e| matches!(e.action, Action::Acquire | Action::TryLock))
        .map(|e| (e.cs.0, e.cs.1, e.seen))
        .collect();
    if final_counter != acqs.len() as u64 {
        fail(format!(
            "counter is {} after join but {} acquisitions succeeded (lost update: mutual exclusion broken)",
            final_counter,
            acqs.len()
        ));
    }
    acqs.sort();
    for w in acqs.windows(2) {
        if w[0].1 >= w[1].0 {
            fail(format!("critical sections overlap: stamps [{},{}] and [{},{}]", w[0].0, w[0].1, w[1].0, w[1].1));
        }
    }
    for (k, a) in acqs.iter().enumerate() {
        if a.2 != k as u64 {
            fail(format!("the critical section #{} (by stamp order) read counter {} (expected {})", k, a.2, k));
        }
    }

    // ---- linearize ------------------------------------------------------------------------
    let t1 = Instant::now();
    let lin = match linearize(&logs) {
        Ok(l) => l,
        Err(e) => fail(e),
    };
    let steps = match fuse(&logs, &lin.order) {
        Ok(s) => s,
        Err(e) => fail(e),
    };
    let lin_time = t1.elapsed();

    // Replay the steps through the canonical semantics, collect the trace and statistics.
    let mut out = String::new();
    let _ = write!(
        out,
        "{{\"meta\":{{\"task\":\"mutex\",\"seed\":{},\"ops\":{},\"threads\":[\"t1\",\"t2\",\"t3\"],\
         \"constants\":{{\"Threads\":[\"t1\",\"t2\",\"t3\"]}},\"harness\":\"{}\",\"crate\":\"{}\",\
         \"ordering\":\"{}\"}}}}\n",
        args.seed, args.ops, HARNESS, CRATE, ORDERING
    );
    let mut state = State::init();
    out.push_str("{\"step\":0,\"action\":\"Init\",\"state\":");
    state.to_json(&mut out);
    out.push_str("}\n");
    let mut st = Stats::default();
    let mut lin_seen = 0u64;
    let mut prev_plain_unlock = false;
    let mut idx = [0usize; N];
    let mut check_seen = |e: &Event| {
        if e.seen != lin_seen {
            fail(format!("linearized acquisition #{} read counter {}", lin_seen, e.seen));
        }
        lin_seen += 1;
    };
    for (i, &(step, pair)) in steps.iter().enumerate() {
        let before = state;
        // The events behind this step (one, or two for a hand-off), in the threads' order.
        let current = match step {
            Step::Single { t, .. } => {
                idx[t] += 1;
                logs[t][idx[t] - 1]
            }
            Step::Handoff { t, to } => {
                idx[t] += 1;
                idx[to] += 1;
                logs[t][idx[t] - 1]
            }
        };
        let (actor, action) = match step {
            Step::Single { t, action } => {
                state = match state.step(t, action) {
                    Some(s) => s,
                    None => fail(format!("internal error: step {} ({} by {}) not enabled", i + 1, action.name(), THREADS[t])),
                };
                (t, action)
            }
            Step::Handoff { t, to } => {
                state = match state.handoff(t, to) {
                    Some(s) => s,
                    None => fail(format!("internal error: step {} (hand-off {}->{}) not enabled", i + 1, THREADS[t], THREADS[to])),
                };
                (t, Action::UnlockFair)
            }
        };
        st.counts[ACTIONS.iter().position(|&a| a == action).unwrap()] += 1;
        match step {
            Step::Handoff { .. } => {
                let (_, acq) = pair.expect("hand-off carries its events");
                check_seen(&acq);
                st.handoffs += 1;
            }
            Step::Single { action: Action::Acquire, .. } => {
                check_seen(&current);
                if prev_plain_unlock {
                    st.unlock_then_waiter_acquires += 1;
                }
            }
            Step::Single { action: Action::TryLock, .. } => {
                check_seen(&current);
                if before.waiters() > 0 {
                    st.trylock_barging += 1;
                }
            }
            Step::Single { action: Action::UnlockFair, .. } => {
                if before.waiters() > 0 {
                    st.fair_release_with_waiter += 1;
                } else {
                    st.fair_release_alone += 1;
                }
            }
            _ => {}
        }
        prev_plain_unlock = matches!(step, Step::Single { action: Action::Unlock, .. });
        let waiters = state.waiters();
        st.max_waiters = st.max_waiters.max(waiters);
        if state.locked && waiters > 0 {
            st.steps_with_waiter += 1;
        }
        let _ = write!(out, "{{\"step\":{},\"action\":\"{}\",\"actor\":\"{}\",\"state\":", i + 1, action.name(), THREADS[actor]);
        state.to_json(&mut out);
        out.push_str("}\n");
    }
    if state != State::init() {
        fail("internal error: the trace does not end in the initial state".to_string());
    }

    let mut summary = String::new();
    for (a, c) in ACTIONS.iter().zip(st.counts.iter()) {
        let _ = write!(summary, "{}={} ", a.name(), c);
    }
    eprintln!(
        "mutex-trace: seed={} ops={} events={} steps={} | {}| counter={} | UnlockFair: hand-offs={} \
         releases with a waiter={} releases alone={} | Unlock directly followed by a waiter's Acquire={} \
         | TryLock while a thread waits={} | steps with a waiter on a held lock={} max waiters={} \
         | capture {:.3} ms, linearize {:.3} ms ({} dead ends)",
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
    let mut short: Vec<(String, usize)> = ACTIONS
        .iter()
        .zip(st.counts.iter())
        .map(|(a, &c)| (a.name().to_string(), c))
        .collect();
    short.push(("UnlockFair hand-offs".to_string(), st.handoffs));
    short.push(("UnlockFair releases while a thread waits".to_string(), st.fair_release_with_waiter));
    short.push(("TryLock wins while a thread waits".to_string(), st.trylock_barging));
    if let Some((what, c)) = short.iter().find(|(_, c)| *c < args.min_each) {
        eprintln!(
            "mutex-trace: too little contention: {} occur {} times (< --min-each {}); nothing written",
            what, c, args.min_each
        );
        std::process::exit(3);
    }
    match &args.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &out) {
                eprintln!("mutex-trace: cannot write {}: {}", path, e);
                std::process::exit(1);
            }
        }
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            if lock.write_all(out.as_bytes()).and_then(|_| lock.flush()).is_err() {
                std::process::exit(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(action: Action, inv: u64, resp: u64) -> Event {
        Event::new(action, inv, resp)
    }

    fn replay(logs: &[Vec<Event>; N], order: &[usize]) -> bool {
        let mut idx = [0usize; N];
        let mut s = State::init();
        for &t in order {
            match s.step(t, logs[t][idx[t]].action) {
                Some(n) => s = n,
                None => return false,
            }
            idx[t] += 1;
        }
        idx.iter().zip(logs.iter()).all(|(i, l)| *i == l.len())
    }

    #[test]
    fn sequential_history_linearizes() {
        let logs = [
            vec![ev(Action::Lock, 1, 1), ev(Action::Acquire, 1, 2), ev(Action::Unlock, 3, 4)],
            vec![ev(Action::TryLock, 5, 6), ev(Action::UnlockFair, 7, 8)],
            vec![ev(Action::TryLockFail, 9, 10)],
        ];
        // t3's TryLockFail needs a held lock but runs after everything was released.
        assert!(linearize(&logs).is_err());
        let logs = [
            vec![ev(Action::Lock, 1, 1), ev(Action::Acquire, 1, 2), ev(Action::Unlock, 3, 4)],
            vec![ev(Action::TryLock, 5, 6), ev(Action::UnlockFair, 9, 10)],
            vec![ev(Action::TryLockFail, 7, 8)],
        ];
        let l = linearize(&logs).unwrap();
        assert_eq!(l.order, vec![0, 0, 0, 1, 2, 1]);
        assert!(replay(&logs, &l.order));
        let steps = fuse(&logs, &l.order).unwrap();
        assert!(steps.iter().all(|(s, _)| matches!(s, Step::Single { .. })));
    }

    #[test]
    fn fair_unlock_to_a_waiter_is_one_handoff_step() {
        // t1 holds the lock (TryLock), t2 calls lock() and waits; t1's unlock_fair (20, 23)
        // overlaps t2's lock() which returns at 24. A Lock by t3 at 21 could be placed between
        // the release and t2's acquisition; the preference puts the acquisition first.
        let logs = [
            vec![ev(Action::TryLock, 1, 2), ev(Action::UnlockFair, 20, 23)],
            vec![ev(Action::Lock, 5, 5), ev(Action::Acquire, 5, 24), ev(Action::Unlock, 30, 31)],
            vec![ev(Action::Lock, 21, 21), ev(Action::Acquire, 21, 40), ev(Action::UnlockFair, 41, 42)],
        ];
        let l = linearize(&logs).unwrap();
        assert!(replay(&logs, &l.order));
        let steps = fuse(&logs, &l.order).unwrap();
        assert!(steps.iter().any(|(s, _)| *s == Step::Handoff { t: 0, to: 1 }), "{:?}", steps);
        // t3's final UnlockFair has nobody waiting: a plain release step.
        assert!(matches!(steps.last().unwrap().0, Step::Single { t: 2, action: Action::UnlockFair }));
        let mut s = State::init();
        for (step, _) in &steps {
            s = match *step {
                Step::Single { t, action } => s.step(t, action).unwrap(),
                Step::Handoff { t, to } => s.handoff(t, to).unwrap(),
            };
        }
        assert_eq!(s, State::init());
    }

    #[test]
    fn barging_try_lock_leaves_a_fair_release() {
        // t2 waits in lock(); t1's unlock_fair releases and t3's try_lock (which responded before
        // t2's lock() returned) takes the lock first: no hand-off, a release with a waiter.
        let logs = [
            vec![ev(Action::TryLock, 1, 2), ev(Action::UnlockFair, 10, 11)],
            vec![ev(Action::Lock, 3, 3), ev(Action::Acquire, 3, 30), ev(Action::Unlock, 31, 32)],
            vec![ev(Action::TryLock, 12, 13), ev(Action::Unlock, 14, 15)],
        ];
        let l = linearize(&logs).unwrap();
        let steps = fuse(&logs, &l.order).unwrap();
        assert!(steps.iter().all(|(s, _)| matches!(s, Step::Single { .. })), "{:?}", steps);
    }

    #[test]
    fn overlapping_intervals_need_search() {
        // t1 and t2 wait; t3 holds the lock and unlocks within (20, 21). t2 really wins
        // (response 25), t1 acquires later (response 40): t1's Acquire must not be placed at the
        // hand-off although its interval allows it there in isolation.
        let logs = [
            vec![ev(Action::Lock, 10, 10), ev(Action::Acquire, 10, 40), ev(Action::Unlock, 41, 42)],
            vec![ev(Action::Lock, 12, 12), ev(Action::Acquire, 12, 25), ev(Action::Unlock, 30, 31)],
            vec![ev(Action::TryLock, 1, 2), ev(Action::Unlock, 20, 21)],
        ];
        let l = linearize(&logs).unwrap();
        assert!(replay(&logs, &l.order));
        assert_eq!(l.order, vec![2, 0, 1, 2, 1, 1, 0, 0]);
        assert_eq!(l.dead_ends, 0);
        let l = linearize_with(&logs, true).unwrap();
        assert!(replay(&logs, &l.order));
        assert_eq!(l.order, vec![2, 0, 1, 2, 1, 1, 0, 0]);
        assert!(l.dead_ends > 0);
    }

    #[test]
    fn two_holders_at_once_is_rejected() {
        let logs = [
            vec![ev(Action::Lock, 1, 1), ev(Action::Acquire, 1, 3), ev(Action::Unlock, 5, 6)],
            vec![ev(Action::TryLock, 2, 4), ev(Action::UnlockFair, 7, 8)],
            vec![],
        ];
        let e = linearize(&logs).unwrap_err();
        assert!(e.contains("no linearization exists"), "{}", e);
    }

    #[test]
    fn spurious_failure_is_rejected() {
        let logs = [
            vec![ev(Action::TryLock, 1, 2), ev(Action::Unlock, 3, 4)],
            vec![ev(Action::TryLockFail, 5, 6)],
            vec![],
        ];
        assert!(linearize(&logs).is_err());
    }

    #[test]
    fn handoff_needs_a_waiter() {
        let s = State::init().step(0, Action::TryLock).unwrap();
        assert!(s.handoff(0, 1).is_none());
        let s = s.step(1, Action::Lock).unwrap();
        let h = s.handoff(0, 1).unwrap();
        assert!(h.locked && h.pc[1] == Pc::Locked && h.pc[0] == Pc::Idle && h.request[0] == Req::None);
        assert_eq!(h.request[1], Req::Lock);
    }

    #[test]
    fn json_shape() {
        let mut s = String::new();
        State::init().step(1, Action::Lock).unwrap().to_json(&mut s);
        assert_eq!(
            s,
            "{\"locked\":false,\"pc\":{\"t1\":\"idle\",\"t2\":\"waiting\",\"t3\":\"idle\"},\
             \"request\":{\"t1\":\"none\",\"t2\":\"lock\",\"t3\":\"none\"}}"
        );
    }

    #[test]
    fn splitmix_is_deterministic() {
        let mut a = SplitMix64::new(7);
        let mut b = SplitMix64::new(7);
        for _ in 0..100 {
            assert_eq!(a.next(), b.next());
        }
    }
}
