//! Running the lints' checks on several threads, with the result of
//! running them one after the other, in [`Lint::ALL`]'s order.
//!
//! Invariants:
//! - a check reads the [`Context`] and the report's `info`, and appends to
//!   the report's diagnostics (it reads none of them);
//! - on a script large enough to pay for a thread, the checks that read
//!   no inferred types and none of the `info` made from them ([`UNTYPED`])
//!   run first, in order, on a thread of their own while the types are
//!   inferred ([`beside`]), starting from the `info` of the calls; the
//!   `info` they leave is the report's;
//! - the checks that record into the report's `info` ([`RECORDING`]) are
//!   among them, or run, with every check before them, in order on the
//!   report itself;
//! - each later check runs on a report of its own, starting from the
//!   `info` those left and no diagnostics; all diagnostics are appended
//!   in [`Lint::ALL`]'s order, those of an allowed lint dropped, as one
//!   thread would have done;
//! - should a later check change `info` after all, its work is dropped and
//!   the later checks run again one after the other on the report.

use super::{Check, Context, Lint, RedisCall};
use crate::facts::Types;
use crate::{Diagnostic, Report, ScriptInfo};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The checks that record facts into [`ScriptInfo`], which later checks
/// may read.
const RECORDING: &[Lint] = &[Lint::Arity];

/// The checks that read neither the inferred types nor the `info` made
/// from them (the returns and their codes): they run while the types are
/// inferred.
const UNTYPED: &[Lint] = &[
    Lint::Arity,
    Lint::DynamicAccess,
    Lint::GlobalAssignment,
    Lint::UndefinedGlobal,
    Lint::UnknownMember,
    Lint::UnknownCommand,
    Lint::CommandArity,
    Lint::WriteInReadOnly,
    Lint::LiteralKey,
    Lint::TargetVersion,
    Lint::ShebangFlag,
];

/// The smallest script whose untyped checks get a thread of their own:
/// on a smaller one, starting a thread costs more than it saves (the
/// tests run every script but the empty one through the thread).
#[cfg(not(test))]
const BESIDE_MIN_BYTES: usize = 8 << 10;
#[cfg(test)]
const BESIDE_MIN_BYTES: usize = 1;

/// At most this many threads run the checks.
const MAX_THREADS: usize = 4;

/// The machine's cores, as the standard library tells them (read once:
/// asking reads the process's CPU quota from files).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// The diagnostics of each check run, allowed lints' included.
pub(super) type Outputs = Vec<(Lint, Vec<Diagnostic>)>;

/// Infers the types with `infer` on this thread while the [`UNTYPED`]
/// checks of `checks` run in order on another, on a report starting from
/// `report`'s `info` (`cx`'s types are not read). The types and those
/// checks' diagnostics; `report`'s `info` is the one they left. On a
/// script smaller than [`BESIDE_MIN_BYTES`], or when no thread can be
/// had, only the types: the checks are left to [`run`].
pub(super) fn beside<'a>(
    cx: &Context<'_>,
    calls: &[RedisCall],
    checks: &[(Lint, Check)],
    report: &mut Report,
    infer: impl FnOnce() -> Types<'a>,
) -> (Types<'a>, Outputs) {
    #[cfg(test)]
    if tests::IN_ORDER.get() {
        return (infer(), Vec::new());
    }
    if cores() < 2 || cx.source.len() < BESIDE_MIN_BYTES {
        return (infer(), Vec::new());
    }
    let untyped: Vec<(Lint, Check)> = checks
        .iter()
        .filter(|(lint, _)| UNTYPED.contains(lint))
        .copied()
        .collect();
    let mut own = Report {
        diagnostics: Vec::new(),
        info: report.info.clone(),
    };
    std::thread::scope(|scope| {
        let helper = std::thread::Builder::new()
            .name("redlua-analyzer-lints".to_string())
            .stack_size(crate::STACK_SIZE)
            .spawn_scoped(scope, || {
                let outputs = in_order(cx, calls, &untyped, &mut own);
                (own, outputs)
            });
        let types = infer();
        match helper.map(|helper| helper.join()) {
            Ok(Ok((own, outputs))) => {
                report.info = own.info;
                (types, outputs)
            }
            Ok(Err(panic)) => std::panic::resume_unwind(panic),
            // No thread to be had: the checks are left to `run`.
            Err(_) => (types, Vec::new()),
        }
    })
}

/// Runs `checks` (in [`Lint::ALL`]'s order) but those [`beside`] ran,
/// whose diagnostics are `done`, appending all their diagnostics to
/// `report` as one thread running them in order would.
pub(super) fn run(
    cx: &Context<'_>,
    calls: &[RedisCall],
    checks: &[(Lint, Check)],
    done: Outputs,
    report: &mut Report,
) -> Outputs {
    let rest: Vec<(Lint, Check)> = checks
        .iter()
        .filter(|(lint, _)| !done.iter().any(|(ran, _)| ran == lint))
        .copied()
        .collect();
    let mut outputs = done;
    outputs.extend(run_rest(cx, calls, &rest, report));
    // In the order of `checks` (that of `Lint::ALL`).
    outputs.sort_by_key(|(lint, _)| checks.iter().position(|(l, _)| l == lint));
    outputs.retain(|(lint, _)| !cx.allowed(*lint));
    for (_, diagnostics) in &outputs {
        report.diagnostics.extend(diagnostics.iter().cloned());
    }
    outputs
}

/// Runs `checks`: those up to the last [`RECORDING`] one in order on
/// `report`, the others side by side. Their diagnostics, in order.
fn run_rest(
    cx: &Context<'_>,
    calls: &[RedisCall],
    checks: &[(Lint, Check)],
    report: &mut Report,
) -> Outputs {
    #[cfg(test)]
    if tests::IN_ORDER.get() {
        return in_order(cx, calls, checks, report);
    }
    let first_parallel = checks
        .iter()
        .rposition(|(lint, _)| RECORDING.contains(lint))
        .map_or(0, |i| i + 1);
    let (ordered, parallel) = checks.split_at(first_parallel);
    let mut outputs = in_order(cx, calls, ordered, report);
    let threads = cores().min(MAX_THREADS);
    if threads < 2 || parallel.len() < 2 {
        outputs.extend(in_order(cx, calls, parallel, report));
        return outputs;
    }
    let apart = apart(cx, calls, parallel, &report.info, threads);
    if apart.iter().any(|(info, _)| *info != report.info) {
        outputs.extend(in_order(cx, calls, parallel, report));
        return outputs;
    }
    for ((lint, _), (_, diagnostics)) in parallel.iter().zip(apart) {
        outputs.push((*lint, diagnostics));
    }
    outputs
}

/// Runs `checks` one after the other on `report`'s `info`: the
/// diagnostics of each (`report`'s diagnostics are left as they were).
fn in_order(
    cx: &Context<'_>,
    calls: &[RedisCall],
    checks: &[(Lint, Check)],
    report: &mut Report,
) -> Outputs {
    let mut outputs = Vec::with_capacity(checks.len());
    for &(lint, check) in checks {
        let before = report.diagnostics.len();
        check(cx, calls, report);
        outputs.push((lint, report.diagnostics.split_off(before)));
    }
    outputs
}

/// Runs each of `checks` on a report of its own starting from `info`, on
/// `threads` threads (this one among them): the reports' `info` and
/// diagnostics, in the order of `checks`.
fn apart(
    cx: &Context<'_>,
    calls: &[RedisCall],
    checks: &[(Lint, Check)],
    info: &ScriptInfo,
    threads: usize,
) -> Vec<(ScriptInfo, Vec<Diagnostic>)> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&(_, check)) = checks.get(i) else {
                return done;
            };
            let mut own = Report {
                diagnostics: Vec::new(),
                info: info.clone(),
            };
            check(cx, calls, &mut own);
            done.push((i, own));
        }
    };
    let mut reports: Vec<(usize, Report)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("redlua-analyzer-lints".to_string())
                    .stack_size(crate::STACK_SIZE)
                    .spawn_scoped(scope, work)
                    .ok()
            })
            .collect();
        #[cfg(test)]
        tests::HELPERS.set(helpers.len());
        let mut all = work();
        for helper in helpers {
            match helper.join() {
                Ok(done) => all.extend(done),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        all
    });
    reports.sort_by_key(|(i, _)| *i);
    reports
        .into_iter()
        .map(|(_, report)| (report.info, report.diagnostics))
        .collect()
}

#[cfg(test)]
pub(super) mod tests {
    use super::RECORDING;
    use crate::{Declared, Lint, Options, ReturnKind, Returns, ServerTarget, analyze_here};
    use proptest::prelude::*;
    use std::cell::Cell;
    use std::path::Path;

    thread_local! {
        /// Every check runs on this thread, in order (the reference).
        pub(in crate::lints) static IN_ORDER: Cell<bool> = const { Cell::new(false) };
        /// How many threads the last checks run here started.
        pub(in crate::lints) static HELPERS: Cell<usize> = const { Cell::new(0) };
    }

    #[test]
    fn the_checks_get_a_thread_for_each_further_core() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        HELPERS.set(usize::MAX);
        analyze_here(&corpus()[0], &Options::default());
        let helpers = HELPERS.get();
        if cores < 2 {
            // One core: the checks run on this thread, none started.
            assert_eq!(helpers, usize::MAX);
        } else {
            assert_eq!(helpers, cores.min(super::MAX_THREADS) - 1);
        }
    }

    /// The scripts of the analyzer's corpus and of the lock runtime.
    fn corpus() -> &'static [String] {
        static SCRIPTS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        SCRIPTS.get_or_init(read_corpus)
    }

    fn read_corpus() -> Vec<String> {
        fn add(dir: &Path, out: &mut Vec<String>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                panic!("no corpus at {}", dir.display());
            };
            let mut paths: Vec<_> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
            paths.sort();
            for path in paths {
                if path.is_dir() {
                    add(&path, out);
                } else if path.extension().is_some_and(|e| e == "lua") {
                    out.push(std::fs::read_to_string(&path).expect("a readable script"));
                }
            }
        }
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut scripts = Vec::new();
        add(&root.join("tests/corpus"), &mut scripts);
        add(&root.join("../lock-runtime/scripts"), &mut scripts);
        assert!(scripts.len() > 100, "{} scripts", scripts.len());
        scripts
    }

    /// Pieces of scripts an edit may insert.
    const PIECES: &[&str] = &[
        "",
        "\n",
        "end\n",
        "local v = redis.call('GET', KEYS[1])\n",
        "if v == nil then return 0 end\n",
        "if redis.call('EXISTS', KEYS[1]) then ",
        "redis.call('SET', 'literal', ARGV[2])",
        "return redis.call('HGETALL', KEYS[3])",
        "tonumber(ARGV[1])",
        "KEYS[#KEYS]",
        "x = 1.5 ",
        " == 1",
        "cjson.decode(ARGV[1]).field",
        "redis.setresp(3)\n",
        "#!lua flags=no-writes\n",
        "'",
        "(",
        "return nil",
    ];

    fn options() -> impl Strategy<Value = Options> {
        (
            prop::option::of((0usize..4, any::<bool>(), 0usize..4, any::<bool>())),
            any::<bool>(),
            any::<bool>(),
            prop::sample::subsequence(Lint::ALL.to_vec(), 0..Lint::ALL.len() / 2),
            prop::option::of((0usize..4, any::<bool>())),
            any::<bool>(),
        )
            .prop_map(
                |(declared, read_only, cluster, allow, returns, newest)| Options {
                    declared: declared.map(|(keys, keys_variadic, args, args_variadic)| Declared {
                        keys,
                        keys_variadic,
                        args,
                        args_variadic,
                    }),
                    read_only,
                    cluster,
                    allow,
                    returns: returns.map(|(kind, nullable)| Returns {
                        nullable,
                        ..Returns::of(
                            [
                                ReturnKind::Integer,
                                ReturnKind::String,
                                ReturnKind::Array,
                                ReturnKind::Any,
                            ][kind],
                        )
                    }),
                    target: if newest {
                        ServerTarget::Redis8_4
                    } else {
                        ServerTarget::default()
                    },
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

        /// Corpus scripts under random edits and options: the checks on
        /// several threads find what they find one after the other.
        #[test]
        fn the_checks_on_several_threads_find_what_they_find_in_order(
            script in any::<prop::sample::Index>(),
            edits in prop::collection::vec(
                (any::<prop::sample::Index>(), 0usize..40, prop::sample::select(PIECES)),
                0..4,
            ),
            options in options(),
        ) {
            let mut text = script.get(corpus()).clone();
            for (at, len, piece) in edits {
                let mut start = at.index(text.len() + 1);
                while !text.is_char_boundary(start) {
                    start -= 1;
                }
                let mut end = (start + len).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.replace_range(start..end, piece);
            }
            let threads = analyze_here(&text, &options);
            IN_ORDER.set(true);
            let in_order = analyze_here(&text, &options);
            IN_ORDER.set(false);
            prop_assert_eq!(&threads.diagnostics, &in_order.diagnostics, "{}", text);
            prop_assert_eq!(&threads.info, &in_order.info);
        }
    }

    #[test]
    fn the_lints_that_record_facts_come_before_most_others() {
        // The checks up to the last recording one run in order: keep them
        // few.
        let last = RECORDING
            .iter()
            .filter_map(|lint| Lint::ALL.iter().position(|l| l == lint))
            .max()
            .unwrap_or(0);
        assert!(last <= 2, "{last}");
    }
}
