//! The example configurations shipped in `deploy/` for trying the gateway
//! out, built into the binary so that start-up can recognise their public
//! session secrets and API keys (`config::browser` refuses them off
//! loopback). A new demo configuration is one more row here.

/// The example configurations shipped for trying the gateway out: their
/// session secrets and API keys are public.
pub const DEMOS: &[(&str, &str)] = &[
    (
        "deploy/gateway.local.toml",
        include_str!("../deploy/gateway.local.toml"),
    ),
    (
        "deploy/gateway.dialect-b.toml",
        include_str!("../deploy/gateway.dialect-b.toml"),
    ),
    (
        "deploy/gateway.dialect-c.toml",
        include_str!("../deploy/gateway.dialect-c.toml"),
    ),
    (
        "deploy/gateway.mistral.toml",
        include_str!("../deploy/gateway.mistral.toml"),
    ),
    (
        "deploy/gateway.n8n.toml",
        include_str!("../deploy/gateway.n8n.toml"),
    ),
];
