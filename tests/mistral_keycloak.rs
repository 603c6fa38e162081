//! Mistral with its own `keycloak-oidc` auth instead of the trusted-header
//! plug-in: the gateway fetches a client-credentials token from an OpenID
//! provider and sends it as `X-Auth-Token`, which Mistral verifies against
//! the provider's key set. Ignored by a plain `cargo test`: it needs a
//! Mistral API started with `auth_type = keycloak-oidc`
//! (docs/engine-credentials.md, "Mistral"), named by `PILOTAGE_MISTRAL_URL`,
//! and the provider's token endpoint, client secret file and engine resource
//! in `PILOTAGE_MISTRAL_TOKEN_URL`, `PILOTAGE_MISTRAL_SECRET_FILE` and
//! `PILOTAGE_MISTRAL_RESOURCE` (client id `gateway`, scope `engine:run`, as
//! tests/oauth/provider/provider.mjs issues them). `scripts/mistral-keycloak
//! start` starts both and prints those variables; `scripts/test` runs this
//! with `--ignored` in its Mistral stage. Run without them, it fails.

mod common;

use common::mistral::{ENGINE, MistralEnv, greet_program, run, validate};
use pilotage_gateway::engines::credentials::settings::AuthTable;
use serde_json::json;

fn var(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"))
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs a keycloak-oidc Mistral API and an OpenID provider: scripts/mistral-keycloak start"]
async fn mistral_accepts_the_gateways_client_credentials_token() {
    let (token_url, secret, resource) = (
        var("PILOTAGE_MISTRAL_TOKEN_URL"),
        var("PILOTAGE_MISTRAL_SECRET_FILE"),
        var("PILOTAGE_MISTRAL_RESOURCE"),
    );
    let text = format!(
        "token_url = \"{token_url}\"\nclient_id = \"gateway\"\nclient_secret_file = \"{secret}\"\n\
         scope = \"engine:run\"\nresource = \"{resource}\"\ntoken_header = \"X-Auth-Token\"\n"
    );
    let without = MistralEnv::start().await;
    let c = without.session(&without.a).await;
    let v = validate(&c, &greet_program()).await;
    assert_ne!(
        v.structured["valid"], true,
        "accepted without a token: {}",
        v.raw
    );
    assert!(v.raw.to_string().contains("401"), "{}", v.raw);

    let env = MistralEnv::start_with(|cfg| {
        cfg.engines.get_mut(ENGINE).expect("mistral engine").auth =
            AuthTable(toml::from_str(&text).expect("auth"));
    })
    .await;
    let c = env.session(&env.a).await;
    let v = validate(&c, &greet_program()).await;
    assert_eq!(v.structured["valid"], true, "{}", v.raw);
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "Ada"}, "expected_catalog_version": v.structured["catalog_version"]}),
    )
    .await;
    assert_eq!(r.structured["outcome"]["status"], "success", "{}", r.raw);
    assert_eq!(r.structured["output"]["greeting"], "hello Ada", "{}", r.raw);
}
