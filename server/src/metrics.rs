//! Operators' numbers: Prometheus metrics at `/metrics` on `PICKUP_METRICS_ADDR`, a listener
//! of its own so that it is never exposed with the API. The numbers are recorded where things
//! happen, through the `metrics` facade (store requests and their latency in `store`, live
//! watchers and subscribers in `live`); the exporter renders them.

use anyhow::Context;
use metrics_exporter_prometheus::PrometheusBuilder;

/// Install the recorder and serve `/metrics` on `addr` until the process ends.
pub async fn serve(addr: &str) -> anyhow::Result<()> {
    let handle = PrometheusBuilder::new()
        .install_recorder()
        .context("installing the metrics recorder")?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("PICKUP_METRICS_ADDR {addr}: cannot listen"))?;
    let app = axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || std::future::ready(handle.render())),
    );
    println!("metrics on http://{}/metrics", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(())
}
