//! One-line summaries of Redis commands, for hovers: data from Redis's
//! command JSON files (see `table.rs` for the release and licence), made by
//! `redlua-lsp/tools/gen-summaries`.

#[rustfmt::skip]
mod table;

/// The summary of `name` (lower case; `container|sub` for a subcommand).
pub fn of(name: &str) -> Option<&'static str> {
    table::SUMMARIES
        .binary_search_by(|(command, _)| command.cmp(&name))
        .ok()
        .map(|i| table::SUMMARIES[i].1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn summaries_are_sorted_and_found() {
        assert!(super::table::SUMMARIES.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(super::of("get"), Some("Returns the string value of a key."));
        assert!(super::of("object|encoding").is_some());
        assert_eq!(super::of("nosuch"), None);
    }
}
