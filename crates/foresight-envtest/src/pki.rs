//! The control plane's certificates, made fresh for every run: a cluster CA that signs the
//! API server's serving certificate and the test metrics server's, a front-proxy CA whose
//! client certificate the aggregator presents to aggregated APIs, and the service-account
//! signing key.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};

/// A certificate and its key, as PEM, and where they were written.
pub struct Pair {
    /// The certificate, PEM.
    pub cert_pem: String,
    /// The private key, PEM.
    pub key_pem: String,
    /// The certificate's file.
    pub cert: PathBuf,
    /// The key's file.
    pub key: PathBuf,
}

/// Every file the API server and the test servers need.
pub struct Pki {
    /// The cluster CA (signs the API server's and the metrics server's certificates).
    pub ca: Pair,
    /// The API server's serving certificate.
    pub apiserver: Pair,
    /// The front-proxy CA.
    pub front_proxy_ca: Pair,
    /// The aggregator's client certificate (CN `front-proxy-client`).
    pub front_proxy_client: Pair,
    /// The test metrics server's serving certificate.
    pub metrics_server: Pair,
    /// The service-account signing key (a key pair; `cert` holds the public key).
    pub service_account: Pair,
}

/// The DNS name the metrics server's APIServices resolve to
/// (`<service>.<namespace>.svc`).
pub const METRICS_SERVICE_HOST: &str = "envtest-metrics.foresight-envtest.svc";

fn new_ca(cn: &str) -> anyhow::Result<(CertificateParams, KeyPair)> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.distinguished_name = name(cn);
    Ok((params, key))
}

fn name(cn: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, cn);
    dn
}

fn leaf(
    cn: &str,
    sans: &[&str],
    usage: ExtendedKeyUsagePurpose,
    issuer: &CertifiedIssuer<'_, KeyPair>,
    dir: &Path,
    file: &str,
) -> anyhow::Result<Pair> {
    let key = KeyPair::generate()?;
    let mut params =
        CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>())?;
    params.distinguished_name = name(cn);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![usage];
    let cert = params.signed_by(&key, issuer)?;
    write(dir, file, cert.pem(), key.serialize_pem())
}

fn write(dir: &Path, file: &str, cert_pem: String, key_pem: String) -> anyhow::Result<Pair> {
    let cert = dir.join(format!("{file}.crt"));
    let key = dir.join(format!("{file}.key"));
    std::fs::write(&cert, &cert_pem).with_context(|| format!("writing {}", cert.display()))?;
    std::fs::write(&key, &key_pem).with_context(|| format!("writing {}", key.display()))?;
    Ok(Pair {
        cert_pem,
        key_pem,
        cert,
        key,
    })
}

impl Pki {
    /// Makes every certificate and writes them into `dir`.
    pub fn create(dir: &Path) -> anyhow::Result<Pki> {
        let (params, key) = new_ca("foresight-envtest-ca")?;
        let ca_issuer = CertifiedIssuer::self_signed(params, key)?;
        let ca = write(dir, "ca", ca_issuer.pem(), ca_issuer.key().serialize_pem())?;
        let apiserver = leaf(
            "kube-apiserver",
            &[
                "127.0.0.1",
                "localhost",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
            ],
            ExtendedKeyUsagePurpose::ServerAuth,
            &ca_issuer,
            dir,
            "apiserver",
        )?;
        let metrics_server = leaf(
            "envtest-metrics",
            &[METRICS_SERVICE_HOST, "localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
            &ca_issuer,
            dir,
            "metrics-server",
        )?;
        let (params, key) = new_ca("foresight-envtest-front-proxy-ca")?;
        let fp_issuer = CertifiedIssuer::self_signed(params, key)?;
        let front_proxy_ca = write(
            dir,
            "front-proxy-ca",
            fp_issuer.pem(),
            fp_issuer.key().serialize_pem(),
        )?;
        let front_proxy_client = leaf(
            "front-proxy-client",
            &[],
            ExtendedKeyUsagePurpose::ClientAuth,
            &fp_issuer,
            dir,
            "front-proxy-client",
        )?;
        let sa = KeyPair::generate()?;
        let service_account = write(dir, "sa", sa.public_key_pem(), sa.serialize_pem())?;
        Ok(Pki {
            ca,
            apiserver,
            front_proxy_ca,
            front_proxy_client,
            metrics_server,
            service_account,
        })
    }
}
