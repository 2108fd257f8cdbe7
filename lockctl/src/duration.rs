//! Durations on the command line (`500ms`, `30s`, `2m`, `1h 30m`) and in
//! output.

use std::time::Duration;

/// Parses a duration as written on the command line: a number and a unit
/// (`ms`, `s`, `m`, `h`, ...), possibly several (`1m 30s`). A bare number is
/// refused: its unit would be a guess.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "`{text}` has no unit: write it as `{text}s` or `{text}ms`"
        ));
    }
    humantime::parse_duration(text)
        .map_err(|e| format!("`{text}` is not a duration like 500ms, 30s or 2m ({e})"))
}

/// Like [`parse`], refusing zero (a lease or a watchdog timeout of zero
/// makes no sense).
pub fn parse_positive(text: &str) -> Result<Duration, String> {
    let duration = parse(text)?;
    if duration.is_zero() {
        return Err(format!("`{}` must be longer than zero", text.trim()));
    }
    Ok(duration)
}

/// The shortest watchdog timeout the lock runtime accepts.
pub const MIN_WATCHDOG_TIMEOUT: Duration = Duration::from_millis(30);

/// Like [`parse`], for `--watchdog-timeout`: at least
/// [`MIN_WATCHDOG_TIMEOUT`], so that a bad value is a usage error before
/// anything connects.
pub fn parse_watchdog(text: &str) -> Result<Duration, String> {
    let duration = parse(text)?;
    if duration < MIN_WATCHDOG_TIMEOUT {
        return Err(format!(
            "`{}` is too short: the watchdog timeout must be at least 30ms",
            text.trim()
        ));
    }
    Ok(duration)
}

/// Shows a duration to people, to the millisecond: `29s 812ms`, `2m`.
pub fn show(duration: Duration) -> String {
    let millis = Duration::from_millis(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX));
    if millis.is_zero() {
        return "0s".to_string();
    }
    humantime::format_duration(millis).to_string()
}

/// A duration in whole milliseconds, for JSON.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_usual_units() {
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("0s"), Ok(Duration::ZERO));
    }

    #[test]
    fn refuses_bare_numbers_and_nonsense() {
        assert!(parse("30").unwrap_err().contains("no unit"));
        assert!(parse("soon").unwrap_err().contains("not a duration"));
        assert!(parse("").is_err());
        assert!(parse("-1s").is_err());
        assert!(
            parse_positive("0ms")
                .unwrap_err()
                .contains("longer than zero")
        );
        assert!(parse_watchdog("1ms").unwrap_err().contains("at least 30ms"));
        assert_eq!(parse_watchdog("30ms"), Ok(MIN_WATCHDOG_TIMEOUT));
    }

    #[test]
    fn shows_to_the_millisecond() {
        assert_eq!(show(Duration::from_micros(29_812_345)), "29s 812ms");
        assert_eq!(show(Duration::from_secs(120)), "2m");
        assert_eq!(show(Duration::from_micros(10)), "0s");
    }
}
