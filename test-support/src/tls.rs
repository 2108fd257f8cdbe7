//! Certificates made at test time, for TLS-only `redis-server`s.
//!
//! [`TestCa`] is a private certificate authority whose key lives in a
//! temporary directory; [`TestCa::issue`] signs a certificate (server and
//! client use) for the names given. Everything is made with the `openssl`
//! command-line tool (installed by `tools/ensure-redis`), with EC P-256 keys
//! and configuration files of its own, so the machine's `openssl.cnf` does
//! not matter.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// A throwaway certificate authority: a self-signed CA certificate and its
/// key, in a temporary directory removed on drop.
///
/// ```no_run
/// use redlua_test_support::{RedisServer, TestCa};
/// let ca = TestCa::new("redlua test CA");
/// let server = RedisServer::start_tls(&ca.issue("server", &["IP:127.0.0.1"]), ["--tls-auth-clients", "no"]);
/// let trusted: Vec<u8> = ca.cert_pem();
/// # let _ = (server, trusted);
/// ```
#[derive(Debug)]
pub struct TestCa {
    dir: tempfile::TempDir,
    cert: PathBuf,
    key: PathBuf,
    issued: AtomicU32,
}

/// A certificate signed by a [`TestCa`], its key and the CA's certificate,
/// as PEM files (in the CA's directory).
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM, PKCS#8, unencrypted).
    pub key: PathBuf,
    /// The certificate of the CA that signed it (PEM).
    pub ca_cert: PathBuf,
}

impl Issued {
    /// The certificate, as PEM bytes.
    ///
    /// # Panics
    ///
    /// When the file cannot be read.
    pub fn cert_pem(&self) -> Vec<u8> {
        read(&self.cert)
    }

    /// The private key, as PEM bytes.
    ///
    /// # Panics
    ///
    /// When the file cannot be read.
    pub fn key_pem(&self) -> Vec<u8> {
        read(&self.key)
    }
}

impl TestCa {
    /// Makes a new CA named `common_name` (valid for two days).
    ///
    /// # Panics
    ///
    /// When `openssl` is missing or fails (its output is in the message).
    pub fn new(common_name: &str) -> TestCa {
        let dir = tempfile::Builder::new()
            .prefix("redlua-tls-")
            .tempdir()
            .unwrap_or_else(|e| panic!("cannot create a temporary directory: {e}"));
        let config = dir.path().join("ca.cnf");
        write(
            &config,
            &format!(
                "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = {common_name}\n\
                 [ca]\nbasicConstraints = critical,CA:TRUE\n\
                 keyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\n"
            ),
        );
        let cert = dir.path().join("ca.crt");
        let key = dir.path().join("ca.key");
        openssl(
            dir.path(),
            &[
                "req",
                "-x509",
                "-config",
                "ca.cnf",
                "-extensions",
                "ca",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                "ca.key",
                "-out",
                "ca.crt",
                "-days",
                "2",
            ],
        );
        TestCa {
            dir,
            cert,
            key,
            issued: AtomicU32::new(0),
        }
    }

    /// The CA's certificate, as PEM bytes: what a client trusts.
    ///
    /// # Panics
    ///
    /// When the file cannot be read.
    pub fn cert_pem(&self) -> Vec<u8> {
        read(&self.cert)
    }

    /// The CA's certificate file.
    pub fn cert_path(&self) -> &Path {
        &self.cert
    }

    /// Issues a certificate named `common_name` for the subject alternative
    /// names `sans` (`"IP:127.0.0.1"`, `"DNS:localhost"`), good for server
    /// and client authentication, valid for two days.
    ///
    /// # Panics
    ///
    /// When `openssl` fails (its output is in the message).
    pub fn issue(&self, common_name: &str, sans: &[&str]) -> Issued {
        let n = self.issued.fetch_add(1, Ordering::Relaxed) + 1;
        let base = format!("issued-{n}");
        let dir = self.dir.path();
        write(
            &dir.join(format!("{base}.cnf")),
            &format!(
                "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\nCN = {common_name}\n\
                 [leaf]\nbasicConstraints = critical,CA:FALSE\n\
                 keyUsage = critical,digitalSignature,keyEncipherment\n\
                 extendedKeyUsage = serverAuth,clientAuth\nsubjectAltName = {}\n",
                sans.join(",")
            ),
        );
        let (cnf, csr, crt, key) = (
            format!("{base}.cnf"),
            format!("{base}.csr"),
            format!("{base}.crt"),
            format!("{base}.key"),
        );
        openssl(
            dir,
            &[
                "req",
                "-new",
                "-config",
                &cnf,
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                &key,
                "-out",
                &csr,
            ],
        );
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "2",
                "-extfile",
                &cnf,
                "-extensions",
                "leaf",
                "-out",
                &crt,
            ],
        );
        Issued {
            cert: dir.join(crt),
            key: dir.join(key),
            ca_cert: self.cert.clone(),
        }
    }

    /// The CA's key file (for tests that sign something themselves).
    pub fn key_path(&self) -> &Path {
        &self.key
    }
}

/// Runs `openssl args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot run openssl ({e}): run tools/ensure-redis, or apt-get install openssl")
        });
    assert!(
        output.status.success(),
        "openssl {} failed ({})\n{}{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}
