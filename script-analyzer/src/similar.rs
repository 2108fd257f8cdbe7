//! "Did you mean" suggestions: the closest candidate by edit distance.

/// The candidate closest to `word`, if it is close enough to be a likely typo
/// (at most one edit for short words, two for longer ones, compared without
/// regard to case). Ties go to the first candidate.
///
/// The macro uses it for its own "did you mean" (option and lint names).
///
/// ```
/// use redlua_analyzer::best_match;
///
/// assert_eq!(best_match("readonly", ["returns", "read_only"]), Some("read_only"));
/// assert_eq!(best_match("publish", ["returns", "read_only"]), None);
/// ```
pub fn best_match<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word = word.to_ascii_lowercase();
    let limit = match word.chars().count() {
        0..=2 => 0,
        3..=5 => 1,
        _ => 2,
    };
    let mut best: Option<(usize, &str)> = None;
    for candidate in candidates {
        let distance = edit_distance(&word, &candidate.to_ascii_lowercase());
        if distance == 0 {
            // The word is right (perhaps in another case): nothing to suggest.
            return None;
        }
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Optimal string alignment distance: insertions, deletions, substitutions and
/// transpositions of neighbours each cost one.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let width = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * width];
    for i in 0..=a.len() {
        d[i * width] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[(i - 1) * width + j] + 1)
                .min(d[i * width + j - 1] + 1)
                .min(d[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[(i - 2) * width + j - 2] + 1);
            }
            d[i * width + j] = best;
        }
    }
    d[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("hincrbyy", "hincrby"), 1);
        assert_eq!(edit_distance("clal", "call"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn suggests_close_words_only() {
        let names = ["call", "pcall", "log", "sha1hex"];
        assert_eq!(best_match("cal", names), Some("call"));
        assert_eq!(
            best_match("CALL", names),
            None,
            "equal words are no suggestion"
        );
        assert_eq!(best_match("sha1hx", names), Some("sha1hex"));
        assert_eq!(best_match("publish", names), None);
        assert_eq!(best_match("lo", names), None, "too short to guess");
    }
}
