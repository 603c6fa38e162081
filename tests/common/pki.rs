//! TLS for tests: a private CA and a certificate for 127.0.0.1 (and
//! `localhost`) made per test by the `openssl` command line, and nginx
//! terminating TLS with it in front of a plain-HTTP upstream (both tools
//! installed by scripts/install-deps). The CA is made per test, so only a
//! client that is given it can trust the server. One file for the
//! gateway's tests and the host's (which include it by path).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A scratch folder with `ca.pem`, `server.pem` and `server.key`.
pub struct Pki {
    pub dir: PathBuf,
}

impl Drop for Pki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const EC_KEY: [&str; 5] = [
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
];

impl Pki {
    pub fn new(dir: PathBuf) -> Pki {
        std::fs::create_dir_all(&dir).expect("pki dir");
        let pki = Pki { dir };
        pki.openssl(
            &["req", "-x509"],
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=pilotage test CA",
            ],
        );
        pki.openssl(
            &["req", "-new"],
            &[
                "-keyout",
                "server.key",
                "-out",
                "server.csr",
                "-subj",
                "/CN=127.0.0.1",
            ],
        );
        std::fs::write(
            pki.dir.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
        )
        .expect("write extensions");
        pki.run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ]);
        pki
    }

    /// The path of `file` in the scratch folder.
    pub fn path(&self, file: &str) -> String {
        self.dir.join(file).display().to_string()
    }

    fn openssl(&self, head: &[&str], tail: &[&str]) {
        let args: Vec<&str> = head
            .iter()
            .chain(EC_KEY.iter())
            .chain(tail)
            .copied()
            .collect();
        self.run(&args);
    }

    fn run(&self, args: &[&str]) {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .expect("run openssl (installed by scripts/install-deps)");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// nginx, killed on drop.
pub struct Nginx {
    child: Child,
    pub port: u16,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn nginx_binary() -> &'static str {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("nginx")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl Nginx {
    /// Terminates TLS with the Pki's certificate in front of `upstream`
    /// (`http://host:port`). Streamed answers are passed on unbuffered.
    pub fn in_front_of(pki: &Pki, upstream: &str) -> Nginx {
        let port = free_port();
        let d = pki.dir.display();
        let user = if is_root() { "user root root;" } else { "" };
        // One process, no workers: killing it on drop leaves nothing
        // behind (a killed master would orphan its workers).
        let conf = format!(
            "{user}\ndaemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/nginx.err warn;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
               fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
               server {{\n    listen 127.0.0.1:{port} ssl;\n    ssl_certificate {d}/server.pem;\n\
                 ssl_certificate_key {d}/server.key;\n\
                 location / {{ proxy_pass {upstream}; proxy_http_version 1.1; proxy_buffering off; }}\n  }}\n}}\n"
        );
        std::fs::write(pki.dir.join("nginx.conf"), conf).expect("write nginx.conf");
        let mut child = Command::new(nginx_binary())
            .args(["-p", &d.to_string(), "-c", &pki.path("nginx.conf")])
            .args(["-e", &pki.path("nginx.err")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nginx (installed by scripts/install-deps)");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("nginx exited early: {status}");
            }
            assert!(
                Instant::now() < deadline,
                "nginx not listening on {port} after 20 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Nginx { child, port }
    }
}
