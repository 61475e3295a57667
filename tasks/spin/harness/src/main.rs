//! spin-trace: capture a trace of the REAL `spin::mutex::SpinMutex` (spin 0.9.5) under contention
//! and print it as NDJSON in the canonical vocabulary of `tasks/spin/task.yaml`.
//!
//! Three real OS threads (t1, t2, t3) start together on a Barrier and run a seeded workload of
//! `lock()` and `try_lock()` calls on one `SpinMutex<u64>`. Every operation is stamped with a global
//! `AtomicU64::fetch_add(1, SeqCst)` sequence number just before (invocation) and just after
//! (response) the atomic step it stands for. After the threads join, the events are linearized:
//! a total order is searched in which every event sits inside its (invocation, response) interval,
//! program order per thread is kept, and every step satisfies the canonical sequential semantics.
//! See README.md for the argument why such an order must exist and what it guarantees.

use spin::mutex::SpinMutex;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Barrier};
use std::time::Instant;

const HARNESS: &str = "spin-trace 1";
const CRATE: &str = "spin 0.9.5";
const THREADS: [&str; 3] = ["t1", "t2", "t3"];
const N: usize = THREADS.len();

/// Workload shape (percent / busy-wait iterations). Chosen so that traces show failed
/// try_locks, threads spinning while another one holds the lock, and hand-offs.
const LOCK_PERCENT: u64 = 55; // the rest are try_lock() calls
const CS_SPINS: (u64, u64) = (1000, 10000); // busy work inside the critical section
const GAP_SPINS: (u64, u64) = (0, 10000); // busy wait between two operations
/// Percent of gaps that also call `std::thread::yield_now()`. On a machine with fewer free
/// cores than threads the scheduler otherwise tends to run whole threads back to back and the
/// trace shows no contention at all; yielding between operations (never while holding the
/// lock) makes the three threads interleave at operation granularity.
const GAP_YIELD_PERCENT: u64 = 0;
/// Busy warm-up of every thread between the Barrier and the workload (see `worker`).
const WARMUP: std::time::Duration = std::time::Duration::from_millis(5);

const ORDERING: &str = "Each event carries an invocation and a response stamp from one global \
AtomicU64 fetch_add(SeqCst) taken just before and just after the real atomic step (the lock() call \
for Lock, the winning CAS for Acquire and TryLock, the failing CAS for TryLockFail, the store(false) \
of the guard's drop for Unlock), and the trace is a linearization: a total order that places every \
event inside its (invocation, response) interval, keeps each thread's program order and satisfies \
the canonical sequential semantics at every step.";

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

#[inline(never)]
fn busy(spins: u64) {
    let mut x = 0u64;
    for i in 0..spins * 16 {
        x = black_box(x.wrapping_add(i));
    }
    black_box(x);
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
}

const ACTIONS: [Action; 5] = [
    Action::Lock,
    Action::Acquire,
    Action::TryLock,
    Action::TryLockFail,
    Action::Unlock,
];

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Lock => "Lock",
            Action::Acquire => "Acquire",
            Action::TryLock => "TryLock",
            Action::TryLockFail => "TryLockFail",
            Action::Unlock => "Unlock",
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Event {
    action: Action,
    /// Stamp taken just before the atomic step (for Lock: the point of the call itself).
    inv: u64,
    /// Stamp taken just after the atomic step (for Lock equal to `inv`: a point event).
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
    Spinning,
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

    /// The canonical sequential semantics: Some(next state) if `a` by thread `t` is enabled.
    fn step(&self, t: usize, a: Action) -> Option<State> {
        let mut s = *self;
        match a {
            Action::Lock => {
                if s.pc[t] != Pc::Idle {
                    return None;
                }
                s.pc[t] = Pc::Spinning;
                s.request[t] = Req::Lock;
            }
            Action::Acquire => {
                if s.pc[t] != Pc::Spinning || s.locked {
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
            Action::Unlock => {
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

    fn to_json(&self, out: &mut String) {
        let pc = |p: Pc| match p {
            Pc::Idle => "idle",
            Pc::Spinning => "spinning",
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
// Capture: real threads on a real SpinMutex
// ---------------------------------------------------------------------------------------------

fn worker(
    tid: usize,
    seed: u64,
    ops: usize,
    mutex: &SpinMutex<u64>,
    seq: &AtomicU64,
    barrier: &Barrier,
    arrived: &AtomicU64,
) -> Vec<Event> {
    // Per-thread stream derived from the seed and the thread index.
    let mut rng = SplitMix64::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ ((tid as u64 + 1) << 56));
    // Pre-draw the whole workload so that nothing but busy waits and stamps happens between ops.
    let plan: Vec<(bool, bool, u64, u64)> = (0..ops)
        .map(|_| {
            let is_lock = rng.next() % 100 < LOCK_PERCENT;
            let yield_first = rng.next() % 100 < GAP_YIELD_PERCENT;
            (is_lock, yield_first, rng.range(GAP_SPINS), rng.range(CS_SPINS))
        })
        .collect();
    let mut log: Vec<Event> = Vec::with_capacity(3 * ops);
    barrier.wait();
    // Threads woken from the Barrier's futex tend to be queued on the waker's CPU and would then
    // run their whole workload back to back, one after another (no contention at all). So all
    // threads first spin together for WARMUP (staying runnable, which lets the kernel spread
    // them over the CPUs), then meet at a spinning rendezvous and start the workload together.
    let warm = Instant::now();
    while warm.elapsed() < WARMUP {
        std::hint::spin_loop();
    }
    arrived.fetch_add(1, SeqCst);
    while arrived.load(SeqCst) < N as u64 {
        std::hint::spin_loop();
    }
    for &(is_lock, yield_first, gap, cs) in &plan {
        if yield_first {
            std::thread::yield_now();
        }
        busy(gap);
        if is_lock {
            let a = seq.fetch_add(1, SeqCst); // invocation of lock(): the point of Lock
            let mut g = mutex.lock();
            let b = seq.fetch_add(1, SeqCst); // response of the winning CAS, inside the CS
            let seen = black_box(*g);
            busy(cs);
            *g = seen + 1;
            let c = seq.fetch_add(1, SeqCst); // inside the CS, just before the guard's drop
            drop(g);
            let d = seq.fetch_add(1, SeqCst); // just after store(false)
            log.push(Event::new(Action::Lock, a, a));
            let mut acq = Event::new(Action::Acquire, a, b);
            acq.seen = seen;
            acq.cs = (b, c);
            log.push(acq);
            log.push(Event::new(Action::Unlock, c, d));
        } else {
            let a = seq.fetch_add(1, SeqCst);
            let r = mutex.try_lock();
            let b = seq.fetch_add(1, SeqCst);
            match r {
                Some(mut g) => {
                    let seen = black_box(*g);
                    busy(cs);
                    *g = seen + 1;
                    let c = seq.fetch_add(1, SeqCst);
                    drop(g);
                    let d = seq.fetch_add(1, SeqCst);
                    let mut tl = Event::new(Action::TryLock, a, b);
                    tl.seen = seen;
                    tl.cs = (b, c);
                    log.push(tl);
                    log.push(Event::new(Action::Unlock, c, d));
                }
                None => log.push(Event::new(Action::TryLockFail, a, b)),
            }
        }
    }
    if std::env::var_os("SPIN_TRACE_DEBUG").is_some() {
        let cpu = std::fs::read_to_string("/proc/thread-self/stat").ok().and_then(|st| {
            st.rsplit(')').next().and_then(|r| r.split_whitespace().nth(36).map(|x| x.to_string()))
        });
        eprintln!(
            "debug {}: cpu={:?} first={:?} last={:?} warm={:?}",
            THREADS[tid],
            cpu,
            log.first().map(|e| e.inv),
            log.last().map(|e| e.resp),
            warm.elapsed()
        );
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
                s.pc[t] = Pc::Spinning;
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
            Action::TryLockFail | Action::Unlock => {}
        }
    }
    s.locked = s.pc.iter().any(|&p| p == Pc::Locked);
    s
}

/// Threads whose next event may be linearized now, best guess first.
fn candidates(logs: &[Vec<Event>; N], idx: &[usize; N]) -> Vec<usize> {
    let heads: Vec<(usize, &Event)> =
        (0..N).filter(|&t| idx[t] < logs[t].len()).map(|t| (t, &logs[t][idx[t]])).collect();
    let state = state_of(logs, idx);
    let mut c: Vec<(u64, usize)> = heads
        .iter()
        // e may go next iff no other pending event responded before e was invoked ...
        .filter(|(t, e)| heads.iter().all(|(u, f)| u == t || f.resp >= e.inv))
        // ... and e is enabled in the current state.
        .filter(|(t, e)| state.step(*t, e.action).is_some())
        .map(|(t, e)| (e.resp, *t))
        .collect();
    c.sort();
    c.into_iter().map(|(_, t)| t).collect()
}

struct Linearized {
    order: Vec<usize>, // thread of each step
    dead_ends: usize,
}

fn linearize(logs: &[Vec<Event>; N]) -> Result<Linearized, String> {
    let total: usize = logs.iter().map(|l| l.len()).sum();
    let mut idx = [0usize; N];
    let mut path: Vec<usize> = Vec::with_capacity(total);
    let mut frames: Vec<(Vec<usize>, usize)> = vec![(candidates(logs, &idx), 0)];
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
            frames.push((candidates(logs, &idx), 0));
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

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

struct Args {
    seed: u64,
    ops: usize,
    out: Option<String>,
}

const USAGE: &str = "usage: spin-trace [--seed N] [--ops K] [--out FILE]\n\
  --seed N   workload seed (default 1)\n\
  --ops K    operations per thread (default 60)\n\
  --out FILE write the NDJSON trace to FILE instead of stdout\n\
Statistics go to stderr. Exit status 0 on success, 2 if no linearization exists or a\n\
post-run check fails, 64 on bad arguments.";

fn parse_args() -> Result<Args, String> {
    let mut a = Args { seed: 1, ops: 60, out: None };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{} needs a value", name));
        match arg.as_str() {
            "--seed" => a.seed = val("--seed")?.parse().map_err(|e| format!("--seed: {}", e))?,
            "--ops" => a.ops = val("--ops")?.parse().map_err(|e| format!("--ops: {}", e))?,
            "--out" => a.out = Some(val("--out")?),
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
    eprintln!("spin-trace: FAILURE: {}", msg);
    std::process::exit(2);
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("spin-trace: {}\n{}", e, USAGE);
            std::process::exit(64);
        }
    };

    // ---- capture ------------------------------------------------------------------------
    let mutex = Arc::new(SpinMutex::<u64>::new(0));
    let seq = Arc::new(AtomicU64::new(1));
    let barrier = Arc::new(Barrier::new(N));
    let arrived = Arc::new(AtomicU64::new(0));
    let t0 = Instant::now();
    let handles: Vec<_> = (0..N)
        .map(|tid| {
            let (m, s, b, r) = (mutex.clone(), seq.clone(), barrier.clone(), arrived.clone());
            let (seed, ops) = (args.seed, args.ops);
            std::thread::Builder::new()
                .name(THREADS[tid].to_string())
                .spawn(move || worker(tid, seed, ops, &m, &s, &b, &r))
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
    for (k, w) in acqs.windows(2).enumerate() {
        if w[0].1 >= w[1].0 {
            fail(format!(
                "critical sections overlap: stamps [{},{}] and [{},{}]",
                w[0].0, w[0].1, w[1].0, w[1].1
            ));
        }
        let _ = k;
    }
    for (k, a) in acqs.iter().enumerate() {
        if a.2 != k as u64 {
            fail(format!(
                "the critical section #{} (by stamp order) read counter {} (expected {})",
                k, a.2, k
            ));
        }
    }

    // ---- linearize ------------------------------------------------------------------------
    let t1 = Instant::now();
    let lin = match linearize(&logs) {
        Ok(l) => l,
        Err(e) => fail(e),
    };
    let lin_time = t1.elapsed();

    // Replay the order through the canonical semantics, collect the trace and statistics.
    let mut out = String::new();
    let _ = write!(
        out,
        "{{\"meta\":{{\"task\":\"spin\",\"seed\":{},\"ops\":{},\"threads\":[\"t1\",\"t2\",\"t3\"],\
         \"constants\":{{\"Threads\":[\"t1\",\"t2\",\"t3\"]}},\"harness\":\"{}\",\"crate\":\"{}\",\
         \"ordering\":\"{}\"}}}}\n",
        args.seed, args.ops, HARNESS, CRATE, ORDERING
    );
    let mut state = State::init();
    out.push_str("{\"step\":0,\"action\":\"Init\",\"state\":");
    state.to_json(&mut out);
    out.push_str("}\n");
    let mut idx = [0usize; N];
    let mut counts = [0usize; 5];
    // Hand-off: the next acquisition after an Unlock by u is an Acquire by a thread that was
    // already spinning when u unlocked.
    let mut handoffs_to_spinner = 0usize;
    let mut spinning_at_unlock: Option<[bool; N]> = None;
    let mut max_spinners = 0usize;
    let mut steps_with_waiter = 0usize; // steps after which the lock is held and someone spins
    let mut lin_seen = 0u64;
    for (i, &t) in lin.order.iter().enumerate() {
        let e = logs[t][idx[t]];
        idx[t] += 1;
        state = match state.step(t, e.action) {
            Some(s) => s,
            None => fail(format!("internal error: step {} ({} by {}) not enabled", i + 1, e.action.name(), THREADS[t])),
        };
        counts[ACTIONS.iter().position(|&a| a == e.action).unwrap()] += 1;
        if matches!(e.action, Action::Acquire | Action::TryLock) {
            if e.seen != lin_seen {
                fail(format!("linearized acquisition #{} read counter {}", lin_seen, e.seen));
            }
            lin_seen += 1;
            if e.action == Action::Acquire && spinning_at_unlock.map_or(false, |w| w[t]) {
                handoffs_to_spinner += 1;
            }
            spinning_at_unlock = None;
        }
        if e.action == Action::Unlock {
            let mut w = [false; N];
            for u in 0..N {
                w[u] = state.pc[u] == Pc::Spinning;
            }
            spinning_at_unlock = Some(w);
        }
        let spinners = state.pc.iter().filter(|&&p| p == Pc::Spinning).count();
        max_spinners = max_spinners.max(spinners);
        if state.locked && spinners > 0 {
            steps_with_waiter += 1;
        }
        let _ = write!(
            out,
            "{{\"step\":{},\"action\":\"{}\",\"actor\":\"{}\",\"state\":",
            i + 1,
            e.action.name(),
            THREADS[t]
        );
        state.to_json(&mut out);
        out.push_str("}\n");
    }

    match &args.out {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &out) {
                eprintln!("spin-trace: cannot write {}: {}", path, e);
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

    let mut summary = String::new();
    for (a, c) in ACTIONS.iter().zip(counts.iter()) {
        let _ = write!(summary, "{}={} ", a.name(), c);
    }
    eprintln!(
        "spin-trace: seed={} ops={} events={} | {}| counter={} | hand-offs to a spinning thread={} \
         steps with a spinner waiting on a held lock={} max spinners={} | capture {:.3} ms, linearize {:.3} ms ({} dead ends)",
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
}
