//! rwmutex-trace: capture a trace of the REAL `parking_lot::RwLock` (parking_lot 0.12.1, lock_api
//! 0.4.9, parking_lot_core 0.9.3) under contention and print it as NDJSON in the canonical
//! vocabulary of `tasks/rwmutex/task.yaml`.
//!
//! Three real OS threads (t1, t2, t3) start together on a Barrier and run a seeded workload on one
//! `parking_lot::RwLock<u64>`: `read()`, `try_read()`, `write()`, `try_write()`,
//! `upgradable_read()`, `try_upgradable_read()`, and on the guards `upgrade()`, `try_upgrade()`,
//! `RwLockWriteGuard::downgrade()` and drop. parking_lot is used as shipped: nothing inside it is
//! patched or hooked. Every call is stamped with a global SeqCst counter just before and just
//! after it, and the history is linearized (`lintrace`) against the canonical semantics below,
//! which follow the lock's state word (reader count, WRITER_BIT, UPGRADABLE_BIT) atomic step by
//! atomic step. See README.md for why such an order exists and what is left out.

use lintrace::{busy, fail, linearize, Clock, Event, Model, SplitMix64};
use parking_lot::{RwLock, RwLockUpgradableReadGuard, RwLockWriteGuard};
use std::fmt::Write as _;
use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

const PROG: &str = "rwmutex-trace";
const HARNESS: &str = "rwmutex-trace 1";
const CRATE: &str = "parking_lot 0.12.1 (lock_api 0.4.9, parking_lot_core 0.9.3)";
const THREADS: [&str; 3] = ["t1", "t2", "t3"];
const N: usize = THREADS.len();

/// Workload shape: how a thread's next operation starts (percent, summing to 100).
const READ: u64 = 22;
const TRY_READ: u64 = 12;
const WRITE: u64 = 18;
const TRY_WRITE: u64 = 18;
const UPREAD: u64 = 16; // the rest (14) are try_upgradable_read() calls
/// What an upgradable holder does next (percent): upgrade(), try_upgrade(), else release.
const UPGRADE: u64 = 40;
const TRY_UPGRADE: u64 = 30;
/// Percent of write guards turned into read guards with `RwLockWriteGuard::downgrade`.
const DOWNGRADE: u64 = 35;
const CS_UNITS: (u64, u64) = (50, 1200); // busy work inside a section
const GAP_UNITS: (u64, u64) = (0, 1500); // busy work between two operations
/// Percent of sections in which the holder sleeps for CS_SLEEP, as a preempted holder would:
/// only then do the other threads meet the lock held (see README.md).
const CS_SLEEP_PERCENT: u64 = 30;
const CS_SLEEP: Duration = Duration::from_micros(60);
const GAP_YIELD_PERCENT: u64 = 20;

const ORDERING: &str = "Each event carries an invocation and a response stamp from one global \
AtomicU64 fetch_add(SeqCst) taken just before and just after the call that contains the real atomic \
step(s): read()/write()/upgradable_read() for the call (a point at its invocation) and for the \
acquisition (for write() both the claim of WRITER_BIT and the end of the wait for readers), the \
try_* calls, upgrade() (the claim and the end of the wait), try_upgrade(), downgrade() and the \
guard's drop. The trace is a linearization: a total order that places every event inside its \
(invocation, response) interval, keeps each thread's program order and satisfies the canonical \
sequential semantics at every step. Failed try_write(), try_upgradable_read() and try_upgrade() \
calls change nothing and are not written (a failed try_write can also be caused by the parked \
bits, which are not part of the vocabulary).";

// ---------------------------------------------------------------------------------------------
// The canonical vocabulary and its sequential semantics
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Action {
    Read,
    Write,
    UpRead,
    AcquireReadLock,
    AcquireUpReadLock,
    ClaimWrite,
    AcquireWriteLock,
    TryRead,
    TryReadFail,
    TryUpRead,
    TryWrite,
    Upgrade,
    TryUpgrade,
    Downgrade,
    ReleaseLock,
}

const ACTIONS: [Action; 15] = [
    Action::Read,
    Action::Write,
    Action::UpRead,
    Action::AcquireReadLock,
    Action::AcquireUpReadLock,
    Action::ClaimWrite,
    Action::AcquireWriteLock,
    Action::TryRead,
    Action::TryReadFail,
    Action::TryUpRead,
    Action::TryWrite,
    Action::Upgrade,
    Action::TryUpgrade,
    Action::Downgrade,
    Action::ReleaseLock,
];

impl Action {
    /// Acquisitions that start an exclusive section (the counter is written in it).
    fn exclusive(self) -> bool {
        matches!(self, Action::AcquireWriteLock | Action::TryWrite | Action::TryUpgrade)
    }

    /// Acquisitions that start a shared section (the counter is only read).
    fn shared(self) -> bool {
        matches!(
            self,
            Action::AcquireReadLock | Action::TryRead | Action::AcquireUpReadLock | Action::TryUpRead | Action::Downgrade
        )
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Pc {
    Idle,
    Waiting,
    Reading,
    UpRead,
    Draining,
    Writing,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Req {
    None,
    Read,
    UpRead,
    Write,
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
struct State {
    /// The reader count of the state word (READERS_MASK / ONE_READER): read guards and the
    /// upgradable guard.
    readers: u32,
    writer: bool,
    upgradable: bool,
    pc: [Pc; N],
    request: [Req; N],
}

struct RwModel;

impl Model for RwModel {
    type Action = Action;
    type State = State;
    const THREADS: &'static [&'static str] = &THREADS;

    fn init() -> State {
        State { readers: 0, writer: false, upgradable: false, pc: [Pc::Idle; N], request: [Req::None; N] }
    }

    fn step(s: &State, t: usize, a: Action) -> Option<State> {
        let mut s = *s;
        let (pc, rq) = (s.pc[t], s.request[t]);
        match a {
            Action::Read | Action::Write | Action::UpRead if pc == Pc::Idle => {
                s.pc[t] = Pc::Waiting;
                s.request[t] = match a {
                    Action::Read => Req::Read,
                    Action::Write => Req::Write,
                    _ => Req::UpRead,
                };
            }
            Action::AcquireReadLock if pc == Pc::Waiting && rq == Req::Read && !s.writer => {
                s.pc[t] = Pc::Reading;
                s.readers += 1;
            }
            Action::AcquireUpReadLock if pc == Pc::Waiting && rq == Req::UpRead && !s.writer && !s.upgradable => {
                s.pc[t] = Pc::UpRead;
                s.readers += 1;
                s.upgradable = true;
            }
            Action::ClaimWrite if pc == Pc::Waiting && rq == Req::Write && !s.writer && !s.upgradable => {
                s.pc[t] = Pc::Draining;
                s.writer = true;
            }
            Action::AcquireWriteLock if pc == Pc::Draining && s.readers == 0 => {
                s.pc[t] = Pc::Writing;
            }
            Action::TryRead if pc == Pc::Idle && !s.writer => {
                s.pc[t] = Pc::Reading;
                s.request[t] = Req::Read;
                s.readers += 1;
            }
            Action::TryReadFail if pc == Pc::Idle && s.writer => {}
            Action::TryUpRead if pc == Pc::Idle && !s.writer && !s.upgradable => {
                s.pc[t] = Pc::UpRead;
                s.request[t] = Req::UpRead;
                s.readers += 1;
                s.upgradable = true;
            }
            Action::TryWrite if pc == Pc::Idle && s.readers == 0 && !s.writer && !s.upgradable => {
                s.pc[t] = Pc::Writing;
                s.request[t] = Req::Write;
                s.writer = true;
            }
            Action::Upgrade if pc == Pc::UpRead => {
                s.pc[t] = Pc::Draining;
                s.request[t] = Req::Write;
                s.readers -= 1;
                s.upgradable = false;
                s.writer = true;
            }
            Action::TryUpgrade if pc == Pc::UpRead && s.readers == 1 => {
                s.pc[t] = Pc::Writing;
                s.request[t] = Req::Write;
                s.readers = 0;
                s.upgradable = false;
                s.writer = true;
            }
            Action::Downgrade if pc == Pc::Writing => {
                s.pc[t] = Pc::Reading;
                s.request[t] = Req::Read;
                s.readers += 1;
                s.writer = false;
            }
            Action::ReleaseLock if matches!(pc, Pc::Reading | Pc::UpRead | Pc::Writing) => {
                match pc {
                    Pc::Reading => s.readers -= 1,
                    Pc::UpRead => {
                        s.readers -= 1;
                        s.upgradable = false;
                    }
                    _ => s.writer = false,
                }
                s.pc[t] = Pc::Idle;
                s.request[t] = Req::None;
            }
            _ => return None,
        }
        Some(s)
    }

    /// A claim of WRITER_BIT is placed as early as the history allows: any point of write()
    /// is as true as any other to the stamps, and the earliest one shows the pending writer
    /// that blocks new readers whenever the history has one.
    fn rank(_last: Option<Action>, next: Action) -> u8 {
        u8::from(next != Action::ClaimWrite)
    }

    fn name(a: Action) -> &'static str {
        match a {
            Action::Read => "Read",
            Action::Write => "Write",
            Action::UpRead => "UpRead",
            Action::AcquireReadLock => "AcquireReadLock",
            Action::AcquireUpReadLock => "AcquireUpReadLock",
            Action::ClaimWrite => "ClaimWrite",
            Action::AcquireWriteLock => "AcquireWriteLock",
            Action::TryRead => "TryRead",
            Action::TryReadFail => "TryReadFail",
            Action::TryUpRead => "TryUpRead",
            Action::TryWrite => "TryWrite",
            Action::Upgrade => "Upgrade",
            Action::TryUpgrade => "TryUpgrade",
            Action::Downgrade => "Downgrade",
            Action::ReleaseLock => "ReleaseLock",
        }
    }
}

impl State {
    fn waiting(&self) -> usize {
        self.pc.iter().filter(|&&p| p == Pc::Waiting || p == Pc::Draining).count()
    }

    fn to_json(&self) -> String {
        let pc = |p: Pc| match p {
            Pc::Idle => "\"idle\"",
            Pc::Waiting => "\"waiting\"",
            Pc::Reading => "\"reading\"",
            Pc::UpRead => "\"upread\"",
            Pc::Draining => "\"draining\"",
            Pc::Writing => "\"writing\"",
        };
        let rq = |r: Req| match r {
            Req::None => "\"none\"",
            Req::Read => "\"read\"",
            Req::UpRead => "\"upread\"",
            Req::Write => "\"write\"",
        };
        let mut out =
            format!("{{\"readers\":{},\"writer\":{},\"upgradable\":{},\"pc\":", self.readers, self.writer, self.upgradable);
        lintrace::thread_map(&mut out, &THREADS, |i| pc(self.pc[i]).to_string());
        out.push_str(",\"request\":");
        lintrace::thread_map(&mut out, &THREADS, |i| rq(self.request[i]).to_string());
        out.push('}');
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Capture: real threads on a real parking_lot::RwLock
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Start {
    Read,
    TryRead,
    Write,
    TryWrite,
    UpRead,
    TryUpRead,
}

#[derive(Clone, Copy)]
enum Then {
    Upgrade,
    TryUpgrade,
    Release,
}

struct Op {
    start: Start,
    then: Then,
    downgrade: bool,
    gap_yield: bool,
    gap: u64,
    sleep: [bool; 2],
    cs: [u64; 2],
}

fn plan(rng: &mut SplitMix64) -> Op {
    let k = rng.next() % 100;
    let start = if k < READ {
        Start::Read
    } else if k < READ + TRY_READ {
        Start::TryRead
    } else if k < READ + TRY_READ + WRITE {
        Start::Write
    } else if k < READ + TRY_READ + WRITE + TRY_WRITE {
        Start::TryWrite
    } else if k < READ + TRY_READ + WRITE + TRY_WRITE + UPREAD {
        Start::UpRead
    } else {
        Start::TryUpRead
    };
    let j = rng.next() % 100;
    let then = if j < UPGRADE {
        Then::Upgrade
    } else if j < UPGRADE + TRY_UPGRADE {
        Then::TryUpgrade
    } else {
        Then::Release
    };
    Op {
        start,
        then,
        downgrade: rng.percent(DOWNGRADE),
        gap_yield: rng.percent(GAP_YIELD_PERCENT),
        gap: rng.range(GAP_UNITS),
        sleep: [rng.percent(CS_SLEEP_PERCENT), rng.percent(CS_SLEEP_PERCENT)],
        cs: [rng.range(CS_UNITS), rng.range(CS_UNITS)],
    }
}

/// A shared section: read the counter, busy work (maybe sleeping). Returns what it read.
#[inline(always)]
fn shared_section(value: &u64, units: u64, sleep: bool) -> u64 {
    let seen = black_box(*value);
    busy(units / 2);
    if sleep {
        std::thread::sleep(CS_SLEEP);
    }
    busy(units - units / 2);
    seen
}

/// One thread's history, built as the calls return.
struct Log<'a> {
    clock: &'a Clock,
    events: Vec<Event<Action>>,
}

impl Log<'_> {
    fn stamp(&self) -> u64 {
        self.clock.stamp()
    }
    fn push(&mut self, action: Action, inv: u64, resp: u64) {
        self.events.push(Event::new(action, inv, resp));
    }
    fn section(&mut self, action: Action, inv: u64, resp: u64, seen: u64, end: u64) {
        self.events.push(Event::section(action, inv, resp, seen, (resp, end)));
    }
}

fn worker(tid: usize, seed: u64, ops: usize, lock: &RwLock<u64>, clock: &Clock, barrier: &Barrier) -> Vec<Event<Action>> {
    let mut rng = SplitMix64::for_thread(seed, tid);
    let plans: Vec<Op> = (0..ops).map(|_| plan(&mut rng)).collect();
    let mut log = Log { clock, events: Vec::with_capacity(5 * ops) };
    barrier.wait();
    for op in &plans {
        if op.gap_yield {
            std::thread::yield_now();
        }
        busy(op.gap);
        match op.start {
            Start::Read | Start::TryRead => {
                let a = log.stamp();
                let g = if matches!(op.start, Start::Read) { Some(lock.read()) } else { lock.try_read() };
                let b = log.stamp();
                let Some(g) = g else {
                    log.push(Action::TryReadFail, a, b);
                    continue;
                };
                let seen = shared_section(&g, op.cs[0], op.sleep[0]);
                let c = log.stamp();
                drop(g);
                let d = log.stamp();
                if matches!(op.start, Start::Read) {
                    log.push(Action::Read, a, a);
                    log.section(Action::AcquireReadLock, a, b, seen, c);
                } else {
                    log.section(Action::TryRead, a, b, seen, c);
                }
                log.push(Action::ReleaseLock, c, d);
            }
            Start::Write | Start::TryWrite => {
                let a = log.stamp();
                let g = if matches!(op.start, Start::Write) { Some(lock.write()) } else { lock.try_write() };
                let b = log.stamp();
                let Some(g) = g else { continue }; // a failed try_write is not written
                if matches!(op.start, Start::Write) {
                    log.push(Action::Write, a, a);
                    log.push(Action::ClaimWrite, a, b);
                }
                let acquire = if matches!(op.start, Start::Write) { Action::AcquireWriteLock } else { Action::TryWrite };
                write_then_release(&mut log, g, acquire, a, b, op);
            }
            Start::UpRead | Start::TryUpRead => {
                let a = log.stamp();
                let g = if matches!(op.start, Start::UpRead) { Some(lock.upgradable_read()) } else { lock.try_upgradable_read() };
                let b = log.stamp();
                let Some(g) = g else { continue }; // a failed try_upgradable_read is not written
                let seen = shared_section(&g, op.cs[0], op.sleep[0]);
                let c = log.stamp();
                if matches!(op.start, Start::UpRead) {
                    log.push(Action::UpRead, a, a);
                    log.section(Action::AcquireUpReadLock, a, b, seen, c);
                } else {
                    log.section(Action::TryUpRead, a, b, seen, c);
                }
                match op.then {
                    Then::Upgrade => {
                        let w = RwLockUpgradableReadGuard::upgrade(g);
                        let d = log.stamp();
                        log.push(Action::Upgrade, c, d);
                        write_then_release(&mut log, w, Action::AcquireWriteLock, c, d, op);
                    }
                    Then::TryUpgrade => match RwLockUpgradableReadGuard::try_upgrade(g) {
                        Ok(w) => {
                            let d = log.stamp();
                            write_then_release(&mut log, w, Action::TryUpgrade, c, d, op);
                        }
                        Err(g) => {
                            // The failed try_upgrade is not written; the guard is then dropped.
                            let e = log.stamp();
                            drop(g);
                            let f = log.stamp();
                            log.push(Action::ReleaseLock, e, f);
                        }
                    },
                    Then::Release => {
                        drop(g);
                        let d = log.stamp();
                        log.push(Action::ReleaseLock, c, d);
                    }
                }
            }
        }
    }
    log.events
}

/// The exclusive section of a write guard acquired by `acquire` within (a, b), then either a
/// downgrade and a shared section, or the release.
fn write_then_release(log: &mut Log<'_>, mut g: RwLockWriteGuard<'_, u64>, acquire: Action, a: u64, b: u64, op: &Op) {
    let seen = lintrace::counted_section(&mut g, op.cs[1], op.sleep[1].then_some(CS_SLEEP));
    let c = log.stamp();
    log.section(acquire, a, b, seen, c);
    if op.downgrade {
        let r = RwLockWriteGuard::downgrade(g);
        let d = log.stamp();
        let seen = shared_section(&r, op.cs[0], op.sleep[0]);
        let e = log.stamp();
        log.section(Action::Downgrade, c, d, seen, e);
        drop(r);
        let f = log.stamp();
        log.push(Action::ReleaseLock, e, f);
    } else {
        drop(g);
        let d = log.stamp();
        log.push(Action::ReleaseLock, c, d);
    }
}

// ---------------------------------------------------------------------------------------------
// Checks on the real data
// ---------------------------------------------------------------------------------------------

/// Writers' sections are exclusive among themselves (the counter proves it); no shared section
/// overlaps an exclusive one, and each read the number of exclusive sections that ended before
/// it began.
fn check_sections(logs: &[Vec<Event<Action>>], final_counter: u64) -> Result<(), String> {
    let exclusive: Vec<(u64, u64, u64)> =
        logs.iter().flatten().filter(|e| e.action.exclusive()).map(|e| (e.cs.0, e.cs.1, e.seen)).collect();
    lintrace::check_exclusive_sections(exclusive.clone(), final_counter)?;
    for e in logs.iter().flatten().filter(|e| e.action.shared()) {
        let (start, end) = e.cs;
        if let Some(w) = exclusive.iter().find(|w| w.0 < end && start < w.1) {
            return Err(format!("a shared section [{},{}] overlaps an exclusive one [{},{}]", start, end, w.0, w.1));
        }
        let before = exclusive.iter().filter(|w| w.1 < start).count() as u64;
        if e.seen != before {
            return Err(format!("a shared section at {} read counter {} after {} exclusive sections", start, e.seen, before));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// main
// ---------------------------------------------------------------------------------------------

#[derive(Default, Debug)]
struct Stats {
    counts: [usize; 15],
    /// ClaimWrite or Upgrade steps after which readers still hold the lock (a writer drains).
    claims_with_readers: usize,
    /// Read acquisitions while another thread already reads.
    shared_reads: usize,
    /// TryReadFail steps while the writer only drains (WRITER_BIT blocks new readers).
    blocked_by_draining: usize,
    max_readers: u32,
    max_waiting: usize,
}

fn main() {
    let usage = lintrace::usage(
        PROG,
        "every action, claims of WRITER_BIT while readers hold, read acquisitions beside another reader, and try_read failures against a draining writer",
    );
    let args = lintrace::parse_args(PROG, &usage);

    // ---- capture ------------------------------------------------------------------------
    let lock = Arc::new(RwLock::<u64>::new(0));
    let clock = Arc::new(Clock::new());
    let t0 = Instant::now();
    let (l, c, seed, ops) = (lock.clone(), clock.clone(), args.seed, args.ops);
    let logs = lintrace::run_threads(&THREADS, move |tid, barrier| worker(tid, seed, ops, &l, &c, barrier));
    let capture_time = t0.elapsed();

    // ---- post-run checks on the real data -----------------------------------------------
    if lock.is_locked() {
        fail(PROG, "the lock is still held after every guard was released".to_string());
    }
    let final_counter = *lock.read();
    if let Err(e) = check_sections(&logs, final_counter) {
        fail(PROG, e);
    }

    // ---- linearize ------------------------------------------------------------------------
    let t1 = Instant::now();
    let lin = linearize::<RwModel>(&logs).unwrap_or_else(|e| fail(PROG, e));
    let lin_time = t1.elapsed();

    let mut out = lintrace::meta_line("rwmutex", args.seed, args.ops, &THREADS, &lintrace::threads_constant(&THREADS), HARNESS, CRATE, ORDERING);
    let mut state = RwModel::init();
    lintrace::step_line(&mut out, 0, "Init", None, &state.to_json());
    let mut st = Stats::default();
    for (i, (t, e)) in lintrace::in_order(&logs, &lin.order).into_iter().enumerate() {
        let before = state;
        state = RwModel::step(&state, t, e.action)
            .unwrap_or_else(|| fail(PROG, format!("internal error: step {} ({:?} by {}) not enabled", i + 1, e.action, THREADS[t])));
        st.counts[ACTIONS.iter().position(|&a| a == e.action).expect("a known action")] += 1;
        match e.action {
            Action::ClaimWrite | Action::Upgrade if state.readers > 0 => st.claims_with_readers += 1,
            Action::AcquireReadLock | Action::TryRead if before.pc.iter().any(|&p| p == Pc::Reading || p == Pc::UpRead) => {
                st.shared_reads += 1
            }
            Action::TryReadFail if before.pc.contains(&Pc::Draining) => st.blocked_by_draining += 1,
            _ => {}
        }
        st.max_readers = st.max_readers.max(state.readers);
        st.max_waiting = st.max_waiting.max(state.waiting());
        lintrace::step_line(&mut out, i + 1, RwModel::name(e.action), Some(THREADS[t]), &state.to_json());
    }
    if state != RwModel::init() {
        fail(PROG, "internal error: the trace does not end in the initial state".to_string());
    }

    let mut summary = String::new();
    for (a, c) in ACTIONS.iter().zip(st.counts.iter()) {
        let _ = write!(summary, "{}={} ", RwModel::name(*a), c);
    }
    eprintln!(
        "{}: seed={} ops={} steps={} | {}| counter={} | claims with readers={} reads beside a reader={} \
         try_read blocked by a draining writer={} max readers={} max waiting={} | capture {:.3} ms, linearize {:.3} ms ({} dead ends)",
        PROG,
        args.seed,
        args.ops,
        lin.order.len(),
        summary,
        final_counter,
        st.claims_with_readers,
        st.shared_reads,
        st.blocked_by_draining,
        st.max_readers,
        st.max_waiting,
        capture_time.as_secs_f64() * 1e3,
        lin_time.as_secs_f64() * 1e3,
        lin.dead_ends
    );
    let mut counts: Vec<(String, usize)> =
        ACTIONS.iter().zip(st.counts.iter()).map(|(a, &c)| (RwModel::name(*a).to_string(), c)).collect();
    counts.push(("claims of WRITER_BIT while readers hold".to_string(), st.claims_with_readers));
    counts.push(("read acquisitions beside another reader".to_string(), st.shared_reads));
    counts.push(("try_read failures against a draining writer".to_string(), st.blocked_by_draining));
    lintrace::require_each(PROG, &counts, args.min_each);
    lintrace::write_trace(PROG, &args.out, &out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use Action::*;

    fn ev(action: Action, inv: u64, resp: u64) -> Event<Action> {
        Event::new(action, inv, resp)
    }

    fn run(steps: &[(usize, Action)]) -> Option<State> {
        steps.iter().try_fold(RwModel::init(), |s, &(t, a)| RwModel::step(&s, t, a))
    }

    #[test]
    fn readers_share_and_a_claimed_writer_blocks_new_readers() {
        let s = run(&[(0, TryRead), (1, Read), (1, AcquireReadLock), (2, Write), (2, ClaimWrite)]).unwrap();
        assert_eq!((s.readers, s.writer, s.pc[2]), (2, true, Pc::Draining));
        assert!(RwModel::step(&s, 2, AcquireWriteLock).is_none(), "readers still hold");
        assert!(RwModel::step(&s, 0, ReleaseLock).and_then(|s| RwModel::step(&s, 0, TryRead)).is_none());
        assert!(RwModel::step(&s, 0, ReleaseLock).and_then(|s| RwModel::step(&s, 0, TryReadFail)).is_some());
        let s = run(&[(0, TryRead), (1, TryRead), (2, Write), (2, ClaimWrite), (0, ReleaseLock), (1, ReleaseLock), (2, AcquireWriteLock)]);
        assert_eq!(s.unwrap().pc[2], Pc::Writing);
    }

    #[test]
    fn one_upgradable_reader_beside_readers_and_its_upgrade() {
        let s = run(&[(0, UpRead), (0, AcquireUpReadLock), (1, TryRead)]).unwrap();
        assert_eq!((s.readers, s.upgradable), (2, true));
        assert!(RwModel::step(&s, 2, TryUpRead).is_none());
        assert!(RwModel::step(&s, 0, TryUpgrade).is_none(), "another reader holds");
        let s = RwModel::step(&s, 0, Upgrade).unwrap();
        assert_eq!((s.readers, s.upgradable, s.writer, s.pc[0]), (1, false, true, Pc::Draining));
        let s = run(&[(0, TryUpRead), (0, TryUpgrade), (0, Downgrade), (0, ReleaseLock)]).unwrap();
        assert_eq!(s, RwModel::init());
    }

    #[test]
    fn try_write_needs_a_free_lock() {
        assert!(run(&[(0, TryRead), (1, TryWrite)]).is_none());
        assert!(run(&[(0, TryUpRead), (1, TryWrite)]).is_none());
        assert!(run(&[(0, TryWrite), (1, TryReadFail), (0, ReleaseLock)]).is_some());
    }

    #[test]
    fn writer_waits_for_a_reader_in_real_time() {
        // t1 reads over [2, 20]; t2's write() is invoked at 5 and returns at 25: it must claim
        // the writer bit, wait for t1's release and only then hold the lock.
        let logs = vec![
            vec![ev(TryRead, 1, 2), ev(ReleaseLock, 20, 21)],
            vec![ev(Write, 5, 5), ev(ClaimWrite, 5, 25), ev(AcquireWriteLock, 5, 25), ev(ReleaseLock, 26, 27)],
            vec![ev(TryReadFail, 10, 11)],
        ];
        let l = linearize::<RwModel>(&logs).unwrap();
        let order: Vec<Action> = lintrace::in_order(&logs, &l.order).into_iter().map(|(_, e)| e.action).collect();
        assert_eq!(order, vec![TryRead, Write, ClaimWrite, TryReadFail, ReleaseLock, AcquireWriteLock, ReleaseLock]);
    }

    #[test]
    fn a_reader_beside_a_writer_is_rejected() {
        let logs = vec![vec![ev(TryWrite, 1, 2), ev(ReleaseLock, 10, 11)], vec![ev(TryRead, 3, 4), ev(ReleaseLock, 5, 6)], vec![]];
        assert!(linearize::<RwModel>(&logs).unwrap_err().contains("no linearization exists"));
    }

    #[test]
    fn sections_are_checked() {
        let mut w = ev(TryWrite, 1, 2);
        w.cs = (2, 5);
        w.seen = 0;
        let mut r = ev(TryRead, 6, 7);
        r.cs = (7, 9);
        r.seen = 1;
        assert!(check_sections(&[vec![w], vec![r]], 1).is_ok());
        r.cs = (4, 9);
        assert!(check_sections(&[vec![w], vec![r]], 1).unwrap_err().contains("overlaps"));
        r.cs = (7, 9);
        r.seen = 0;
        assert!(check_sections(&[vec![w], vec![r]], 1).unwrap_err().contains("read counter 0"));
    }

    #[test]
    fn json_shape() {
        let s = run(&[(1, UpRead), (1, AcquireUpReadLock)]).unwrap();
        assert_eq!(
            s.to_json(),
            "{\"readers\":1,\"writer\":false,\"upgradable\":true,\"pc\":{\"t1\":\"idle\",\"t2\":\"upread\",\"t3\":\"idle\"},\
             \"request\":{\"t1\":\"none\",\"t2\":\"upread\",\"t3\":\"none\"}}"
        );
    }
}
