//! TLS settings of a client: the certificates given to its builder, and
//! how they are put on every connection it makes (command, pub/sub, cluster
//! nodes, masters named by sentinels).
//!
//! With the `tls-rustls` feature, a `rediss://` URL connects with rustls,
//! verifying the server's certificate and name (against the platform's root
//! certificates, or only against the CA given with
//! `LockClientBuilder::tls_root_certificate`, a method of that feature).
//! rustls needs a process-wide crypto provider: unless the program installed
//! one, the first TLS connection installs `ring`'s.

use crate::base::error::{Error, Result};
use redis::{ConnectionAddr, ConnectionInfo};

/// The certificates a client's TLS connections use besides the defaults.
#[derive(Clone, Default)]
pub(crate) struct TlsSettings {
    /// PEM certificates of the CAs to trust instead of the platform's.
    #[cfg(feature = "tls-rustls")]
    pub(crate) root: Option<Vec<u8>>,
    /// PEM certificate chain and key to present (mutual TLS).
    #[cfg(feature = "tls-rustls")]
    pub(crate) client: Option<(Vec<u8>, Vec<u8>)>,
}

impl std::fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("TlsSettings");
        #[cfg(feature = "tls-rustls")]
        debug
            .field("root", &self.root.is_some())
            .field("client", &self.client.is_some());
        debug.finish()
    }
}

impl TlsSettings {
    /// Whether certificates were given.
    fn any(&self) -> bool {
        #[cfg(feature = "tls-rustls")]
        return self.root.is_some() || self.client.is_some();
        #[cfg(not(feature = "tls-rustls"))]
        false
    }

    /// The certificates in redis-rs's form, if any were given.
    #[cfg(feature = "tls-rustls")]
    pub(crate) fn certificates(&self) -> Option<redis::TlsCertificates> {
        self.any().then(|| redis::TlsCertificates {
            client_tls: self
                .client
                .as_ref()
                .map(|(cert, key)| redis::ClientTlsConfig {
                    client_cert: cert.clone(),
                    client_key: key.clone(),
                }),
            root_cert: self.root.clone(),
        })
    }

    /// `info` with these settings: for a TLS address, the certificates
    /// (parsed now, so a bad PEM fails here) and a crypto provider. Refuses
    /// certificates for an address without TLS.
    pub(crate) fn apply(&self, info: ConnectionInfo) -> Result<ConnectionInfo> {
        self.check_used(uses_tls(&info))?;
        self.apply_where_tls(info)
    }

    /// Refuses certificates when no connection uses TLS (`any_tls` false).
    pub(crate) fn check_used(&self, any_tls: bool) -> Result<()> {
        if self.any() && !any_tls {
            return Err(Error::Config(
                "TLS certificates were given for a connection without TLS: \
                 use a rediss:// URL"
                    .to_string(),
            ));
        }
        Ok(())
    }

    /// As [`apply`](Self::apply), but leaves an address without TLS as it
    /// is (sentinels and masters may differ).
    pub(crate) fn apply_where_tls(&self, info: ConnectionInfo) -> Result<ConnectionInfo> {
        if !uses_tls(&info) {
            return Ok(info);
        }
        #[cfg(feature = "tls-rustls")]
        {
            // `ring` is rustls's process-wide crypto provider, unless the
            // program installed one (losing a race with another installer
            // is fine: one is installed).
            if rustls::crypto::CryptoProvider::get_default().is_none() {
                let _ = rustls::crypto::ring::default_provider().install_default();
            }
            if let Some(root) = &self.root {
                use rustls::pki_types::CertificateDer;
                use rustls::pki_types::pem::PemObject;
                let certificates: Vec<_> = CertificateDer::pem_slice_iter(root).collect();
                if certificates.is_empty() || certificates.iter().any(|c| c.is_err()) {
                    return Err(Error::Config(
                        "bad TLS certificate: the root certificate is not a PEM certificate"
                            .to_string(),
                    ));
                }
            }
            match self.certificates() {
                Some(certificates) => Ok(redis::Client::build_with_tls(info, certificates)
                    .map_err(|e| Error::Config(format!("bad TLS certificate: {e}")))?
                    .get_connection_info()
                    .clone()),
                None => Ok(info),
            }
        }
        #[cfg(not(feature = "tls-rustls"))]
        Err(Error::TlsNotEnabled)
    }
}

/// `template`'s settings (TLS included) for the server at `host:port`.
pub(crate) fn with_addr(template: &ConnectionInfo, host: String, port: u16) -> ConnectionInfo {
    let addr = match template.addr() {
        ConnectionAddr::TcpTls {
            insecure,
            tls_params,
            ..
        } => ConnectionAddr::TcpTls {
            host,
            port,
            insecure: *insecure,
            tls_params: tls_params.clone(),
        },
        _ => ConnectionAddr::Tcp(host, port),
    };
    template.clone().set_addr(addr)
}

/// A server's address for messages (`redis://host:port`), without its
/// password.
pub(crate) fn masked(info: &ConnectionInfo) -> String {
    match info.addr() {
        ConnectionAddr::Tcp(host, port) => format!("redis://{host}:{port}"),
        ConnectionAddr::TcpTls { host, port, .. } => format!("rediss://{host}:{port}"),
        other => other.to_string(),
    }
}

/// Whether `info` connects with TLS.
pub(crate) fn uses_tls(info: &ConnectionInfo) -> bool {
    matches!(info.addr(), ConnectionAddr::TcpTls { .. })
}
