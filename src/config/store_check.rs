//! Start-up checks of how `[store]` reaches Redis: one server, a cluster or
//! Sentinel, only one of them, and every node a Redis URL.

use super::StoreConfig;

/// (key, problem, fix) for everything wrong with the store's topology settings.
pub fn topology_problems(store: &StoreConfig) -> Vec<(&'static str, String, &'static str)> {
    let mut out = Vec::new();
    let sentinel = &store.redis_sentinel;
    if !sentinel.urls.is_empty() {
        if !store.redis_url.is_empty()
            || !store.redis_url_file.is_empty()
            || !store.redis_cluster.is_empty()
        {
            out.push((
                "store.redis_sentinel",
                "set together with store.redis_url (or redis_url_file) or store.redis_cluster: only one way to reach Redis can be used".into(),
                "keep store.redis_sentinel for a Sentinel-managed master, or remove it",
            ));
        }
        if sentinel.master_name.trim().is_empty() {
            out.push((
                "store.redis_sentinel.master_name",
                "missing: the sentinels watch masters by name".into(),
                "set the name of `sentinel monitor <name> ...` in the sentinels' configuration",
            ));
        }
        if sentinel.urls.iter().any(|u| u.starts_with("rediss://")) {
            out.push((
                "store.redis_sentinel.urls",
                "rediss:// is not supported through Sentinel".into(),
                "reach the sentinels and the master over redis:// (a private network), or use store.redis_url with rediss://",
            ));
        }
        push_url_problems(
            &mut out,
            "store.redis_sentinel.urls",
            &sentinel.urls,
            "list sentinels as redis://host:26379",
        );
    } else if !sentinel.master_name.is_empty() {
        out.push((
            "store.redis_sentinel.urls",
            "empty while master_name is set".into(),
            "list the sentinels as redis://host:26379, or remove master_name",
        ));
    }
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
    push_url_problems(
        &mut out,
        "store.redis_cluster",
        &store.redis_cluster,
        "list cluster nodes as redis://host:port (rediss:// for TLS)",
    );
    out
}

fn push_url_problems(
    out: &mut Vec<(&'static str, String, &'static str)>,
    key: &'static str,
    urls: &[String],
    fix: &'static str,
) {
    for url in urls {
        if !url.starts_with("redis://") && !url.starts_with("rediss://") {
            out.push((
                key,
                format!(
                    "'{}' is not a redis:// or rediss:// URL",
                    crate::store::redis::redact_url(url)
                ),
                fix,
            ));
        }
    }
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

    #[test]
    fn sentinel_needs_a_master_name_and_excludes_the_others() {
        let mut store = StoreConfig::default();
        store.redis_sentinel.urls = vec!["redis://s1:26379".into()];
        store.redis_cluster = vec!["redis://b:6379".into()];
        let problems = topology_problems(&store);
        let keys: Vec<&str> = problems.iter().map(|p| p.0).collect();
        assert!(keys.contains(&"store.redis_sentinel"), "{problems:?}");
        assert!(
            keys.contains(&"store.redis_sentinel.master_name"),
            "{problems:?}"
        );
        store.redis_cluster.clear();
        store.redis_sentinel.master_name = "pilotage".into();
        assert!(topology_problems(&store).is_empty());
    }
}
