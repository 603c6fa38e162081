//! The `pilotage` binary: parses the command line and hands over to
//! `pilotage_host::app`. Exit codes: 0 success, 1 program invalid or run not
//! ok, 2 refused by the risk gate, 3 transport or server error, 64 a
//! command-line problem.

fn main() -> std::process::ExitCode {
    let cli = match pilotage_host::app::parse_cli() {
        Ok(c) => c,
        Err(code) => return std::process::ExitCode::from(code),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return std::process::ExitCode::from(3);
        }
    };
    let code = runtime.block_on(pilotage_host::app::main(cli));
    std::process::ExitCode::from(code)
}
