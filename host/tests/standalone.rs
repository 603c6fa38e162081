//! The Host CLI as a tool of its own: the key from a file, transport
//! failures that say what to fix (the `/mcp` path on a 404, the URL on a
//! refused connection, TLS), completions and the man page, and an
//! `https://` gateway behind nginx with a private CA given by `--ca-file`.

mod common;

use common::tls::{Nginx, Pki};
use common::{ACME_OPS, CliRun, Env};

fn assert_no_internal_names(r: &CliRun) {
    for needle in ["rmcp::", "WorkerTransport", "reqwest::", "hyper"] {
        assert!(!r.all().contains(needle), "{needle} leaked: {}", r.all());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_path_gets_the_mcp_hint_and_a_refused_port_is_named() {
    let env = Env::start().await;
    let wrong = format!("{}/wrong", env.origin());
    let r = env
        .pilotage_as_given(&["catalog", "--url", &wrong, "--key", ACME_OPS], &[])
        .await;
    assert_eq!(r.code, 3, "{}", r.all());
    let expected = format!(
        "no MCP endpoint at {wrong} (HTTP 404); the gateway serves MCP at /mcp, e.g. {}",
        env.url
    );
    assert!(r.stderr.contains(&expected), "{}", r.stderr);
    assert_no_internal_names(&r);

    // Nothing listens on a port just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port");
    let refused = format!("http://127.0.0.1:{port}/mcp");
    let r = env
        .pilotage_as_given(&["--json", "catalog", "--url", &refused], &[])
        .await;
    assert_eq!(r.code, 3, "{}", r.all());
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let message = doc["error"]["message"].as_str().expect("message");
    assert!(
        message.contains(&refused) && message.contains("connection refused"),
        "{message}"
    );
    assert_no_internal_names(&r);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_comes_from_a_file() {
    let env = Env::start().await;
    let key_file = env.dir.join("key");
    std::fs::write(&key_file, format!("{ACME_OPS}\n")).expect("write key file");
    let key_file = key_file.display().to_string();
    let r = env
        .pilotage_as_given(
            &["catalog", "--url", &env.url, "--key-file", &key_file],
            &[],
        )
        .await;
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("crm.delete_customer"), "{}", r.stdout);
    assert!(env.front.count("tools/call pilotage_catalog") >= 1);

    // One source of the key only: the option, or the environment.
    env.front.clear();
    let both = [
        "catalog",
        "--url",
        &env.url,
        "--key-file",
        &key_file,
        "--key",
        ACME_OPS,
    ];
    let r = env.pilotage_as_given(&both, &[]).await;
    assert_eq!(r.code, 64, "{}", r.all());
    let r = env
        .pilotage_as_given(
            &["catalog", "--url", &env.url, "--key-file", &key_file],
            &[("PILOTAGE_KEY", ACME_OPS)],
        )
        .await;
    assert_eq!(r.code, 64, "{}", r.all());
    assert!(r.stderr.contains("--key-file"), "{}", r.stderr);
    assert!(
        env.front.lines().is_empty(),
        "nothing sent: {:?}",
        env.front.lines()
    );

    // A wrong key in the file reaches the server and is refused there.
    std::fs::write(&key_file, "not-a-key\n").expect("rewrite key file");
    let r = env
        .pilotage_as_given(
            &["catalog", "--url", &env.url, "--key-file", &key_file],
            &[],
        )
        .await;
    assert_eq!(r.code, 3, "{}", r.all());
    assert!(
        r.stderr.contains("refused the credentials (HTTP 401)"),
        "{}",
        r.stderr
    );
    assert_no_internal_names(&r);
}

async fn self_doc(env: &Env, args: &[&str]) -> String {
    let r = env.pilotage_as_given(args, &[]).await;
    assert_eq!(r.code, 0, "{args:?}: {}", r.all());
    assert!(!r.stdout.trim().is_empty(), "{args:?} printed nothing");
    r.stdout
}

#[tokio::test(flavor = "multi_thread")]
async fn completions_and_the_man_page_name_the_subcommands() {
    let env = Env::start().await;
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let text = self_doc(&env, &["completions", shell]).await;
        for sub in ["run", "trace", "guides", "catalog", "completions", "man"] {
            assert!(text.contains(sub), "{shell} completions lack {sub}");
        }
        assert!(
            text.contains("key-file") && text.contains("ca-file"),
            "{shell}"
        );
    }
    let man = self_doc(&env, &["man"]).await;
    assert!(
        man.starts_with(".ie") || man.contains(".TH pilotage 1"),
        "{man}"
    );
    for sub in [
        "run",
        "trace",
        "guides",
        "catalog",
        "completions",
        "man",
        "\\-\\-ca\\-file",
    ] {
        assert!(man.contains(sub), "the man page lacks {sub}");
    }
    // Neither needs a server.
    assert!(env.front.lines().is_empty());
    let r = env
        .pilotage_as_given(&["completions", "nosuchshell"], &[])
        .await;
    assert_eq!(r.code, 64, "{}", r.all());
}

/// The done-when criterion: the CLI talks to an `https://` gateway whose
/// certificate comes from a private CA, trusted through `--ca-file` (or
/// SSL_CERT_FILE), and refuses it, saying why, without the CA.
#[tokio::test(flavor = "multi_thread")]
async fn an_https_gateway_with_a_private_ca() {
    let env = Env::start().await;
    let pki = Pki::new(env.dir.join("pki"));
    let nginx = Nginx::in_front_of(&pki, &env.origin());
    let https = format!("https://127.0.0.1:{}/mcp", nginx.port);
    let ca = pki.path("ca.pem");
    // Another binary (an installed one) can be checked the same way.
    let bin = std::env::var("PILOTAGE_HOST_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_pilotage").to_string());
    let cache = env.dir.join("cache");
    let with_ca = [
        "catalog",
        "--url",
        &https,
        "--key",
        ACME_OPS,
        "--ca-file",
        &ca,
    ];
    let r = common::run_cli(&bin, &with_ca, &cache, &[]).await;
    assert_eq!(r.code, 0, "{}", r.all());
    assert!(r.stdout.contains("crm.delete_customer"), "{}", r.stdout);
    assert!(
        env.front.count("tools/call pilotage_catalog") >= 1,
        "{:?}",
        env.front.lines()
    );

    // The standard loop over the same TLS endpoint.
    let program = serde_json::json!({"steps": [
        {"id": "say", "kind": "call", "capability": "util.echo", "with": {"value": "over tls"}}
    ]});
    let file = env.program("echo", &program);
    let run = [
        "--json",
        "run",
        &file,
        "--url",
        &https,
        "--key",
        ACME_OPS,
        "--ca-file",
        &ca,
    ];
    let r = common::run_cli(&bin, &run, &cache, &[]).await;
    assert_eq!(r.code, 0, "{}", r.all());

    // Without the CA the certificate is really checked.
    env.front.clear();
    let without = ["catalog", "--url", &https, "--key", ACME_OPS];
    let r = common::run_cli(&bin, &without, &cache, &[]).await;
    assert_eq!(r.code, 3, "{}", r.all());
    assert!(
        r.stderr.contains(&format!("TLS with {https} failed")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("--ca-file"), "{}", r.stderr);
    assert_no_internal_names(&r);
    assert!(env.front.lines().is_empty(), "{:?}", env.front.lines());

    // SSL_CERT_FILE names the roots the same way.
    let r = common::run_cli(&bin, &without, &cache, &[("SSL_CERT_FILE", ca.as_str())]).await;
    assert_eq!(r.code, 0, "{}", r.all());

    // An https:// URL to the plain-HTTP gateway says it does not speak TLS.
    let plain_as_tls = env.url.replacen("http://", "https://", 1);
    let r = common::run_cli(&bin, &["catalog", "--url", &plain_as_tls], &cache, &[]).await;
    assert_eq!(r.code, 3, "{}", r.all());
    assert!(r.stderr.contains("does not speak TLS"), "{}", r.stderr);
}
