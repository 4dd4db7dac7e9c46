//! `pickup serve`'s flags mapped to the server's [`Config`].

use super::serve::ServeArgs;
use crate::http::HttpConfig;
use crate::live::{BusConfig, BusKey, LiveConfig, StreamLimits};
use crate::wiring::{Config, JwksConfig, Tokens};

impl ServeArgs {
    /// The server these flags describe, refused when its settings can lose data.
    pub fn config(&self) -> anyhow::Result<Config> {
        self.check_loses_nothing()?;
        let tokens = Tokens {
            secret: self.secret.clone(),
            issuer: self.issuer.clone(),
            audience: self.audience.clone(),
            jwks: self.idp.jwks_url.clone().map(|url| JwksConfig {
                url,
                min_refresh: self.idp.jwks_min_refresh,
                refresh: self.idp.jwks_refresh,
                mapping: self.idp.mapping(),
            }),
        };
        Ok(Config {
            store: self.store.store.clone(),
            store_options: Vec::new(),
            limits: self.store.limits(),
            cap: self.store.cap,
            tokens,
            http: HttpConfig {
                site: self.site.clone(),
                allowed_origins: crate::http::allowed_origins(&self.allowed_origins)?,
                frame_ancestors: crate::http::frame_ancestors(&self.frame_ancestors)?,
                request_timeout: self.request_timeout,
            },
            read_cache: self.read_cache,
            live: self.live()?,
            janitor_every: self.janitor_every,
            serve: crate::serve::ConnectionLimits {
                header_read: self.header_timeout,
                max_connections: self.max_connections as usize,
                grace: self.shutdown_grace,
            },
            clock: std::sync::Arc::new(crate::index::SystemClock),
            demo: None,
        })
    }

    /// Live streams, bounded per server, per workspace and per viewer; `None` with
    /// `PICKUP_LIVE_EVERY=0s` (widgets poll).
    fn live(&self) -> anyhow::Result<Option<LiveConfig>> {
        if self.live_every.is_zero() {
            return Ok(None);
        }
        let server = self
            .max_streams
            .unwrap_or(self.max_connections / 4 * 3)
            .max(1) as usize;
        Ok(Some(LiveConfig {
            every: self.live_every,
            reconcile_every: self.reconcile_every,
            reconcile_ceiling: self.reconcile_ceiling,
            bus: self.bus_config()?,
            limits: StreamLimits {
                server,
                workspace: self
                    .max_streams_per_workspace
                    .map_or((server / 2).max(1), |n| n as usize),
                viewer: self.max_streams_per_viewer as usize,
            },
        }))
    }

    /// `PICKUP_BUS` with its key and certificates; refused without a key to seal facts with.
    fn bus_config(&self) -> anyhow::Result<Option<BusConfig>> {
        let Some(url) = &self.bus else {
            return Ok(None);
        };
        let shown = crate::live::redacted(url);
        if !(url.starts_with("redis://") || url.starts_with("rediss://")) {
            anyhow::bail!("PICKUP_BUS {shown}: use redis://HOST:PORT or rediss://HOST:PORT (TLS)");
        }
        let key = match (&self.bus_key, &self.secret) {
            (Some(key), _) if key.len() < 32 => {
                anyhow::bail!("PICKUP_BUS_KEY must be at least 32 bytes (it is {})", key.len())
            }
            (Some(key), _) => BusKey::derive(key.as_bytes()),
            (None, Some(secret)) => BusKey::derive(secret.as_bytes()),
            (None, None) => anyhow::bail!(
                "PICKUP_BUS needs a key the servers share, to seal their facts so that nothing else on Redis can publish one: set PICKUP_SECRET, or PICKUP_BUS_KEY (at least 32 bytes, the same on every server)"
            ),
        };
        let ca = match &self.bus_ca {
            Some(path) => Some(
                std::fs::read(path)
                    .map_err(|e| anyhow::anyhow!("PICKUP_BUS_CA {}: {e}", path.display()))?,
            ),
            None => None,
        };
        Ok(Some(BusConfig {
            url: url.clone(),
            key,
            ca,
            drop_every: self.test_drop_facts,
        }))
    }
}
