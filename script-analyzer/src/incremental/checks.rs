//! The lints' findings in one unit's statement, and whether the old
//! statement gives what the analysis of the whole script found in it.

use super::compare::{input_reads, names_declared, overlaps, same, within};
use super::{Inner, UnitState};
use crate::Diagnostic;
use crate::calls::RedisCall;
use crate::facts::Types;
use crate::lints::maybe_false::{self, Candidates};
use crate::lints::{self, Context, Lint};
use crate::scope::Resolution;
use full_moon::ast::Stmt;
use full_moon::tokenizer::TokenReference;
use std::collections::{BTreeSet, HashMap};

impl Inner {
    /// Whether `checks` (of the statement in bytes `range`) are what the
    /// analysis of the whole script found there.
    pub(super) fn found_as_before(&self, checks: &Checks, range: (usize, usize)) -> bool {
        let mut outputs = checks.outputs.iter();
        for (lint, found) in &self.outputs {
            let here: Vec<&Diagnostic> = found
                .iter()
                .filter(|d| d.primary_span().is_some_and(|s| overlaps(s, range)))
                .collect();
            if lints::MAIN_CHUNK.contains(lint) || *lint == Lint::MaybeFalse {
                // Those keep their findings: none may be in the statement.
                if *lint != Lint::MaybeFalse && !here.is_empty() {
                    return false;
                }
                continue;
            }
            let Some((checked, again)) = outputs.next() else {
                return false;
            };
            if checked != lint
                || here.len() != again.len()
                || here.iter().zip(again).any(|(a, b)| !same(a, b))
                || here
                    .iter()
                    .any(|d| d.primary_span().is_some_and(|s| !within(s, range)))
            {
                return false;
            }
        }
        let in_range = |c: &&maybe_false::Candidate| {
            c.diagnostic
                .primary_span()
                .is_some_and(|s| within(s, range))
        };
        let same_candidates = |kept: &[maybe_false::Candidate],
                               found: &[maybe_false::Candidate]| {
            let kept: Vec<&maybe_false::Candidate> = kept.iter().filter(in_range).collect();
            kept.len() == found.len()
                && kept
                    .iter()
                    .zip(found)
                    .all(|(a, b)| a.key == b.key && same(&a.diagnostic, &b.diagnostic))
        };
        same_candidates(&self.candidates.operands, &checks.candidates.operands)
            && same_candidates(&self.candidates.methods, &checks.candidates.methods)
    }

    /// The lints' findings on one statement (in bytes `range`), and what
    /// it tells the rest of the script.
    pub(super) fn check_unit(
        &self,
        types: &Types<'_>,
        stmt: &Stmt,
        range: (usize, usize),
    ) -> Checks {
        let calls: Vec<RedisCall> = self
            .calls
            .iter()
            .filter(|c| range.0 <= c.span.start.offset && c.span.start.offset < range.1)
            .cloned()
            .collect();
        let tested: BTreeSet<(String, String)> = self.tested.keys().cloned().collect();
        let unit = lints::Unit {
            stmt,
            start: range.0,
            end: range.1,
            tested_members: &tested,
        };
        let cx = Context {
            source: &self.padded,
            ast: &self.base,
            model: &self.model,
            types,
            options: &self.options,
            read_only: self.read_only,
            unit: Some(&unit),
        };
        let outputs = lints::run_unit(&cx, &calls);
        let candidates = maybe_false::candidates(&cx);
        let tests = lints::unknown_member::tests(&cx);
        let inputs = input_reads(&cx);
        let names = names_declared(&self.model, stmt);
        Checks {
            outputs,
            candidates,
            tests,
            inputs,
            names,
        }
    }

    /// The locals of the main chunk in scope at unit `i`'s statement.
    pub(super) fn outer_scope(&self, i: usize) -> HashMap<String, usize> {
        let mut scope = HashMap::new();
        let mut declare = |token: &TokenReference| {
            if let Some(Resolution::Local(var)) = self.model.resolve(token) {
                scope.insert(token.token().to_string(), var);
            }
        };
        for stmt in self.base.nodes().stmts().take(self.units[i].index) {
            match stmt {
                Stmt::LocalAssignment(local) => local.names().iter().for_each(&mut declare),
                Stmt::LocalFunction(local) => declare(local.name()),
                _ => {}
            }
        }
        scope
    }

    /// The variables in the order they are declared: the base's, each
    /// unit's own replaced by those of its statement now.
    pub(super) fn order(&self) -> Vec<usize> {
        let mut order = Vec::with_capacity(self.model.variables.len());
        let mut units: Vec<&UnitState> = self.units.iter().collect();
        units.sort_by_key(|u| u.base_inner.start);
        let mut next = 0;
        for unit in units {
            order.extend(next..unit.base_inner.start);
            order.extend(unit.inner.clone());
            next = unit.base_inner.end.max(next);
        }
        order.extend(next..self.base_vars);
        order
    }
}

/// What the lints found in one statement, and what it tells the rest.
pub(super) struct Checks {
    pub(super) outputs: Vec<(Lint, Vec<Diagnostic>)>,
    pub(super) candidates: Candidates,
    /// Its tests of library members' existence.
    pub(super) tests: Vec<(String, String)>,
    /// Its reads of `KEYS` and `ARGV`.
    pub(super) inputs: Vec<(&'static str, Option<u32>)>,
    /// The names of the variables it declares, in order.
    pub(super) names: Vec<String>,
}
