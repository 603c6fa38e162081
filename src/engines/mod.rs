//! Engine adapters: how the gateway talks to a workflow engine. `rest` is the
//! configurable REST mapping (`[engine.mapping]`), synchronous and asynchronous
//! runners alike.

pub mod rest;
