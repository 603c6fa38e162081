//! Documents shared by this folder's unit tests.

/// A workflow with every construct the plan and the trace model: a
/// conditional transition, an engine command, on-error and on-complete,
/// with-items, a join and a sub-workflow.
pub const SHAPES: &str = "\
version: '2.0'
wf:
  tasks:
    start:
      action: std.echo output=1
      on-success:
        - each: <% $.go %>
        - fail: <% $.stop %>
      on-error: [cleanup]
      on-complete: [done]
    each:
      with-items: x in <% [1, 2] %>
      action: std.http url='https://example.org'
      on-success: [done]
    done:
      join: all
      action: std.noop
    cleanup:
      workflow: sub
";
