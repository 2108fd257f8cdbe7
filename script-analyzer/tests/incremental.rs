//! An editor's analysis (`redlua_analyzer::incremental`) gives, after any
//! sequence of changes, what a full analysis of the final text gives: the
//! same diagnostics, and the same values of the locals.

use proptest::prelude::*;
use redlua_analyzer::incremental::{Session, analyze_then_values};
use redlua_analyzer::{Declared, Diagnostic, Options, ReturnKind, Returns, analyze, hover};

/// The diagnostics and values of `source`, reusing `previous`, checked
/// against a full analysis; the session, and whether it reused the
/// previous version's work.
fn checked(previous: Option<Session>, source: &str, options: &Options) -> (Option<Session>, bool) {
    let mut found: Option<Vec<Diagnostic>> = None;
    let (values, session) = analyze_then_values(previous, source, options, |d| {
        found = Some(d);
        true
    });
    let expected = analyze(source, options).diagnostics;
    assert_eq!(found.as_ref(), Some(&expected), "diagnostics of:\n{source}");
    let full = hover::values(source, options);
    match (&values, &full) {
        (Some(values), Some(full)) => {
            assert_eq!(values.len(), full.len(), "values of:\n{source}");
            for offset in 0..=source.len() {
                assert_eq!(
                    values.at(offset),
                    full.at(offset),
                    "value at {offset} of:\n{source}"
                );
            }
        }
        (None, None) => {}
        _ => panic!(
            "values {} where a full analysis has {}",
            values.is_some(),
            full.is_some()
        ),
    }
    let reused = session.as_ref().is_some_and(Session::reused);
    if std::env::var_os("REDLUA_TRACE_INCREMENTAL").is_some() {
        eprintln!("{:?}", session.as_ref().map(Session::anew));
    }
    (session, reused)
}

/// A script of helpers calling each other, a main chunk calling them.
fn script(seed: usize) -> String {
    let bodies = [
        "  local current = tonumber(redis.call('HGET', KEYS[1], 'f') or '0')\n  if current > n then\n    redis.call('HSET', KEYS[1], 'f', n)\n  end\n  return current\n",
        "  local v = redis.call('GET', KEYS[2])\n  return v\n",
        "  local t = {n, 'x'}\n  return #t + n\n",
        "  local r = redis.call('LRANGE', KEYS[1], 0, -1)\n  for _, item in ipairs(r) do\n    redis.call('SADD', KEYS[2], item)\n  end\n  return #r\n",
        "  local ok = redis.call('SET', KEYS[1], ARGV[1], 'NX')\n  if ok then return 1 end\n  return 0\n",
        "  local x = helper_0(n)\n  return x + 1\n",
        "  local s = ARGV[1] .. ':' .. n\n  redis.call('SET', KEYS[3], s)\n  return s\n",
        "  local h = redis.call('HGETALL', KEYS[1])\n  local count = 0\n  for i = 1, #h, 2 do\n    count = count + tonumber(h[i + 1])\n  end\n  return count\n",
        "  local v = redis.call('GET', KEYS[1])\n  if v then\n    redis.call('SET', KEYS[2], v)\n  end\n  redis.call('EXPIRE', KEYS[2], 60)\n  return 1\n",
        "  local members = redis.call('SMEMBERS', KEYS[1])\n  for _, m in ipairs(members) do\n    redis.call('SREM', KEYS[1], m)\n  end\n",
        "  local cursor = '0'\n  repeat\n    local page = redis.call('SCAN', cursor)\n    cursor = page[1]\n  until cursor == '0'\n  return 0\n",
        "  local ttl = redis.call('TTL', KEYS[1])\n  local left = ttl - n\n  redis.call('SET', KEYS[3], left)\n  return 2\n",
    ];
    let mut out = String::from("-- a script\nlocal total = 0\nlocal LIMIT = 10\n");
    // helper_0's reply reaches its callers: what they do with it is
    // checked there.
    let replies = [
        "  return n * 2\n",
        "  return redis.call('EXISTS', KEYS[1])\n",
        "  return redis.call('LRANGE', KEYS[1], 0, 10)\n",
        "  return redis.call('MGET', KEYS[1], KEYS[2])\n",
        "  return redis.call('GET', KEYS[1])\n",
        "  return redis.pcall('HGETALL', KEYS[1])\n",
        "  local s = redis.call('SCAN', '0')\n  return s\n",
    ];
    out.push_str(&format!(
        "local function helper_0(n)\n{}end\n",
        replies[seed % replies.len()]
    ));
    for f in 1..7 {
        let body = bodies[(seed + f * 5) % bodies.len()];
        let keyword = if (seed + f).is_multiple_of(4) {
            "function"
        } else {
            "local function"
        };
        out.push_str(&format!("{keyword} helper_{f}(n)\n{body}end\n"));
    }
    for f in 1..7 {
        out.push_str(&format!("total = total + (helper_{f}({f}) or 0)\n"));
    }
    out.push_str("return total\n");
    out
}

/// Text an edit puts in: tokens, statements, whole lines, and the
/// mistakes typing makes on the way.
const SNIPPETS: &[&str] = &[
    "",
    "X",
    "'",
    "(",
    ")",
    "end",
    "end\n",
    "\n",
    " ",
    "--",
    "--[[",
    "]]",
    "1",
    "0.5",
    "n",
    "nil",
    "false",
    "helper_0(n)",
    "helper_1(2)",
    "helper_2(n, 3)",
    "LIMIT",
    "total",
    "KEYS[1]",
    "KEYS[7]",
    "ARGV[2]",
    "redis.call('GET', KEYS[1])",
    "redis.call('INCR', KEYS[1])",
    "redis.call('HGETALL', KEYS[1])",
    "redis.call('SET', KEYS[1], '9007199254740993')",
    "redis.pcall('GET', KEYS[1])",
    "redis.setresp(3)",
    "return 1\n",
    "return redis.call('GET', KEYS[1])\n",
    "return {1, nil, 3}\n",
    "return n / 2\n",
    "  local y = redis.call('GET', KEYS[1])\n  y = y + 1\n",
    "  local z = cjson.decode(ARGV[1])\n  if z.x == nil then return 1 end\n",
    "  if redis.call('EXISTS', KEYS[1]) then return 2 end\n",
    "  g = 1\n",
    "  KEYS[1] = 'k'\n",
    "  local m = string.format('%d', n / 3)\n",
    "  redis.call('EXPIRE', KEYS[1], n - 5)\n",
    "  local q = redis.call('GET', KEYS[1])\n  local w = q:sub(1, 2)\n",
    "  local a = helper_1(n)\n  local b = helper_0(a)\n",
    "local function inner(p) return p end\n",
    "local function extra(n)\n  return redis.call('GET', KEYS[1])\nend\n",
    "function global_fn(n)\n  return 1\nend\n",
    "helper_0",
    "helper_9",
    "current",
    "currnet + 1",
    "os.time()",
    "string.lenn(n)",
    "unpack(redis.call('LRANGE', KEYS[1], 0, -1))",
    "tonumber(ARGV[1]) + 1",
];

/// Statements a line of a function's body becomes.
const LINES: &[&str] = &[
    "  local y = redis.call('GET', KEYS[1])",
    "  local y = redis.call('GET', KEYS[1]) or '0'",
    "  redis.call('SET', KEYS[2], n)",
    "  redis.call('EXPIRE', KEYS[1], n - 5)",
    "  local q = redis.call('INCR', KEYS[1])",
    "  if redis.call('EXISTS', KEYS[1]) then return 2 end",
    "  if n == nil then return 0 end",
    "  local a = helper_0(n)",
    "  local a = helper_1(n) + helper_0(2)",
    "  helper_0(n / 2)",
    "  local z = cjson.decode(ARGV[1])",
    "  local m = string.format('%d', n / 3)",
    "  local w = ARGV[1]:sub(1, 2)",
    "  local p = redis.pcall('GET', KEYS[1])",
    "  local u = unpack(redis.call('LRANGE', KEYS[1], 0, -1))",
    "  local h = LIMIT + 1",
    "  total = total + 1",
    "  g = 1",
    "  KEYS[1] = 'k'",
    "  redis.setresp(3)",
    "  local s = os.time()",
    "  local c = currnet + 1",
    "  return redis.call('GET', KEYS[1])",
    "  return n",
    "  return 1",
    "  return {1, nil, 3}",
    "  for i = 1, n do redis.call('RPUSH', KEYS[1], i) end",
    "  local function inner(x) return x * 2 end",
    "  local r = inner and 1",
    "",
    "  -- a comment",
    "  if helper_0(n) then total = 1 end",
    "  local e = helper_0(n)[2] + 1",
    "  local u = redis.call('RPUSH', KEYS[1], unpack(helper_0(n)))",
    "  local c = helper_0(n) .. 'x'",
    "  if helper_0(n) == nil then return 0 end",
    "  local d = helper_0(n).err",
    "  for _, v in ipairs(helper_0(n)) do redis.call('SADD', KEYS[1], v) end",
    "helper_1 = helper_0",
    "local function helper_7(n) return helper_1(n) end",
    "  end",
    "  if n then",
];

/// Words an edit replaces, and what with.
const WORDS: &[(&str, &[&str])] = &[
    ("'HGET'", &["'XHGET'", "'GET'", "'HGETALL'", "'HGET"]),
    ("'GET'", &["'GETT'", "'INCR'", "'TTL'", "'LRANGE'"]),
    ("'SADD'", &["'SAD'", "'HSET'"]),
    ("0, 10)", &["0, -1)", "0, 99)", "1, 10)"]),
    (
        "KEYS[1], KEYS[2])",
        &[
            "KEYS[1], KEYS[3])",
            "KEYS[2], KEYS[2])",
            "KEYS[1],KEYS[2],k)",
        ],
    ),
    ("'EXISTS'", &["'EXISTZ'", "'TYPE'  ", "'STRLEN'"]),
    ("KEYS[1]", &["KEYS[7]", "KEYS[0]", "ARGV[1]", "'literal'"]),
    ("KEYS[2]", &["KEYS[4]", "KEYS.x"]),
    ("ARGV[1]", &["ARGV[9]", "KEYS[1]"]),
    (
        "return ",
        &[
            "return not ",
            "return -",
            "return 0.5 + ",
            "return nil and ",
        ],
    ),
    (
        "n * 2",
        &["n / 2", "n .. 'x'", "redis.call('GET', KEYS[1])", "false"],
    ),
    (" or '0'", &["", " or 0", " or false"]),
    ("tonumber(", &["tostring(", "(", "tonumber(nil, "]),
    ("helper_0(", &["helper_9(", "helper_0 (", "LIMIT("]),
    ("current", &["curent", "n", "LIMIT"]),
    ("(n)", &["(n, m)", "(m)", "()", "(...)"]),
    ("end", &["end end", "", "ned"]),
    ("local ", &["", "locall "]),
];

/// One edit.
#[derive(Clone, Debug)]
enum Edit {
    /// A line (a fraction of the lines) becomes another.
    Line(f64, usize),
    /// A line is inserted before one.
    Insert(f64, usize),
    /// An occurrence of a word (its place among them) becomes another.
    Word(usize, f64, usize),
    /// Any bytes: at a fraction of the text, some replaced by a snippet.
    Raw(f64, usize, usize),
    /// The text before the last edit.
    Undo,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (0.0..1.0f64, 0..LINES.len()).prop_map(|(at, with)| Edit::Line(at, with)),
        2 => (0.0..1.0f64, 0..LINES.len()).prop_map(|(at, with)| Edit::Insert(at, with)),
        4 => (0..WORDS.len(), 0.0..1.0f64, 0usize..4).prop_map(|(w, at, with)| Edit::Word(w, at, with)),
        1 => (0.0..1.0f64, 0usize..12, 0..SNIPPETS.len()).prop_map(|(at, n, with)| Edit::Raw(at, n, with)),
        2 => Just(Edit::Undo),
    ]
}

/// Edits of the lines of function bodies only (indented lines), mostly
/// keeping the script whole.
fn body_edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        4 => (0.0..1.0f64, 0..LINES.len() - 2).prop_map(|(at, with)| Edit::Line(-at - 1.0, with)),
        2 => (0.0..1.0f64, 0..LINES.len() - 2).prop_map(|(at, with)| Edit::Insert(-at - 1.0, with)),
        1 => Just(Edit::Undo),
    ]
}

/// `text` with `edit` applied (`before`: the text before the last edit).
/// A negative place (`-1.0 - at`) picks among indented lines only.
fn apply(text: &str, before: &str, edit: &Edit) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let indented: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("  "))
        .collect();
    let pick = |at: f64| {
        if at < 0.0 && !indented.is_empty() {
            indented[((indented.len() - 1) as f64 * (-at - 1.0)) as usize]
        } else {
            ((lines.len().saturating_sub(1)) as f64 * at.abs().min(1.0)) as usize
        }
    };
    match edit {
        Edit::Line(at, with) => {
            let mut lines = lines.clone();
            lines[pick(*at)] = LINES[*with];
            lines.join("\n")
        }
        Edit::Insert(at, with) => {
            let mut lines = lines.clone();
            lines.insert(pick(*at), LINES[*with]);
            lines.join("\n")
        }
        Edit::Word(word, at, with) => {
            let (from, to) = WORDS[*word];
            let places: Vec<usize> = text.match_indices(from).map(|(i, _)| i).collect();
            if places.is_empty() {
                return text.to_string();
            }
            let i = places[((places.len() - 1) as f64 * at) as usize];
            format!(
                "{}{}{}",
                &text[..i],
                to[*with % to.len()],
                &text[i + from.len()..]
            )
        }
        Edit::Raw(at, replaced, snippet) => {
            let mut at = ((text.len() as f64) * at) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let mut end = (at + replaced).min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}{}{}", &text[..at], SNIPPETS[*snippet], &text[end..])
        }
        Edit::Undo => before.to_string(),
    }
}

fn options(kind: usize) -> Options {
    match kind % 3 {
        0 => Options::default(),
        1 => Options {
            declared: Some(Declared::exact(3, 2)),
            returns: Some(Returns::of(ReturnKind::Integer)),
            ..Options::default()
        },
        _ => Options {
            declared: Some(Declared::exact(2, 1)),
            cluster: true,
            read_only: true,
            ..Options::default()
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn any_sequence_of_edits_gives_a_full_analysis(
        seed in 0usize..64,
        kind in 0usize..3,
        crlf in any::<bool>(),
        edits in proptest::collection::vec(edit(), 1..12),
    ) {
        let options = options(kind);
        let mut text = script(seed);
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        let mut before = text.clone();
        let (mut session, _) = checked(None, &text, &options);
        for edit in &edits {
            let next = apply(&text, &before, edit);
            before = std::mem::replace(&mut text, next);
            session = checked(session, &text, &options).0;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn edits_of_function_bodies_give_a_full_analysis(
        seed in 0usize..64,
        kind in 0usize..3,
        crlf in any::<bool>(),
        edits in proptest::collection::vec(body_edit(), 1..12),
    ) {
        let options = options(kind);
        let mut text = script(seed);
        if crlf {
            text = text.replace('\n', "\r\n");
        }
        let mut before = text.clone();
        let (mut session, _) = checked(None, &text, &options);
        for edit in &edits {
            let next = apply(&text, &before, edit);
            before = std::mem::replace(&mut text, next);
            session = checked(session, &text, &options).0;
        }
    }
}

/// What a callee returns: replies of several commands, in groups of the
/// same command at the same place (the same length), but for their
/// arguments.
const REPLIES: &[&[&str]] = &[
    &["n * 2", "n + 2", "n / 2"],
    &[
        "redis.call('EXISTS', KEYS[1])",
        "redis.call('EXISTS', KEYS[2])",
        "redis.call('STRLEN', KEYS[1])",
    ],
    &[
        "redis.call('LRANGE', KEYS[1], 0, 10)",
        "redis.call('LRANGE', KEYS[1], 0, -1)",
        "redis.call('LRANGE', KEYS[1], -5, 1)",
    ],
    &[
        "redis.call('ZRANGE', KEYS[1], 0, 5, 'WITHSCORES')",
        "redis.call('ZRANGE', KEYS[1], 0, 5, 'BYSCORE   ')",
    ],
    &[
        "redis.call('MGET', KEYS[1], KEYS[2])",
        "redis.call('MGET', KEYS[1],KEYS[2],k)",
        "redis.call('MGET', KEYS[1], KEYS[1])",
    ],
    &[
        "redis.call('GET', KEYS[1])",
        "redis.pcall('GET', KEYS[1])",
        "redis.call('GET', KEYS[2])",
    ],
    &[
        "redis.call('HGETALL', KEYS[1])",
        "redis.call('HKEYS', KEYS[1])  ",
        "redis.call('SCAN', '0')        ",
    ],
    &[
        "redis.call('TTL', KEYS[1])",
        "redis.call('PTTL', KEYS[1])",
        "redis.call('INCR', KEYS[1])",
    ],
    &[
        "redis.call('INCRBYFLOAT', KEYS[1], 1)",
        "redis.call('INCRBY', KEYS[1], 1)     ",
    ],
    &["cjson.decode(ARGV[1])", "tonumber(ARGV[1]) / 3"],
];

/// What a caller does with its callee's reply (one call of it each).
const USES: &[&str] = &[
    "  x = helper(n)\n",
    "  if helper(n) then x = 1 end\n",
    "  x = redis.call('RPUSH', KEYS[1], unpack(helper(n)))\n",
    "  x = helper(n)[2] + 1\n",
    "  x = helper(n) .. 'x'\n",
    "  if helper(n) == nil then x = 2 end\n",
    "  for _, v in ipairs(helper(n)) do redis.call('SADD', KEYS[1], v) end\n",
    "  x = helper(n).err\n",
    "  x = tonumber(helper(n)) + 1\n",
    "  if helper(n) > 0 then x = 3 end\n",
    "  redis.call('EXPIRE', KEYS[1], helper(n))\n",
    "  x = string.format('%d', helper(n))\n",
    "  x = cjson.encode(helper(n))\n",
    "  if helper(n)[1] == 0 then x = 4 end\n",
];

/// A callee returning `reply`, and a caller that uses its reply.
fn pair(reply: &str, use_: usize) -> String {
    format!(
        "local function helper(n)\n  local k = KEYS[3]\n  return {reply}\nend\nlocal function caller(n)\n  local x = 0\n{}  return 0\nend\nreturn caller(1)\n",
        USES[use_]
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The callee's reply, then the caller's use of it, change (or the
    /// other way round): each version's findings are a full analysis's,
    /// in the caller too.
    #[test]
    fn a_caller_sees_what_its_callee_becomes(
        group in 0..REPLIES.len(),
        members in (0usize..3, 0usize..3),
        uses in (0..USES.len(), 0..USES.len()),
        callee_first in any::<bool>(),
    ) {
        let options = Options {
            declared: Some(Declared::exact(3, 1)),
            ..Options::default()
        };
        let group = REPLIES[group];
        let replies = (group[members.0 % group.len()], group[members.1 % group.len()]);
        let steps = if callee_first {
            [pair(replies.0, uses.0), pair(replies.1, uses.0), pair(replies.1, uses.1)]
        } else {
            [pair(replies.0, uses.0), pair(replies.0, uses.1), pair(replies.1, uses.1)]
        };
        let mut session = None;
        for text in &steps {
            session = checked(session, text, &options).0;
        }
        // And back, the other way.
        for text in steps.iter().rev() {
            session = checked(session, text, &options).0;
        }
    }
}

/// The script of the editor benchmark (`bench/src/expansion.rs`): helper
/// functions of ten lines each, all called from the main chunk.
fn generated(lines: usize) -> String {
    let mut out = String::from("local total = 0\n");
    let functions = lines / 10;
    for f in 0..functions {
        let key = f % 8 + 1;
        let arg = f % 4 + 1;
        out.push_str(&format!(
            "local function step_{f}(n)\n\
             \x20 local current = tonumber(redis.call('HGET', KEYS[{key}], 'f{f}') or '0')\n\
             \x20 if current > n then\n\
             \x20   redis.call('HSET', KEYS[{key}], 'f{f}', n)\n\
             \x20 else\n\
             \x20   redis.call('HINCRBY', KEYS[{key}], 'f{f}', tonumber(ARGV[{arg}]))\n\
             \x20 end\n\
             \x20 local t = {{current, n, 'f{f}'}}\n\
             \x20 return #t + current\n\
             end\n"
        ));
    }
    for f in 0..functions {
        out.push_str(&format!("total = total + step_{f}({f})\n"));
    }
    out.push_str("return total\n");
    out
}

/// The edits the benchmark makes: a command's name broken and mended, in
/// the middle of a long script; each is analyzed by reusing the previous
/// version's work.
#[test]
fn breaking_and_mending_a_command_reuses_the_rest() {
    let mut text = generated(600);
    let options = Options::default();
    let (mut session, _) = checked(None, &text, &options);
    for round in 0..4 {
        let (from, to) = if round % 2 == 0 {
            (
                "redis.call('HGET', KEYS[8], 'f31')",
                "redis.call('XHGET', KEYS[8], 'f31')",
            )
        } else {
            (
                "redis.call('XHGET', KEYS[8], 'f31')",
                "redis.call('HGET', KEYS[8], 'f31')",
            )
        };
        text = text.replacen(from, to, 1);
        let (next, reused) = checked(session, &text, &options);
        assert!(
            reused,
            "round {round} analyzed anew: {:?}",
            next.as_ref().and_then(Session::anew)
        );
        session = next;
    }
}

/// A helper whose return value changes (and nothing else: the same reads,
/// the same calls) changes a diagnostic where it is called, in another
/// function: the analysis sees it in the caller.
#[test]
fn a_changed_return_reaches_the_caller() {
    let before = "local function helper(n)\n  local e = redis.call('EXISTS', KEYS[1])\n  return n\nend\nlocal function caller(n)\n  if helper(n) then\n    return 1\n  end\n  return 0\nend\nreturn caller(1)\n";
    let after = before.replace("  return n\n", "  return e\n");
    let options = Options::default();
    let in_caller = |source: &str| {
        let line = source
            .lines()
            .position(|l| l.contains("if helper(n)"))
            .unwrap()
            + 1;
        analyze(source, &options)
            .diagnostics
            .iter()
            .filter(|d| d.primary_span().is_some_and(|s| s.start.line == line))
            .count()
    };
    assert_eq!(in_caller(before), 0);
    assert_eq!(in_caller(&after), 1);
    let (session, _) = checked(None, before, &options);
    let (session, _) = checked(session, &after, &options);
    // And back.
    checked(session, before, &options);
}

/// A function assigned elsewhere too is not one its calls are known to
/// call: after edits of it and of its caller, the caller's call of it still
/// gives an unknown value (no `integer_condition` there).
#[test]
fn a_function_assigned_twice_stays_unknown_to_its_callers() {
    let first = "local function helper(n)\n  return redis.call('EXISTS', KEYS[1])\nend\nhelper = helper\nlocal function caller(n)\n  if helper(n) then\n    return 1\n  end\n  return 0\nend\nreturn caller(1)\n";
    let second = first.replace("KEYS[1])\nend", "KEYS[1]) -- exists\nend");
    let third = second.replace("  return 0\n", "  local y = 2\n  return 0\n");
    let options = Options::default();
    let (session, _) = checked(None, first, &options);
    let (session, reused) = checked(session, &second, &options);
    assert!(reused, "{:?}", session.as_ref().and_then(Session::anew));
    // The caller names a function it cannot know: analyzed anew.
    let (session, reused) = checked(session, &third, &options);
    assert!(!reused);
    assert_eq!(
        session.as_ref().and_then(Session::anew),
        Some("the function names a local of the main chunk")
    );
}

/// What a function returns is the same value after the change (the reply
/// of the same command, at the same place), but the call itself changed:
/// its caller's findings that read the call (`unpack` of a reply as long
/// as its range) follow it.
#[test]
fn a_changed_call_behind_a_returned_reply_reaches_the_caller() {
    let before = "local function f(n)\n  return redis.call('LRANGE', KEYS[1], 0, 10)\nend\nlocal function g(n)\n  local r = f(n)\n  return redis.call('RPUSH', KEYS[2], unpack(r))\nend\nreturn g(1)\n";
    let after = before.replace("0, 10)", "0, -1)");
    let options = Options::default();
    let lints = |source: &str| {
        analyze(source, &options)
            .diagnostics
            .iter()
            .map(|d| d.lint.name())
            .collect::<Vec<_>>()
    };
    assert_ne!(lints(before), lints(&after));
    let (session, _) = checked(None, before, &options);
    let (session, _) = checked(session, &after, &options);
    checked(session, before, &options);
}

/// A function that starts testing what another returns (an integer
/// reply, made in that other function): the finding needs the other
/// function's call, which the analysis of the changed function alone must
/// still see.
#[test]
fn a_new_test_of_another_functions_reply_is_found() {
    let before = "local function exists(n)\n  return redis.call('EXISTS', KEYS[1])\nend\nlocal function caller(n)\n  local x = exists(n)\n  return 0\nend\nreturn caller(1)\n";
    let after = before.replace(
        "  local x = exists(n)\n",
        "  local x = 0\n  if exists(n) then x = 1 end\n",
    );
    let options = Options::default();
    assert!(
        analyze(&after, &options)
            .diagnostics
            .iter()
            .any(|d| d.lint.name() == "integer_condition")
    );
    let (session, _) = checked(None, before, &options);
    let (session, reused) = checked(session, &after, &options);
    assert!(reused, "{:?}", session.as_ref().and_then(Session::anew));
    checked(session, before, &options);
}
