//! lockctl over TLS (`rediss://`, the default `tls-rustls` feature), against
//! a TLS-only redis-server whose certificate a private CA made at test time
//! signed. The CA is trusted through `SSL_CERT_FILE`, which replaces the
//! platform's root certificates.

mod common;

use common::{lockctl_at, run};
use redlua_test_support::{RedisServer, TestCa};

#[test]
fn run_and_status_work_over_tls_with_a_private_ca() {
    let ca = TestCa::new("redlua test CA");
    let server = RedisServer::start_tls(
        &ca.issue("redis", &["IP:127.0.0.1"]),
        ["--tls-auth-clients", "no"],
    );
    let url = server.url();
    assert!(url.starts_with("rediss://"), "{url}");

    let out = run(lockctl_at(&url).env("SSL_CERT_FILE", ca.cert_path()).args([
        "run",
        "tls-job",
        "--",
        "sh",
        "-c",
        "echo held",
    ]));
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (Some(0), "held\n"),
        "{out:?}"
    );
    // Free again: `status` exits 1.
    let out = run(lockctl_at(&url)
        .env("SSL_CERT_FILE", ca.cert_path())
        .args(["status", "tls-job"]));
    assert_eq!(out.code, Some(1), "{out:?}");

    // Without the CA, the certificate is refused: exit 125, and says why.
    let empty = server.dir().join("no-roots.pem");
    std::fs::write(&empty, "").expect("write");
    let out = run(lockctl_at(&url)
        .env("SSL_CERT_FILE", &empty)
        .args(["status", "tls-job"]));
    assert_eq!(out.code, Some(125), "{out:?}");
    assert!(
        out.stderr
            .contains("invalid peer certificate: UnknownIssuer"),
        "{}",
        out.stderr
    );
}
