//! Start-up checks of how `[store]` reaches Redis: one server or a cluster,
//! never both, and every cluster node a Redis URL.

use super::StoreConfig;

/// (key, problem, fix) for everything wrong with the store's topology settings.
pub fn topology_problems(store: &StoreConfig) -> Vec<(&'static str, String, &'static str)> {
    let mut out = Vec::new();
    if store.redis_cluster.is_empty() {
        return out;
    }
    if !store.redis_url.is_empty() || !store.redis_url_file.is_empty() {
        out.push((
            "store.redis_cluster",
            "set together with store.redis_url (or redis_url_file): one server and a cluster exclude each other".into(),
            "keep store.redis_cluster for a Redis Cluster, or store.redis_url for one server, not both",
        ));
    }
    for url in &store.redis_cluster {
        if !url.starts_with("redis://") && !url.starts_with("rediss://") {
            out.push((
                "store.redis_cluster",
                format!(
                    "'{}' is not a redis:// or rediss:// URL",
                    crate::store::redis::redact_url(url)
                ),
                "list cluster nodes as redis://host:port (rediss:// for TLS)",
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_and_single_server_exclude_each_other() {
        let store = StoreConfig {
            redis_url: "redis://a:6379".into(),
            redis_cluster: vec!["redis://b:6379".into()],
            ..StoreConfig::default()
        };
        let problems = topology_problems(&store);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].1.contains("exclude each other"));
    }

    #[test]
    fn cluster_nodes_must_be_redis_urls() {
        let store = StoreConfig {
            redis_cluster: vec!["redis://b:6379".into(), "b:6380".into()],
            ..StoreConfig::default()
        };
        let problems = topology_problems(&store);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].1.contains("'b:6380'"));
        assert!(topology_problems(&StoreConfig::default()).is_empty());
    }
}
