//! The behavioural contract of [`Store`](crate::store::Store), as executable checks.
//!
//! Every backend must behave the same, because the execute code is written
//! once against the trait. Rather than two copies of the same tests, each
//! check lives here once and [`store_conformance_tests!`](crate::store_conformance_tests)
//! turns the whole list into `#[tokio::test]`s for a given backend: the memory
//! backend's unit tests and the Redis integration tests both invoke it.
//!
//! Each check works in a scope of its own (containing `:`, like real principal
//! scopes), so checks may share one backend instance and run in parallel.
//! Checks panic on failure, like any test assertion.
//!
//! The checks, by subject: `runs` (ping, run records, value fidelity),
//! `claims` (idempotency claims), `programs` (promoted programs, catalog
//! snapshots, session revocations), `tasks` (task records).

mod claims;
mod programs;
mod runs;
mod support;
mod tasks;

pub use claims::*;
pub use programs::*;
pub use runs::*;
pub use tasks::*;

/// Generates one `#[tokio::test]` per conformance check for a backend.
///
/// `$setup` is an async fn returning `(Arc<dyn Store>, guard)`; the guard is
/// kept alive for the duration of the test (e.g. a child Redis server).
#[macro_export]
macro_rules! store_conformance_tests {
    ($setup:path) => {
        $crate::store_conformance_tests!(@with_checks (@checks $setup));
    };
    // Every check in one test against one store: for a backend that is
    // expensive to start (a whole Redis Cluster), started once.
    (sequential $name:ident, $setup:path) => {
        $crate::store_conformance_tests!(@with_checks (@sequence $name $setup));
    };
    (@with_checks ($($head:tt)*)) => {
        $crate::store_conformance_tests!($($head)*;
            ping_succeeds,
            run_round_trip_and_scope_isolation,
            run_expires_after_ttl,
            values_round_trip_exactly,
            claim_is_exclusive_under_concurrency,
            claims_are_scoped,
            in_flight_claim_reports_first_owner,
            completed_claim_replays_response,
            complete_only_by_owner,
            release_drops_only_own_pending_claim,
            claim_expires_after_ttl,
            start_turns_a_lease_into_a_window,
            programs_listed_in_ref_order,
            program_expires_after_ttl,
            catalog_snapshots_round_trip_and_expire,
            task_moves_only_from_the_revision_read,
            tasks_listed_and_expire,
            session_revocation_round_trip_and_expires,
        );
    };
    (@checks $setup:path; $($check:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $check() {
                let (store, _guard) = $setup().await;
                $crate::store::conformance::$check(store).await;
            }
        )+
    };
    (@sequence $name:ident $setup:path; $($check:ident),+ $(,)?) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            let (store, _guard) = $setup().await;
            $(
                eprintln!("conformance check: {}", stringify!($check));
                $crate::store::conformance::$check(store.clone()).await;
            )+
        }
    };
}
