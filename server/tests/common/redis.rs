//! A real Redis (Debian's `redis-server`, which `make test` installs) on a free loopback port,
//! for the bus between servers: started per test, killed when dropped, and killable and
//! restartable on the same port mid-test.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Redis {
    pub url: String,
    port: u16,
    child: Option<Child>,
    /// Arguments beside the port's (a password, TLS).
    extra: Vec<String>,
    /// Answers PING in plain text on `port` (not with TLS only).
    plain: bool,
}

/// A CA and a certificate for 127.0.0.1 signed by it, made with `openssl` in `dir`: what a
/// managed Redis's TLS looks like to a client that trusts that CA.
pub struct Certificates {
    pub ca: std::path::PathBuf,
    pub cert: std::path::PathBuf,
    pub key: std::path::PathBuf,
}

impl Certificates {
    pub fn make(dir: &std::path::Path) -> Certificates {
        let at = |name: &str| dir.join(name).display().to_string();
        let run = |args: &[&str]| {
            let out = Command::new("openssl")
                .args(args)
                .output()
                .expect("openssl");
            assert!(
                out.status.success(),
                "openssl {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "1",
            "-subj",
            "/CN=Pickup test CA",
            "-keyout",
            &at("ca.key"),
            "-out",
            &at("ca.pem"),
        ]);
        run(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=127.0.0.1",
            "-keyout",
            &at("redis.key"),
            "-out",
            &at("redis.csr"),
        ]);
        std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
        run(&[
            "x509",
            "-req",
            "-in",
            &at("redis.csr"),
            "-CA",
            &at("ca.pem"),
            "-CAkey",
            &at("ca.key"),
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            &at("san.ext"),
            "-out",
            &at("redis.pem"),
        ]);
        Certificates {
            ca: dir.join("ca.pem"),
            cert: dir.join("redis.pem"),
            key: dir.join("redis.key"),
        }
    }
}

/// A loopback port nothing listens on (yet).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn pong(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let mut buf = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

impl Redis {
    pub fn start() -> Redis {
        let port = free_port();
        let mut r = Redis {
            url: format!("redis://127.0.0.1:{port}"),
            port,
            child: None,
            extra: Vec::new(),
            plain: true,
        };
        r.restart();
        r
    }

    /// A Redis that asks for `password` (`requirepass`): its URL carries it.
    pub fn with_password(password: &str) -> Redis {
        let port = free_port();
        let mut r = Redis {
            url: format!("redis://:{password}@127.0.0.1:{port}"),
            port,
            child: None,
            extra: vec!["--requirepass".into(), password.into()],
            plain: true,
        };
        r.restart();
        r
    }

    /// A Redis that speaks TLS only, with `certs` (`rediss://`), and asks for `password`.
    pub fn with_tls(certs: &Certificates, password: &str) -> Redis {
        let port = free_port();
        let path = |p: &std::path::Path| p.display().to_string();
        let mut r = Redis {
            url: format!("rediss://:{password}@127.0.0.1:{port}"),
            port,
            child: None,
            extra: vec![
                "--tls-port".into(),
                port.to_string(),
                "--tls-cert-file".into(),
                path(&certs.cert),
                "--tls-key-file".into(),
                path(&certs.key),
                "--tls-ca-cert-file".into(),
                path(&certs.ca),
                "--tls-auth-clients".into(),
                "no".into(),
                "--requirepass".into(),
                password.into(),
            ],
            plain: false,
        };
        r.restart();
        r
    }

    /// Stop it answering without closing anything (`SIGSTOP`), as a hung Redis does; `cont`
    /// lets it go on.
    pub fn pause(&self) {
        self.signal(libc::SIGSTOP);
    }

    pub fn resume(&self) {
        self.signal(libc::SIGCONT);
    }

    fn signal(&self, sig: libc::c_int) {
        let pid = self.child.as_ref().expect("running").id();
        assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
    }

    /// (Re)start on the same port, and wait until it answers.
    pub fn restart(&mut self) {
        let port = if self.plain {
            self.port.to_string()
        } else {
            "0".into()
        };
        let child = Command::new("redis-server")
            .args(&self.extra)
            .args([
                "--port",
                &port,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server (Debian's redis-server; `make test` installs it)");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        // With a password PING answers NOAUTH, with TLS only the port accepts: either says
        // it is up.
        let up = |port| {
            if self.plain && self.extra.is_empty() {
                pong(port)
            } else {
                TcpStream::connect(("127.0.0.1", port)).is_ok()
            }
        };
        while !up(self.port) {
            assert!(Instant::now() < deadline, "redis-server did not answer");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kill it (as a crash would): every connection to it drops.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A message sealed as a server holding `secret` seals it for the bus (the wire format of
/// server/src/live/seal.rs: `pickup1.` + an HMAC-SHA256 tag, base64url, + `.` + the message,
/// under a key HKDF-SHA256 derives from the secret), written here as a peer outside Pickup would
/// write it: a forger who has the key.
pub fn sealed(secret: &[u8], message: &[u8]) -> Vec<u8> {
    use base64::Engine;
    use hmac::Mac;
    let mut key = [0u8; 32];
    hkdf::Hkdf::<sha2::Sha256>::new(Some(b"pickup bus"), secret)
        .expand(b"pickup bus facts v1 (HMAC-SHA256)", &mut key)
        .unwrap();
    let mut mac = <hmac::Hmac<sha2::Sha256> as Mac>::new_from_slice(&key).unwrap();
    mac.update(b"pickup1.");
    mac.update(message);
    let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    [b"pickup1.".as_slice(), tag.as_bytes(), b".", message].concat()
}
