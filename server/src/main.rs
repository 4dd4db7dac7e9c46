use clap::Parser;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = pickup::cli::Cli::parse();
    pickup::cli::init_logs(cli.log_format);
    match pickup::cli::run(cli).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pickup: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
