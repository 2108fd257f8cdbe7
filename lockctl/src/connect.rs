//! Reaching the Redis server named by `--url` / `REDIS_URL`.

use crate::exit::{self, Failure};
use redlua_runtime::LockClient;
use std::time::Duration;

/// How long connecting may take before lockctl gives up.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a reply on a plain connection may take.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(5);

/// The URL to use, or a usage error saying how to give one.
pub fn url(given: Option<&str>) -> Result<&str, Failure> {
    match given.map(str::trim) {
        Some(url) if !url.is_empty() => Ok(url),
        _ => Err(Failure::usage(
            "no Redis server given: pass --url redis://HOST:PORT/ or set REDIS_URL",
        )),
    }
}

/// A lock client on `url`, with the given watchdog timeout (the client's
/// default when `None`). An unreachable server fails within the connect
/// timeout.
pub async fn lock_client(url: &str, watchdog: Option<Duration>) -> Result<LockClient, Failure> {
    parse(url)?;
    let mut builder = LockClient::builder(url).connect_timeout(CONNECT_TIMEOUT);
    if let Some(timeout) = watchdog {
        builder = builder.watchdog_timeout(timeout);
    }
    match tokio::time::timeout(CONNECT_TIMEOUT * 2, builder.connect()).await {
        Ok(Ok(client)) => Ok(client),
        Ok(Err(error @ redlua_runtime::Error::Config(_))) => Err(Failure::lock(error)),
        Ok(Err(redlua_runtime::Error::NotRedis { .. })) => Err(not_redis(url)),
        Ok(Err(redlua_runtime::Error::Connect { reason, .. })) => {
            Err(connect_failure(url, &reason))
        }
        Ok(Err(error)) => Err(connect_failure(url, &error.to_string())),
        Err(_) => Err(timed_out(url)),
    }
}

/// A plain Redis connection on `url` (for what the lock runtime does not
/// do: SCAN, holder identities), with the same timeouts.
pub async fn redis_connection(url: &str) -> Result<redis::aio::MultiplexedConnection, Failure> {
    let client = parse(url)?;
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(CONNECT_TIMEOUT))
        .set_response_timeout(Some(RESPONSE_TIMEOUT));
    match tokio::time::timeout(
        CONNECT_TIMEOUT * 2,
        client.get_multiplexed_async_connection_with_config(&config),
    )
    .await
    {
        Ok(Ok(con)) => Ok(con),
        Ok(Err(error)) if error.kind() == redis::ErrorKind::Parse => Err(not_redis(url)),
        Ok(Err(error)) => Err(connect_failure(url, &error.to_string())),
        Err(_) => Err(timed_out(url)),
    }
}

/// The client of `url`, or a usage error saying what a Redis URL looks like.
fn parse(url: &str) -> Result<redis::Client, Failure> {
    redis::Client::open(url).map_err(|_| {
        Failure::usage(format!(
            "`{}` is not a Redis URL: expected redis://HOST:PORT/ or rediss://HOST:PORT/ (TLS)",
            shown(url)
        ))
        .with_hint(exit::URL_HINT)
    })
}

/// The failure for a server that answered, but not as Redis.
fn not_redis(url: &str) -> Failure {
    Failure::failed(format!("{} did not answer as Redis", shown(url)))
        .with_hint(exit::NOT_REDIS_HINT)
}

fn connect_failure(url: &str, error: &str) -> Failure {
    Failure::failed(format!("cannot connect to {}: {error}", shown(url)))
}

fn timed_out(url: &str) -> Failure {
    Failure::failed(format!(
        "cannot connect to {}: no answer within {}s",
        shown(url),
        CONNECT_TIMEOUT.as_secs()
    ))
}

/// The URL as shown in messages: a user name and password are masked.
pub fn shown(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_url_says_how_to_give_one() {
        let failure = url(None).unwrap_err();
        assert_eq!(failure.code, crate::exit::USAGE);
        assert!(failure.message.contains("REDIS_URL"), "{failure}");
        assert!(url(Some("  ")).is_err());
        assert_eq!(url(Some("redis://h/")).ok(), Some("redis://h/"));
    }

    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(shown("redis://:s3cret@h:1/0"), "redis://***@h:1/0");
        assert_eq!(shown("redis://u:p@ss@h"), "redis://***@h");
        assert_eq!(shown("redis://h:1/?x=a@b"), "redis://h:1/?x=a@b");
        assert_eq!(shown("unix:///tmp/r.sock"), "unix:///tmp/r.sock");
        assert_eq!(shown("nonsense"), "nonsense");
    }
}
