//! The context variables an expression reads: `$.name` inside YAQL
//! (`<% ... %>`) and `_.name` inside Jinja (`{{ ... }}`, `{% ... %}`).
//!
//! Conservative by construction, for the undefined-variable check: reads
//! inside string literals are skipped, and so are reads inside the
//! arguments of a method (`$.items.select($.name)`) or a bracketed filter
//! (`$.items[$.x > 1]`), where YAQL rebinds `$` to each item. A name
//! followed by `(` is a call, not a read; names starting with `__` are
//! Mistral's own.

/// The names read, in order of appearance (repeats kept).
pub fn variable_reads(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close, sigil) in [("<%", "%>", '$'), ("{{", "}}", '_'), ("{%", "%}", '_')] {
        let mut rest = text;
        while let Some(start) = rest.find(open) {
            let body = &rest[start + open.len()..];
            let Some(end) = body.find(close) else { break };
            reads_in(&body[..end], sigil, &mut out);
            rest = &body[end + close.len()..];
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn reads_in(expr: &str, sigil: char, out: &mut Vec<String>) {
    let chars: Vec<char> = expr.chars().collect();
    // One entry per open bracket: whether `$` may be rebound inside it.
    let mut rebinding: Vec<bool> = Vec::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            if c == '\\' {
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' => {
                // A method call (`.name(`) may rebind `$`; a function call
                // (`len(`) does not.
                let mut j = i;
                while j > 0 && is_ident(chars[j - 1]) {
                    j -= 1;
                }
                let method = j < i && j > 0 && chars[j - 1] == '.';
                rebinding.push(method);
            }
            '[' => rebinding.push(true),
            '{' => rebinding.push(false),
            ')' | ']' | '}' => {
                rebinding.pop();
            }
            _ if c == sigil
                && chars.get(i + 1) == Some(&'.')
                && (i == 0 || !(is_ident(chars[i - 1]) || chars[i - 1] == '.'))
                && !rebinding.iter().any(|r| *r) =>
            {
                let start = i + 2;
                let mut end = start;
                while end < chars.len() && is_ident(chars[end]) {
                    end += 1;
                }
                let name: String = chars[start..end].iter().collect();
                let after: String = chars[end..].iter().collect::<String>();
                let after = after.trim_start();
                let call = after.starts_with('(');
                // Jinja copes with an undefined name when asked to.
                let guarded = sigil == '_' && jinja_guarded(after);
                if !name.is_empty()
                    && !name.starts_with("__")
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && !call
                    && !guarded
                {
                    out.push(name);
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
}

/// Whether the text after a Jinja read tests or defaults it
/// (`| default(...)`, `| d(...)`, `is defined`, `is not defined`, ...).
fn jinja_guarded(after: &str) -> bool {
    if let Some(filter) = after.strip_prefix('|') {
        let filter = filter.trim_start();
        let name: String = filter.chars().take_while(|c| is_ident(*c)).collect();
        return name == "default" || name == "d";
    }
    after.starts_with("is ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_yaql_and_jinja_reads() {
        assert_eq!(
            variable_reads("<% $.a + $.b.c %> and {{ _.d }} {% if _.e %}x{% endif %}"),
            ["a", "b", "d", "e"]
        );
        assert_eq!(variable_reads("<% len($.items) > 0 %>"), ["items"]);
        assert_eq!(variable_reads("{{ _.a | upper }}"), ["a"]);
    }

    #[test]
    fn skips_what_may_be_defined_at_run_time() {
        for text in [
            "$.outside_an_expression",
            "<% '$.in a string' %>",
            "<% $.items.select($.name) %>",
            "<% $.items.where($.x > 1) %>",
            "<% $.list[$.i] %>",
            "<% $.__execution.id %>",
            "<% task().result.$.x %>",
            "{{ my_.x }}",
            "<% $.get('k') %>",
            "{{ _.maybe | default('x') }}",
            "{{ _.maybe|d('x') }}",
            "{% if _.maybe is defined %}y{% endif %}",
        ] {
            let reads = variable_reads(text);
            assert!(
                reads
                    .iter()
                    .all(|r| ["items", "list"].contains(&r.as_str())),
                "{text}: {reads:?}"
            );
        }
    }
}
