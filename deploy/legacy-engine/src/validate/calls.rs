//! Checks of `call` steps: is the capability known and enabled for the tenant, is it
//! deprecated, and do the literal parameters fit its params schema.

use serde_json::{Value, json};

use super::problem::Kind;
use super::suggest::closest;
use super::walker::{Scope, Walker};
use crate::language::path::Where;
use crate::language::schema;
use crate::language::values::type_name;
use crate::world::capability::Effect;

impl Walker<'_> {
    pub(super) fn check_call(
        &mut self,
        step: &Value,
        here: &Where,
        name: &str,
        id: Option<&str>,
        scope: &Scope,
    ) {
        let capability_at = here.key("capability");
        let capability = match step.get("capability") {
            Some(Value::String(s)) => s.clone(),
            None | Some(Value::Null) => String::new(),
            Some(other) => other.to_string(),
        };
        let with_at = here.key("with");
        let with = step.get("with").filter(|v| !v.is_null());
        match self.env.view.visible.get(&capability) {
            Some(spec) => {
                let spec = spec.clone();
                if spec.deprecated {
                    let kind = Kind::Deprecated {
                        name: capability.clone(),
                        replacement: spec.replacement.clone(),
                    };
                    self.push(kind, capability_at);
                }
                match with {
                    None => self.check_params(&spec.params, &json!({}), &capability, &with_at),
                    Some(args @ Value::Object(_)) => {
                        self.check_params(&spec.params, args, &capability, &with_at)
                    }
                    Some(other) => {
                        let kind = Kind::TypeMismatch {
                            param: "with".to_owned(),
                            capability: capability.clone(),
                            expected: "object".to_owned(),
                            got: type_name(other).to_owned(),
                        };
                        self.push(kind, with_at.clone());
                    }
                }
                if spec.effect == Effect::Read
                    && let Some(id) = id
                {
                    self.flow.read_calls.push((id.to_owned(), here.clone()));
                }
            }
            None if self.env.view.global.contains(&capability) => {
                let tenant = self.env.view.tenant.clone();
                self.push(
                    Kind::NotEnabled {
                        name: capability,
                        tenant,
                    },
                    capability_at,
                );
            }
            None => {
                let suggestion = closest(&capability, &self.env.view.global);
                self.push(
                    Kind::UnknownCapability {
                        name: capability,
                        suggestion,
                    },
                    capability_at,
                );
            }
        }
        if let Some(with) = with {
            self.check_value_exprs(with, &with_at, name, scope);
        }
    }

    fn check_params(&mut self, params: &Value, args: &Value, capability: &str, with_at: &Where) {
        for issue in schema::check(params, args, true) {
            let at = with_at.join(&issue.at);
            self.push(Kind::from_param_issue(capability, &issue), at);
        }
    }
}
