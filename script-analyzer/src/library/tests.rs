//! Tests of the library analysis: one rule each, positive and negative.

use crate::{
    Declared, Diagnostic, LibraryOptions, LibraryReport, Lint, Options, ReturnKind, Severity,
    Target, analyze_library,
};

fn check(source: &str) -> LibraryReport {
    analyze_library(source, &LibraryOptions::default())
}

fn declaring(source: &str, function: &str, keys: usize, args: usize) -> LibraryReport {
    let options = LibraryOptions {
        function: Some(function.to_string()),
        options: Options {
            declared: Some(Declared::exact(keys, args)),
            ..Options::default()
        },
    };
    analyze_library(source, &options)
}

fn errors(report: &LibraryReport) -> Vec<String> {
    report
        .all_diagnostics()
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("[{}] {}", d.lint, d.message))
        .collect()
}

fn library_errors(source: &str) -> Vec<String> {
    check(source)
        .diagnostics
        .iter()
        .filter(|d| d.lint == Lint::Library && d.severity == Severity::Error)
        .map(|d| d.message.clone())
        .collect()
}

const GOOD: &str = "#!lua name=mylib
local function count(keys, args)
  return redis.call('INCRBY', keys[1], args[1])
end

redis.register_function('count', count)

redis.register_function('set_if', function(k, a)
  if redis.call('GET', k[1]) == a[1] then
    return redis.call('SET', k[1], a[2])
  end
  return nil
end)

redis.register_function{
  function_name = 'peek',
  callback = function(keys) return redis.call('GET', keys[1]) end,
  flags = {'no-writes', 'allow-stale'},
  description = 'reads a key',
}
";

#[test]
fn a_good_library_has_no_diagnostics() {
    let report = check(GOOD);
    assert!(report.is_ok(), "{:?}", report.all_diagnostics());
    assert!(
        report.all_diagnostics().is_empty(),
        "{:?}",
        report.all_diagnostics()
    );
    assert_eq!(report.name.as_deref(), Some("mylib"));
    let names: Vec<&str> = report.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["count", "set_if", "peek"]);
    let count = report.function("count").unwrap();
    assert!(count.checked && !count.read_only && count.info.writes);
    assert_eq!(count.info.keys_read.iter().collect::<Vec<_>>(), [&1]);
    assert_eq!(count.info.args_read.iter().collect::<Vec<_>>(), [&1]);
    assert_eq!(
        count.info.returns.as_deref(),
        Some(&["integer".to_string()][..])
    );
    let set_if = report.function("set_if").unwrap();
    assert_eq!(set_if.info.args_read.iter().collect::<Vec<_>>(), [&1, &2]);
    let peek = report.function("peek").unwrap();
    assert_eq!(peek.flags, ["no-writes", "allow-stale"]);
    assert!(peek.read_only && !peek.info.writes);
    assert_eq!(
        peek.name_span.start.line, 16,
        "the name's place is in the library"
    );
}

#[test]
fn declared_inputs_are_checked_against_the_parameters() {
    assert!(declaring(GOOD, "set_if", 1, 2).is_ok());
    let report = declaring(GOOD, "set_if", 1, 1);
    let set_if = report.function("set_if").unwrap();
    let d = &set_if.diagnostics[0];
    assert_eq!(d.lint, Lint::Arity);
    assert!(
        d.message.contains("a[2]"),
        "named as the parameter: {}",
        d.message
    );
    let span = d.primary_span().unwrap();
    assert_eq!((span.start.line, span.start.column), (10, 36));
    // The same span as the script equivalent's, in the library's text.
    let script = "return redis.call('SET', KEYS[1], ARGV[2])";
    let report = crate::analyze(
        script,
        &Options {
            declared: Some(Declared::exact(1, 1)),
            ..Options::default()
        },
    );
    let in_script = report.diagnostics[0].primary_span().unwrap();
    let in_script = &script[in_script.start.offset..in_script.end.offset];
    assert_eq!(
        &GOOD[span.start.offset..span.end.offset],
        in_script.replace("ARGV", "a")
    );
    // A declared key the function never reads is an error at the field.
    let report = declaring(GOOD, "peek", 2, 0);
    let peek = report.function("peek").unwrap();
    assert_eq!(peek.diagnostics.len(), 1, "{:?}", peek.diagnostics);
    assert_eq!(peek.diagnostics[0].target, Target::Key(1));
    assert!(
        peek.diagnostics[0].message.contains("keys[2]"),
        "{}",
        peek.diagnostics[0].message
    );
    // The other functions are checked without declarations.
    assert!(report.function("count").unwrap().diagnostics.is_empty());
}

#[test]
fn returns_and_lints_apply_to_the_body() {
    let options = LibraryOptions {
        function: Some("count".to_string()),
        options: Options {
            declared: Some(Declared::exact(1, 1)),
            returns: Some(ReturnKind::Array.into()),
            ..Options::default()
        },
    };
    let report = analyze_library(GOOD, &options);
    let count = report.function("count").unwrap();
    assert!(
        count.diagnostics.iter().any(|d| d.lint == Lint::ReturnType),
        "{:?}",
        count.diagnostics
    );
    let source = "#!lua name=l\nredis.register_function('f', function(keys, args)\n  return redis.call('HINCRBYY', keys[1])\nend)\n";
    let report = check(source);
    let errors = errors(&report);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("[unknown_command]"), "{errors:?}");
    let d = &report.function("f").unwrap().diagnostics[0];
    assert_eq!(d.primary_span().unwrap().start.line, 3);
}

#[test]
fn a_write_in_a_no_writes_function_is_an_error() {
    let source = "#!lua name=l\nredis.register_function{function_name='f', flags={'no-writes'},\n  callback=function(keys) return redis.call('DEL', keys[1]) end}\n";
    let report = check(source);
    let f = report.function("f").unwrap();
    assert!(f.read_only);
    let d = &f.diagnostics[0];
    assert_eq!(d.lint, Lint::WriteInReadOnly);
    assert_eq!(d.message, "`DEL` writes, but this function is read-only");
    assert_eq!(
        d.notes[0],
        "the function is registered with the `no-writes` flag (called with FCALL_RO)"
    );
    assert!(
        d.notes.iter().all(|n| !n.contains("EVALSHA_RO")),
        "{:?}",
        d.notes
    );
    let writable = source.replace("flags={'no-writes'},", "");
    assert!(check(&writable).is_ok());
}

#[test]
fn the_first_line_must_name_the_library() {
    let body = "redis.register_function('f', function() return 1 end)\n";
    assert!(check(&format!("#!lua name=ok_1\n{body}")).is_ok());
    for (first, message) in [
        ("", "must start with `#!lua name=<library>`"),
        ("#!lua\n", "the library has no name"),
        ("#!lua name=my-lib\n", "invalid library name `my-lib`"),
        (
            "#!lua name=x flags=no-writes\n",
            "unknown library metadata `flags=no-writes`",
        ),
    ] {
        let errors = library_errors(&format!("{first}{body}"));
        assert_eq!(errors.len(), 1, "{first}: {errors:?}");
        assert!(errors[0].contains(message), "{first}: {errors:?}");
    }
}

#[test]
fn function_names_follow_redis_rules_and_are_unique() {
    let errors = library_errors(
        "#!lua name=l\nredis.register_function('a-b', function() return 1 end)\nredis.register_function('ok', function() return 1 end)\n",
    );
    assert_eq!(errors, ["invalid function name `a-b`"]);
    let source = "#!lua name=l\nredis.register_function('f', function() return 1 end)\nredis.register_function{function_name='f', callback=function() return 2 end}\n";
    let report = check(source);
    assert_eq!(errors_of(&report), ["function `f` is registered twice"]);
    let d = &report.diagnostics[0];
    assert_eq!(d.primary_span().unwrap().start.line, 3);
    assert_eq!(d.secondary[0].span.start.line, 2);
    assert_eq!(report.functions.len(), 1);
}

fn errors_of(report: &LibraryReport) -> Vec<String> {
    report
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.message.clone())
        .collect()
}

#[test]
fn flags_must_be_known() {
    let source = "#!lua name=l\nredis.register_function{function_name='f', callback=function() return 1 end, flags={'no-write', 'allow-oom', 'bogus'}}\n";
    let report = check(source);
    let errors: Vec<&Diagnostic> = report.diagnostics.iter().collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(errors[0].message, "unknown function flag `no-write`");
    assert_eq!(
        errors[0].label.as_deref(),
        Some("did you mean `no-writes`?")
    );
    assert_eq!(errors[1].message, "unknown function flag `bogus`");
    assert_eq!(report.function("f").unwrap().flags, ["allow-oom"]);
    let errors = library_errors(
        "#!lua name=l\nredis.register_function{function_name='f', callback=function() return 1 end, flags='no-writes'}\n",
    );
    assert_eq!(
        errors,
        ["`flags` must be a table of strings: `flags = {'no-writes'}`"]
    );
}

#[test]
fn malformed_registrations_are_refused() {
    for (call, message) in [
        (
            "redis.register_function('f')",
            "with one argument takes a table",
        ),
        (
            "redis.register_function('f', 5)",
            "the callback of `redis.register_function` must be a function",
        ),
        (
            "redis.register_function{callback=function() return 1 end}",
            "needs a `function_name` field",
        ),
        (
            "redis.register_function{function_name='f'}",
            "needs a `callback` field",
        ),
        (
            "redis.register_function{function_name='f', callbak=function() return 1 end}",
            "unknown field `callbak`",
        ),
        (
            "redis.register_function('f', function() end, 3)",
            "here it gets 3 arguments",
        ),
    ] {
        let errors = library_errors(&format!("#!lua name=l\n{call}\n"));
        assert!(
            errors.iter().any(|e| e.contains(message)),
            "{call}: {errors:?}"
        );
    }
}

#[test]
fn redis_call_at_load_time_is_refused() {
    let source = "#!lua name=l\nlocal v = redis.call('GET', 'x')\nredis.log(redis.LOG_WARNING, redis.REDIS_VERSION)\nlocal function helper(k) return redis.call('GET', k) end\nredis.register_function('f', function(keys) return helper(keys[1]) end)\n";
    let errors = library_errors(source);
    assert_eq!(
        errors,
        ["`redis.call` is not available while the library loads"]
    );
    let report = check(source);
    assert_eq!(report.diagnostics[0].primary_span().unwrap().start.line, 2);
    // Inside the helper and the callback, it is fine.
    assert!(library_errors(&source.replace("local v = redis.call('GET', 'x')\n", "")).is_empty());
}

#[test]
fn no_other_global_exists_at_load_time() {
    // As Redis 7.0.15 answers FUNCTION LOAD: string, tonumber, cjson... are
    // missing while the library loads, and fine inside functions.
    let source = "#!lua name=l\nlocal p = string.upper('x') .. tostring(1)\nlocal function f(keys) return string.lower(keys[1]) .. cjson.encode({}) end\nredis.register_function('f', f)\nredis.log(redis.LOG_NOTICE, 'loaded')\n";
    assert_eq!(
        library_errors(source),
        [
            "`string` is not available while the library loads",
            "`tostring` is not available while the library loads"
        ]
    );
    let report = check(source);
    let f = report.function("f").unwrap();
    assert!(
        f.diagnostics.iter().all(|d| d.severity != Severity::Error),
        "{:?}",
        f.diagnostics
    );
}

#[test]
fn keys_and_argv_do_not_exist_in_functions() {
    let source = "#!lua name=l\nredis.register_function('f', function(keys, args) return redis.call('GET', KEYS[1]) .. ARGV[1] end)\n";
    let report = check(source);
    assert_eq!(
        errors_of(&report),
        [
            "`KEYS` does not exist in a Redis function",
            "`ARGV` does not exist in a Redis function"
        ]
    );
    // Not also counted as inputs of the function.
    let f = report.function("f").unwrap();
    assert!(f.info.keys_read.is_empty() && f.info.args_read.is_empty());
    let report = declaring(source, "f", 0, 0);
    assert!(
        report
            .function("f")
            .unwrap()
            .diagnostics
            .iter()
            .all(|d| d.lint != Lint::Arity)
    );
    // Parameters named KEYS and ARGV are the parameters.
    assert!(check("#!lua name=l\nredis.register_function('f', function(KEYS, ARGV) return redis.call('GET', KEYS[1]) end)\n").is_ok());
}

#[test]
fn a_library_must_register_a_function() {
    assert_eq!(
        library_errors("#!lua name=l\nlocal x = 1\n"),
        ["the library registers no function"]
    );
    // A malformed registration is reported for itself only.
    let errors = library_errors("#!lua name=l\nredis.register_function('f')\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
}

#[test]
fn top_level_code_is_checked_once() {
    let source = "#!lua name=l\nlocal function helper(k) return redis.call('GETT', k) end\nredis.register_function('f', function(keys) return helper(keys[1]) end)\nredis.register_function('g', function(keys) return helper(keys[1]) end)\n";
    let report = check(source);
    let all = report.all_diagnostics();
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].lint, Lint::UnknownCommand);
    // A global assignment at the top level is refused by Redis too.
    let report =
        check("#!lua name=l\nx = 5\nredis.register_function('f', function() return 1 end)\n");
    assert_eq!(report.diagnostics[0].lint, Lint::GlobalAssignment);
}

#[test]
fn bodies_see_earlier_locals_only() {
    let source = "#!lua name=l\nlocal prefix = 'p:'\nredis.register_function('f', function(keys) return redis.call('GET', prefix .. keys[1]) .. later end)\nlocal later = 1\n";
    let report = check(source);
    let errors = errors(&report);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("later"), "{errors:?}");
}

#[test]
fn a_callback_may_call_another_functions_callback() {
    let source = "#!lua name=l\nlocal function get(keys) return redis.call('GET', keys[1]) end\nredis.register_function('get', get)\nredis.register_function('get_twice', function(keys) return {get(keys), get(keys)} end)\n";
    let report = check(source);
    assert!(
        report.all_diagnostics().is_empty(),
        "{:?}",
        report.all_diagnostics()
    );
}

#[test]
fn a_local_function_callback_may_call_itself() {
    let source = "#!lua name=l\nlocal function count(keys, args)\n  if tonumber(args[1]) > 0 then return 1 + count(keys, {tonumber(args[1]) - 1}) end\n  return redis.call('EXISTS', keys[1])\nend\nredis.register_function('count', count)\n";
    let report = check(source);
    let errors = errors(&report);
    assert!(errors.is_empty(), "{errors:?}");
    // Another undefined name is still reported.
    let report = check(&source.replace("1 + count(", "1 + cuont("));
    assert_eq!(errors_of_function(&report, "count"), ["[undefined_global]"]);
}

fn errors_of_function(report: &LibraryReport, name: &str) -> Vec<String> {
    report
        .function(name)
        .unwrap()
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| format!("[{}]", d.lint))
        .collect()
}

#[test]
fn callbacks_out_of_sight_are_warned_about() {
    let report = check("#!lua name=l\nlocal t = {}\nredis.register_function('f', t.f)\n");
    assert!(report.is_ok());
    assert!(!report.function("f").unwrap().checked);
    assert_eq!(report.diagnostics[0].severity, Severity::Warning);
}

#[test]
fn registration_in_a_function_body_is_an_error() {
    let source = "#!lua name=l\nredis.register_function('f', function() redis.register_function('g', function() end) return 1 end)\n";
    let report = check(source);
    assert!(!report.is_ok());
    // At load time, inside an `if`, it is fine (but not analyzed).
    let source = "#!lua name=l\nif redis.REDIS_VERSION_NUM > 0 then redis.register_function('f', function() return 1 end) end\n";
    let report = check(source);
    assert!(
        report
            .diagnostics
            .iter()
            .all(|d| d.lint != Lint::UnknownMember),
        "{:?}",
        report.diagnostics
    );
}

#[test]
fn syntax_errors_are_library_errors() {
    let report =
        check("#!lua name=l\nredis.register_function('f', function() return 1 return 2 end)\n");
    assert_eq!(report.diagnostics[0].lint, Lint::Syntax);
    assert!(report.functions.is_empty());
}

#[test]
fn allowed_lints_are_off_in_every_function() {
    let source = "#!lua name=l\nredis.register_function('f', function() return redis.call('GET', 'lit') end)\n";
    assert!(
        check(source)
            .function("f")
            .unwrap()
            .diagnostics
            .iter()
            .any(|d| d.lint == Lint::LiteralKey)
    );
    let options = LibraryOptions {
        function: None,
        options: Options {
            allow: vec![Lint::LiteralKey],
            ..Options::default()
        },
    };
    let report = analyze_library(source, &options);
    assert!(report.all_diagnostics().is_empty());
    assert!(!Lint::Library.can_be_allowed());
}
