use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PICKUP_LOG")
                .unwrap_or_else(|_| "info,tower_http=warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match pickup::cli::run(pickup::cli::Cli::parse()).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pickup: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
