//! Whether a later request can be the same caller: what a principal may be
//! offered and promised depends on it (its manifest, tools and refusals).

use super::Principal;

/// A passing caller (an anonymous request without a session under
/// `anonymous_scope = "session"`) is offered, and promised, nothing a later
/// request would reach; every other caller is lasting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    Lasting,
    Passing,
}

impl Reach {
    pub fn of(principal: &Principal) -> Reach {
        if principal.lasting {
            Reach::Lasting
        } else {
            Reach::Passing
        }
    }
}
