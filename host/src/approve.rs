//! Interactive approval at a terminal: approval obtained outside the Model
//! (Part II §7.3). The Host asks only when a person can both see the
//! question (stderr is a terminal) and answer it from a terminal (stdin
//! when it is one, else the controlling terminal `/dev/tty`). Piped or
//! redirected input is never read as an answer: a program or a script
//! could otherwise approve its own execution.

use crate::gate::{Approval, ApprovalRequest, Approver};
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};

/// Asks on stderr, reads the answer from a terminal.
pub struct TerminalApprover {
    answers: Box<dyn BufRead>,
    prompt: Box<dyn Write>,
}

impl TerminalApprover {
    /// A terminal approver when a person is there to answer; `None`
    /// otherwise (the caller then refuses). `stdin_taken`: the program was
    /// read from stdin, so answers come from `/dev/tty` only.
    pub fn detect(stdin_taken: bool) -> Option<TerminalApprover> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        if !stdin_taken && std::io::stdin().is_terminal() {
            return Some(TerminalApprover {
                answers: Box::new(BufReader::new(std::io::stdin())),
                prompt: Box::new(std::io::stderr()),
            });
        }
        let tty = std::fs::File::open("/dev/tty").ok()?;
        tty.is_terminal().then(|| TerminalApprover {
            answers: Box::new(BufReader::new(tty)) as Box<dyn BufRead>,
            prompt: Box::new(std::io::stderr()),
        })
    }

    /// An approver asking on `prompt` and reading answers from `input`;
    /// for tests.
    pub fn with_io(input: impl Read + 'static, prompt: impl Write + 'static) -> TerminalApprover {
        TerminalApprover {
            answers: Box::new(BufReader::new(input)),
            prompt: Box::new(prompt),
        }
    }
}

impl Approver for TerminalApprover {
    fn approve(&mut self, request: &ApprovalRequest<'_>) -> Approval {
        let err = &mut self.prompt;
        let _ = write!(
            err,
            "\n{}Program:\n{}\nSend the execute request? [y/N] ",
            crate::output::approval_context(request.language, request.assessment),
            // A text program (YAML, …) is shown as the person wrote it.
            match request.program {
                serde_json::Value::String(text) => text.clone(),
                other => serde_json::to_string_pretty(other).unwrap_or_default(),
            }
        );
        let _ = err.flush();
        let mut line = String::new();
        match self.answers.read_line(&mut line) {
            Ok(n) if n > 0 && matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes") => {
                Approval::Granted("confirmation at the terminal".into())
            }
            Ok(0) | Err(_) => Approval::Refused("no answer at the terminal".into()),
            Ok(_) => Approval::Refused("declined at the terminal".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::Assessment;
    use serde_json::json;

    fn ask(answer: &'static str) -> Approval {
        let a = Assessment::nothing_known("test");
        let program = json!({});
        TerminalApprover::with_io(answer.as_bytes(), std::io::sink()).approve(&ApprovalRequest {
            language: "workflow/v1",
            program: &program,
            assessment: &a,
        })
    }

    #[test]
    fn only_an_explicit_yes_approves() {
        assert!(matches!(ask("y\n"), Approval::Granted(_)));
        assert!(matches!(ask("YES\n"), Approval::Granted(_)));
        assert!(matches!(ask("\n"), Approval::Refused(_)));
        assert!(matches!(ask("no\n"), Approval::Refused(_)));
        assert!(matches!(ask(""), Approval::Refused(_)));
    }
}
