//! Rolling restarts under load lose no POST (issue 26): two servers on one file store (served
//! in this process as `pickup serve` serves, each on a port of its own), 16 writers, 3 stops
//! (told to stop as SIGTERM tells it, then the same server started again on the same port). Straight
//! to Pickup, a writer whose connection is refused sends to the other server, as a load
//! balancer would, and no request may be reset after it connected. Through Debian's nginx (an
//! upstream of the two), no answer may be a 5xx.

use crate::common::client::path;
use crate::common::client::token;
use crate::common::in_process::{Served, Serving};
use crate::common::redis::free_port;
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WS: &str = "acme";
const WRITERS: usize = 16;
const STOPS: usize = 3;
/// Acknowledged registrations between two stops, so every stop meets full load.
const ACKS_BETWEEN_STOPS: usize = 150;

/// Two servers on one store, each on a port of its own that a restart keeps.
struct Deployment {
    store: tempfile::TempDir,
    ports: [u16; 2],
    servers: Vec<Served>,
}

impl Deployment {
    fn start() -> Deployment {
        let store = tempfile::tempdir().unwrap();
        let ports = [free_port(), free_port()];
        let mut d = Deployment {
            store,
            ports,
            servers: Vec::new(),
        };
        for i in 0..2 {
            let s = d.server(i);
            d.servers.push(s);
        }
        d
    }

    fn server(&self, i: usize) -> Served {
        let addr = format!("127.0.0.1:{}", self.ports[i]);
        Serving::new(&[])
            .store(&format!("file://{}", self.store.path().display()))
            .at(&addr)
            .start()
    }

    /// Stops server `i` as SIGTERM would, waits until it has, and starts it again on its port.
    async fn restart(&mut self, i: usize) {
        self.servers[i].stop().await;
        let next = tokio::task::block_in_place(|| self.server(i));
        self.servers[i] = next;
    }

    fn urls(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|p| format!("http://127.0.0.1:{p}"))
            .collect()
    }
}

#[derive(Default)]
struct Tally {
    acked: Mutex<Vec<String>>,
    /// Failures after the connection was made (a reset, an answer cut off).
    resets: Mutex<Vec<String>>,
    server_errors: Mutex<Vec<u16>>,
    refused: AtomicUsize,
}

/// `WRITERS` writers posting until `stop`, each over a new connection per request (as nginx
/// talks to its upstreams), trying `urls` in turn from its own first one while refused.
fn writers(
    urls: Vec<String>,
    token: String,
    tally: Arc<Tally>,
    stop: Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    (0..WRITERS)
        .map(|w| {
            let (c, urls, token, tally, stop) = (
                client.clone(),
                urls.clone(),
                token.clone(),
                tally.clone(),
                stop.clone(),
            );
            tokio::spawn(async move {
                let mut n = 0;
                while !stop.load(Ordering::SeqCst) {
                    n += 1;
                    let body = serde_json::json!({"key": format!("w{w}-{n}"), "title": "t"});
                    for attempt in 0..urls.len() * 50 {
                        let url = &urls[(w + attempt) % urls.len()];
                        let res = c
                            .post(format!("{url}{}", path::items(WS)))
                            .bearer_auth(&token)
                            .json(&body)
                            .send()
                            .await;
                        match res {
                            Ok(res) if res.status() == reqwest::StatusCode::CREATED => {
                                let v: serde_json::Value = match res.json().await {
                                    Ok(v) => v,
                                    Err(e) => {
                                        tally.resets.lock().unwrap().push(format!("{e:?}"));
                                        break;
                                    }
                                };
                                let id = v["id"].as_str().unwrap().to_string();
                                tally.acked.lock().unwrap().push(id);
                                break;
                            }
                            Ok(res) => {
                                let status = res.status().as_u16();
                                assert!(status >= 500, "{status}: {:?}", res.text().await);
                                tally.server_errors.lock().unwrap().push(status);
                                break;
                            }
                            Err(e) if e.is_connect() => {
                                tally.refused.fetch_add(1, Ordering::SeqCst);
                                // Both refused at once: the restarted one is not up yet and
                                // the other is stopping; the next try is the other one.
                                tokio::task::yield_now().await;
                            }
                            Err(e) => {
                                tally.resets.lock().unwrap().push(format!("{e:?}"));
                                break;
                            }
                        }
                    }
                }
            })
        })
        .collect()
}

/// Runs the writers against `urls` while `d` is restarted `STOPS` times, alternating servers.
async fn rolling_restarts(d: Deployment, urls: Vec<String>) -> (Arc<Tally>, Deployment) {
    let token = token("ci-bot", WS, true);
    let tally = Arc::new(Tally::default());
    let stop = Arc::new(AtomicBool::new(false));
    let tasks = writers(urls, token, tally.clone(), stop.clone());
    let mut d = d;
    for i in 0..STOPS {
        // Under load first: wait (bounded) for this many more acknowledgements.
        let want = tally.acked.lock().unwrap().len() + ACKS_BETWEEN_STOPS;
        let deadline = Instant::now() + Duration::from_secs(60);
        while tally.acked.lock().unwrap().len() < want {
            assert!(Instant::now() < deadline, "writers stalled before stop {i}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        d.restart(i % 2).await;
    }
    stop.store(true, Ordering::SeqCst);
    for t in tasks {
        t.await.unwrap();
    }
    (tally, d)
}

/// Every acknowledged registration is in the store, marker and record.
fn all_stored(d: &Deployment, tally: &Tally) {
    let root = d.store.path();
    for id in tally.acked.lock().unwrap().iter() {
        assert!(
            root.join(format!("ws/{WS}/markers/{id}")).exists(),
            "marker {id}"
        );
        assert!(
            root.join(format!("ws/{WS}/items/{id}.json")).exists(),
            "record {id}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rolling_restarts_straight_to_pickup_reset_no_connection() {
    let d = Deployment::start();
    let urls = d.urls();
    let (tally, d) = rolling_restarts(d, urls).await;
    let resets = tally.resets.lock().unwrap().clone();
    eprintln!(
        "straight to Pickup, {WRITERS} writers, {STOPS} stops: {} acknowledged, {} refused (sent to the other), {} reset, {} 5xx",
        tally.acked.lock().unwrap().len(),
        tally.refused.load(Ordering::SeqCst),
        resets.len(),
        tally.server_errors.lock().unwrap().len()
    );
    assert!(resets.is_empty(), "reset after connecting: {resets:#?}");
    assert!(tally.server_errors.lock().unwrap().is_empty());
    all_stored(&d, &tally);
}

/// Debian's nginx in the foreground on `port`, with the deployment as its upstream; killed
/// when dropped (one process, `master_process off`: a killed master would leave its worker).
/// `max_fails=0`: a refused server is never marked down (with the default, both
/// are down for 10 s after two stops that close together, and nginx answers 502 itself), and
/// a refused request goes to the other one (nginx retries what it has not sent).
struct Nginx {
    child: Child,
    _dir: tempfile::TempDir,
}

impl Nginx {
    fn start(port: u16, upstreams: [u16; 2]) -> Option<Nginx> {
        let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| std::path::Path::new(p).exists())?;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        let conf = format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
             events {{ worker_connections 1024; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
               fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
               upstream pickup {{ server 127.0.0.1:{a} max_fails=0; server 127.0.0.1:{b} max_fails=0; }}\n\
               server {{ listen 127.0.0.1:{port}; location / {{ proxy_pass http://pickup; }} }}\n}}\n",
            a = upstreams[0],
            b = upstreams[1],
        );
        let path = dir.path().join("nginx.conf");
        std::fs::write(&path, conf).unwrap();
        let child = Command::new(binary)
            .arg("-p")
            .arg(dir.path())
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .arg("-c")
            .arg(&path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut nginx = Nginx { child, _dir: dir };
        // nginx says nothing when it listens: connect until it does, within a bound.
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = nginx.child.try_wait().unwrap() {
                panic!("nginx exited: {status:?}");
            }
            assert!(Instant::now() < deadline, "nginx never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(nginx)
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rolling_restarts_behind_nginx_answer_no_5xx() {
    let d = Deployment::start();
    let port = free_port();
    let Some(_nginx) = Nginx::start(port, d.ports) else {
        panic!("Debian's nginx is not installed: run `make test-deps` (apt-get install nginx)");
    };
    let (tally, d) = rolling_restarts(d, vec![format!("http://127.0.0.1:{port}")]).await;
    let errors = tally.server_errors.lock().unwrap().clone();
    let resets = tally.resets.lock().unwrap().clone();
    eprintln!(
        "through nginx, {WRITERS} writers, {STOPS} stops: {} acknowledged, {} 5xx, {} reset",
        tally.acked.lock().unwrap().len(),
        errors.len(),
        resets.len()
    );
    assert!(errors.is_empty(), "5xx through nginx: {errors:?}");
    assert!(resets.is_empty(), "{resets:#?}");
    all_stored(&d, &tally);
}
