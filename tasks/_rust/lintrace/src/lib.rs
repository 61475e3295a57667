//! lintrace: what the Rust trace harnesses (spin, mutex, rwmutex) share.
//!
//! Each harness runs real threads against a real lock and stamps every operation with a global
//! SeqCst counter just before (invocation) and just after (response) the call that contains its
//! atomic step. This crate turns those per-thread histories into a trace: a total order that puts
//! every event inside its (invocation, response) interval, keeps each thread's program order and
//! lets the task's canonical sequential semantics (a [`Model`]) take every step. Such an order
//! exists whenever the canonical semantics describe the real atomic steps, because the order in
//! which those steps really happened is one; when the search finds none, the history contradicts
//! the semantics, which is a finding, not noise.
//!
//! Besides the search: the workload generator, busy work, the argument parser, the writing of
//! the NDJSON file and the exit codes, so that every harness behaves the same to
//! `sysmobench traces capture`.

use std::collections::HashSet;
use std::fmt::Debug;
use std::fmt::Write as _;
use std::hash::Hash;
use std::hint::black_box;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Barrier};

// ---------------------------------------------------------------------------------------------
// Workload
// ---------------------------------------------------------------------------------------------

/// A tiny seeded PRNG (splitmix64): no external crates, and the same plan on every machine.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// One stream per thread, derived from the run's seed and the thread's index.
    pub fn for_thread(seed: u64, tid: usize) -> Self {
        SplitMix64(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ ((tid as u64 + 1) << 56))
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform-ish in [lo, hi] (modulo bias is irrelevant here).
    pub fn range(&mut self, (lo, hi): (u64, u64)) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// True with the given percent probability.
    pub fn percent(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }
}

/// Busy work that keeps the core. No `pause`: in a VM, pause-loop exiting would hand the vCPU
/// back to the host. One unit is 16 dependent additions.
#[inline(never)]
pub fn busy(units: u64) {
    let mut x = 0u64;
    for i in 0..units * 16 {
        x = black_box(x.wrapping_add(i));
    }
    black_box(x);
}

/// A critical section's work on the shared counter: read it, busy work (sleeping in the middle
/// if asked, as a preempted holder would), write it back plus one. Returns what it read, so that
/// a broken mutual exclusion shows as a lost update.
#[inline(always)]
pub fn counted_section(counter: &mut u64, units: u64, sleep: Option<std::time::Duration>) -> u64 {
    let seen = black_box(*counter);
    busy(units / 2);
    if let Some(d) = sleep {
        std::thread::sleep(d);
    }
    busy(units - units / 2);
    *counter = seen + 1;
    seen
}

/// The global sequence counter every stamp comes from.
#[derive(Default)]
pub struct Clock(AtomicU64);

impl Clock {
    pub fn new() -> Self {
        Clock(AtomicU64::new(1))
    }

    #[inline(always)]
    pub fn stamp(&self) -> u64 {
        self.0.fetch_add(1, SeqCst)
    }
}

/// Runs `work(tid, barrier)` on one named OS thread per name and returns the results in thread
/// order. The workers draw their plans first and then meet on the barrier, so that they start
/// contending together.
pub fn run_threads<T, F>(names: &[&str], work: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize, &Barrier) -> T + Send + Sync + 'static,
{
    let barrier = Arc::new(Barrier::new(names.len()));
    let work = Arc::new(work);
    let handles: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(tid, name)| {
            let (b, w) = (barrier.clone(), work.clone());
            std::thread::Builder::new()
                .name(name.to_string())
                .spawn(move || w(tid, &b))
                .expect("spawn thread")
        })
        .collect();
    handles.into_iter().map(|h| h.join().expect("worker thread panicked")).collect()
}

// ---------------------------------------------------------------------------------------------
// Events and the canonical semantics
// ---------------------------------------------------------------------------------------------

/// One operation of one thread, with the stamps that bound its atomic step.
#[derive(Clone, Copy, Debug)]
pub struct Event<A> {
    pub action: A,
    /// Stamp taken just before the call (for a call's point event, the point itself).
    pub inv: u64,
    /// Stamp taken just after the call returned (equal to `inv` for a point event).
    pub resp: u64,
    /// For an acquisition: the counter value read inside the critical section.
    pub seen: u64,
    /// For an acquisition: (first stamp inside the critical section, last stamp inside it).
    pub cs: (u64, u64),
}

impl<A> Event<A> {
    pub fn new(action: A, inv: u64, resp: u64) -> Self {
        Event { action, inv, resp, seen: 0, cs: (0, 0) }
    }

    /// An event at one instant: a thread entering a call that may wait.
    pub fn point(action: A, at: u64) -> Self {
        Event::new(action, at, at)
    }

    /// An acquisition that read the shared counter `seen` inside the section `cs`.
    pub fn section(action: A, inv: u64, resp: u64, seen: u64, cs: (u64, u64)) -> Self {
        Event { action, inv, resp, seen, cs }
    }
}

/// A task's canonical sequential semantics, the ones its trace speaks.
pub trait Model {
    type Action: Copy + Eq + Debug;
    type State: Clone + Eq + Hash + Debug;

    /// The thread names, in thread-index order.
    const THREADS: &'static [&'static str];

    fn init() -> Self::State;

    /// Some(next state) if `a` by thread `t` is enabled in `s`.
    fn step(s: &Self::State, t: usize, a: Self::Action) -> Option<Self::State>;

    fn name(a: Self::Action) -> &'static str;

    /// Which enabled event the search tries first: a smaller rank first, then the earliest
    /// response. `last` is the action just placed. Only the order of the search depends on it,
    /// never whether an order is found.
    fn rank(_last: Option<Self::Action>, _next: Self::Action) -> u8 {
        0
    }
}

// ---------------------------------------------------------------------------------------------
// Linearization (Wing & Gong style search with memoised dead ends)
// ---------------------------------------------------------------------------------------------

#[derive(Debug)]
pub struct Linearized {
    /// The thread of each step, in trace order.
    pub order: Vec<usize>,
    pub dead_ends: usize,
}

const MAX_DEAD: usize = 5_000_000;

pub fn linearize<M: Model>(logs: &[Vec<Event<M::Action>>]) -> Result<Linearized, String> {
    linearize_with::<M>(logs, false)
}

/// `worst_first` reverses the search's preference; tests use it to exercise backtracking.
pub fn linearize_with<M: Model>(logs: &[Vec<Event<M::Action>>], worst_first: bool) -> Result<Linearized, String> {
    let n = logs.len();
    let total: usize = logs.iter().map(|l| l.len()).sum();
    let mut idx = vec![0usize; n];
    let mut path: Vec<usize> = Vec::with_capacity(total);
    let mut states: Vec<M::State> = vec![M::init()];
    let mut frames: Vec<(Vec<usize>, usize)> = vec![(candidates::<M>(logs, &idx, &states[0], None, worst_first), 0)];
    // Whether the rest can be completed depends only on the per-thread positions and the state
    // reached: a pair that failed once fails again, whatever the path to it.
    let mut dead: HashSet<(Vec<usize>, M::State)> = HashSet::new();
    let mut deepest = (0usize, idx.clone());
    while path.len() < total {
        let Some(frame) = frames.last_mut() else {
            return Err(format!(
                "no linearization exists: search exhausted; deepest prefix {} of {} events, stuck with \
                 per-thread positions {:?} (next events: {})",
                deepest.0,
                total,
                deepest.1,
                describe_heads::<M>(logs, &deepest.1)
            ));
        };
        if frame.1 < frame.0.len() {
            let t = frame.0[frame.1];
            frame.1 += 1;
            let action = logs[t][idx[t]].action;
            let next = M::step(states.last().expect("a state per frame"), t, action).expect("candidates are enabled");
            idx[t] += 1;
            if dead.contains(&(idx.clone(), next.clone())) {
                idx[t] -= 1;
                continue;
            }
            path.push(t);
            if path.len() > deepest.0 {
                deepest = (path.len(), idx.clone());
            }
            frames.push((candidates::<M>(logs, &idx, &next, Some(action), worst_first), 0));
            states.push(next);
        } else {
            frames.pop();
            let state = states.pop().expect("a state per frame");
            dead.insert((idx.clone(), state));
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

/// Threads whose next event may be placed now, best guess first.
fn candidates<M: Model>(
    logs: &[Vec<Event<M::Action>>],
    idx: &[usize],
    state: &M::State,
    last: Option<M::Action>,
    worst_first: bool,
) -> Vec<usize> {
    let heads: Vec<(usize, &Event<M::Action>)> =
        (0..logs.len()).filter(|&t| idx[t] < logs[t].len()).map(|t| (t, &logs[t][idx[t]])).collect();
    let mut c: Vec<(u8, u64, usize)> = heads
        .iter()
        // e may go next iff no other pending event responded before e was invoked ...
        .filter(|(t, e)| heads.iter().all(|(u, f)| u == t || f.resp >= e.inv))
        // ... and e is enabled in the current state.
        .filter(|(t, e)| M::step(state, *t, e.action).is_some())
        .map(|(t, e)| (M::rank(last, e.action), e.resp, *t))
        .collect();
    c.sort();
    if worst_first {
        c.reverse();
    }
    c.into_iter().map(|(_, _, t)| t).collect()
}

fn describe_heads<M: Model>(logs: &[Vec<Event<M::Action>>], idx: &[usize]) -> String {
    let mut s = String::new();
    for t in 0..logs.len() {
        let name = M::THREADS.get(t).copied().unwrap_or("?");
        if idx[t] < logs[t].len() {
            let e = &logs[t][idx[t]];
            let _ = write!(s, "{}:{}({},{}) ", name, M::name(e.action), e.inv, e.resp);
        } else {
            let _ = write!(s, "{}:done ", name);
        }
    }
    s.trim_end().to_string()
}

/// The events of `logs` in the linearized `order`, with the thread of each.
pub fn in_order<'a, A: Copy>(logs: &'a [Vec<Event<A>>], order: &[usize]) -> Vec<(usize, &'a Event<A>)> {
    let mut idx = vec![0usize; logs.len()];
    order
        .iter()
        .map(|&t| {
            idx[t] += 1;
            (t, &logs[t][idx[t] - 1])
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Checks on the real data
// ---------------------------------------------------------------------------------------------

/// Exclusive sections, each `(first stamp inside, last stamp inside, counter read)`, that each
/// added one to a shared counter ending at `final_counter`: they must not overlap, and the k-th
/// by stamp must have read k. A broken mutual exclusion shows as a lost update or an overlap.
pub fn check_exclusive_sections(mut sections: Vec<(u64, u64, u64)>, final_counter: u64) -> Result<(), String> {
    if final_counter != sections.len() as u64 {
        return Err(format!(
            "counter is {} after join but {} exclusive sections ran (lost update: mutual exclusion broken)",
            final_counter,
            sections.len()
        ));
    }
    sections.sort();
    for w in sections.windows(2) {
        if w[0].1 >= w[1].0 {
            return Err(format!("exclusive sections overlap: stamps [{},{}] and [{},{}]", w[0].0, w[0].1, w[1].0, w[1].1));
        }
    }
    for (k, s) in sections.iter().enumerate() {
        if s.2 != k as u64 {
            return Err(format!("exclusive section #{} (by stamp order) read counter {} (expected {})", k, s.2, k));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

/// Writes `{"t1":<v1>,"t2":<v2>,...}` with each value already in JSON.
pub fn thread_map(out: &mut String, threads: &[&str], value: impl Fn(usize) -> String) {
    out.push('{');
    for (i, name) in threads.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(out, "{}\"{}\":{}", sep, name, value(i));
    }
    out.push('}');
}

/// A JSON string literal (the harnesses only ever write their own ASCII text).
pub fn quoted(s: &str) -> String {
    let mut q = String::with_capacity(s.len() + 2);
    q.push('"');
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(q, "\\u{:04x}", c as u32);
            }
            c => q.push(c),
        }
    }
    q.push('"');
    q
}

/// The trace's first line: which run it is, the constants its states need, and how it was
/// ordered. `constants` is a JSON object (see [`threads_constant`]).
#[allow(clippy::too_many_arguments)]
pub fn meta_line(
    task: &str,
    seed: u64,
    ops: usize,
    threads: &[&str],
    constants: &str,
    harness: &str,
    system: &str,
    ordering: &str,
) -> String {
    let names: Vec<String> = threads.iter().map(|t| quoted(t)).collect();
    format!(
        "{{\"meta\":{{\"task\":{},\"seed\":{},\"ops\":{},\"threads\":[{}],\"constants\":{},\
         \"harness\":{},\"crate\":{},\"ordering\":{}}}}}\n",
        quoted(task),
        seed,
        ops,
        names.join(","),
        constants,
        quoted(harness),
        quoted(system),
        quoted(ordering)
    )
}

/// `{"Threads":[...]}`: the constant of the lock tasks.
pub fn threads_constant(threads: &[&str]) -> String {
    let names: Vec<String> = threads.iter().map(|t| quoted(t)).collect();
    format!("{{\"Threads\":[{}]}}", names.join(","))
}

/// One step line of the trace; `state` is already JSON.
pub fn step_line(out: &mut String, step: usize, action: &str, actor: Option<&str>, state: &str) {
    match actor {
        Some(a) => {
            let _ = writeln!(out, "{{\"step\":{},\"action\":\"{}\",\"actor\":\"{}\",\"state\":{}}}", step, action, a, state);
        }
        None => {
            let _ = writeln!(out, "{{\"step\":{},\"action\":\"{}\",\"state\":{}}}", step, action, state);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Command line and exit codes (the contract with `sysmobench traces capture`)
// ---------------------------------------------------------------------------------------------

pub struct Args {
    pub seed: u64,
    pub ops: usize,
    pub out: Option<String>,
    pub min_each: usize,
}

/// The usage text every harness prints; `min_each` says what --min-each counts for it.
pub fn usage(prog: &str, min_each: &str) -> String {
    format!(
        "usage: {prog} [--seed N] [--ops K] [--out FILE] [--min-each M]\n\
         \x20 --seed N      workload seed (default 1)\n\
         \x20 --ops K       operations per thread (default 60)\n\
         \x20 --out FILE    write the NDJSON trace to FILE instead of stdout\n\
         \x20 --min-each M  write nothing and exit 3 unless {min_each} each occur at least M times (default 0)\n\
         Statistics go to stderr. Exit status 0 on success, 2 if no linearization exists or a\n\
         post-run check fails, 3 if --min-each is not met, 64 on bad arguments."
    )
}

/// Parses the common arguments; prints the usage and exits 64 on a bad one, 0 on --help.
pub fn parse_args(prog: &str, usage: &str) -> Args {
    match parse(std::env::args().skip(1)) {
        Ok(Some(a)) => a,
        Ok(None) => {
            println!("{}", usage);
            std::process::exit(0);
        }
        Err(e) => {
            eprintln!("{}: {}\n{}", prog, e, usage);
            std::process::exit(64);
        }
    }
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Option<Args>, String> {
    let mut a = Args { seed: 1, ops: 60, out: None, min_each: 0 };
    while let Some(arg) = it.next() {
        let mut val = |name: &str| it.next().ok_or_else(|| format!("{} needs a value", name));
        match arg.as_str() {
            "--seed" => a.seed = val("--seed")?.parse().map_err(|e| format!("--seed: {}", e))?,
            "--ops" => a.ops = val("--ops")?.parse().map_err(|e| format!("--ops: {}", e))?,
            "--out" => a.out = Some(val("--out")?),
            "--min-each" => a.min_each = val("--min-each")?.parse().map_err(|e| format!("--min-each: {}", e))?,
            "-h" | "--help" => return Ok(None),
            other => return Err(format!("unknown argument {:?}", other)),
        }
    }
    Ok(Some(a))
}

/// A real finding (no linearization, a post-run check failed): exit 2.
pub fn fail(prog: &str, msg: String) -> ! {
    eprintln!("{}: FAILURE: {}", prog, msg);
    std::process::exit(2);
}

/// Exit 3, writing nothing, if one of the counted situations occurs fewer than `min` times.
pub fn require_each(prog: &str, counts: &[(String, usize)], min: usize) {
    if let Some((what, c)) = counts.iter().find(|(_, c)| *c < min) {
        eprintln!("{}: too little contention: {} occur {} times (< --min-each {}); nothing written", prog, what, c, min);
        std::process::exit(3);
    }
}

/// Writes the trace to --out or stdout; exit 1 if that fails.
pub fn write_trace(prog: &str, out: &Option<String>, text: &str) {
    let written = match out {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("cannot write {}: {}", path, e)),
        None => {
            let stdout = std::io::stdout();
            let mut lock = stdout.lock();
            lock.write_all(text.as_bytes()).and_then(|_| lock.flush()).map_err(|e| format!("stdout: {}", e))
        }
    };
    if let Err(e) = written {
        eprintln!("{}: {}", prog, e);
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A counter that only grows by one and only shrinks from what it has.
    struct Counter;

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Op {
        Inc,
        Dec,
    }

    impl Model for Counter {
        type Action = Op;
        type State = u8;
        const THREADS: &'static [&'static str] = &["a", "b"];
        fn init() -> u8 {
            0
        }
        fn step(s: &u8, _t: usize, a: Op) -> Option<u8> {
            match a {
                Op::Inc if *s < 1 => Some(s + 1),
                Op::Dec if *s > 0 => Some(s - 1),
                _ => None,
            }
        }
        fn name(a: Op) -> &'static str {
            match a {
                Op::Inc => "Inc",
                Op::Dec => "Dec",
            }
        }
    }

    fn ev(a: Op, inv: u64, resp: u64) -> Event<Op> {
        Event::new(a, inv, resp)
    }

    #[test]
    fn overlapping_calls_are_ordered_by_the_semantics() {
        // b's Dec overlaps a's Inc: it must come after it.
        let logs = vec![vec![ev(Op::Inc, 1, 4)], vec![ev(Op::Dec, 2, 3)]];
        let l = linearize::<Counter>(&logs).unwrap();
        assert_eq!(l.order, vec![0, 1]);
        let l = linearize_with::<Counter>(&logs, true).unwrap();
        assert_eq!(l.order, vec![0, 1]);
    }

    #[test]
    fn real_time_order_is_kept() {
        // b's Dec returned before a's Inc was invoked: no order satisfies both.
        let logs = vec![vec![ev(Op::Inc, 5, 6)], vec![ev(Op::Dec, 1, 2)]];
        let e = linearize::<Counter>(&logs).unwrap_err();
        assert!(e.contains("no linearization exists") && e.contains("b:Dec(1,2)"), "{}", e);
    }

    #[test]
    fn backtracking_finds_the_only_order() {
        let logs = vec![vec![ev(Op::Inc, 1, 10), ev(Op::Dec, 11, 12)], vec![ev(Op::Inc, 2, 9), ev(Op::Dec, 13, 14)]];
        // Both Incs overlap; whichever goes first, the other must wait for a Dec that comes
        // later in real time, so no order exists.
        assert!(linearize::<Counter>(&logs).is_err());
        let logs = vec![vec![ev(Op::Inc, 1, 10), ev(Op::Dec, 3, 12)], vec![ev(Op::Inc, 2, 14)]];
        let l = linearize_with::<Counter>(&logs, true).unwrap();
        assert_eq!(l.order, vec![0, 0, 1]);
    }

    #[test]
    fn sections_must_not_overlap_or_lose_updates() {
        assert!(check_exclusive_sections(vec![(5, 6, 1), (1, 2, 0)], 2).is_ok());
        assert!(check_exclusive_sections(vec![(1, 5, 0), (3, 6, 1)], 2).unwrap_err().contains("overlap"));
        assert!(check_exclusive_sections(vec![(1, 2, 0), (3, 4, 0)], 2).unwrap_err().contains("read counter 0"));
        assert!(check_exclusive_sections(vec![(1, 2, 0)], 2).unwrap_err().contains("lost update"));
    }

    #[test]
    fn arguments() {
        let a = parse(["--seed", "7", "--ops", "9", "--min-each", "2"].iter().map(|s| s.to_string())).unwrap().unwrap();
        assert_eq!((a.seed, a.ops, a.min_each, a.out), (7, 9, 2, None));
        assert!(parse(["--seed"].iter().map(|s| s.to_string())).is_err());
        assert!(parse(["--bogus"].iter().map(|s| s.to_string())).is_err());
        assert!(parse(["--help"].iter().map(|s| s.to_string())).unwrap().is_none());
    }

    #[test]
    fn json_helpers() {
        let mut s = String::new();
        thread_map(&mut s, &["t1", "t2"], |i| i.to_string());
        assert_eq!(s, "{\"t1\":0,\"t2\":1}");
        assert_eq!(quoted("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
        let m = meta_line("x", 3, 4, &["t1"], &threads_constant(&["t1"]), "h 1", "c 1", "o");
        assert!(m.starts_with("{\"meta\":{\"task\":\"x\",\"seed\":3,\"ops\":4,\"threads\":[\"t1\"],\"constants\":{\"Threads\":[\"t1\"]}"));
    }

    #[test]
    fn splitmix_is_deterministic() {
        let mut a = SplitMix64::for_thread(7, 1);
        let mut b = SplitMix64::for_thread(7, 1);
        for _ in 0..100 {
            assert_eq!(a.next(), b.next());
        }
    }
}
