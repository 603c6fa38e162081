//! The client address of a request: the connection's peer, unless the peer
//! is a trusted proxy (`limits.trusted_proxies`), in which case
//! `X-Forwarded-For` is read from the right, each trusted hop giving way to
//! the address it names, until the first address that is not a trusted
//! proxy. Entries left of that one were written by the client itself and
//! are never believed.

use crate::config::limits::AddressBlock;
use axum::http::HeaderMap;
use std::net::{IpAddr, SocketAddr};

const FORWARDED_FOR: &str = "x-forwarded-for";

/// The address budgets of a sessionless anonymous request are kept under;
/// `None` when the request came without a socket.
pub fn client_address(
    peer: Option<SocketAddr>,
    headers: &HeaderMap,
    trusted: &[AddressBlock],
) -> Option<IpAddr> {
    let mut client = canonical(peer?.ip());
    let is_trusted = |a: IpAddr| trusted.iter().any(|b| b.contains(a));
    if !is_trusted(client) {
        return Some(client);
    }
    let hops: Vec<&str> = headers
        .get_all(FORWARDED_FOR)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .collect();
    for hop in hops.iter().rev() {
        // A hop that is no address ends the chain: what lies left of it
        // cannot be attributed to anyone.
        let Some(address) = parse_hop(hop) else {
            break;
        };
        client = address;
        if !is_trusted(client) {
            break;
        }
    }
    Some(client)
}

/// `203.0.113.7`, `2001:db8::1`, or either with a port (`[2001:db8::1]:443`,
/// `203.0.113.7:5000`), as some proxies write them.
fn parse_hop(hop: &str) -> Option<IpAddr> {
    if let Ok(ip) = hop.parse::<IpAddr>() {
        return Some(canonical(ip));
    }
    hop.parse::<SocketAddr>().ok().map(|s| canonical(s.ip()))
}

/// An IPv4 client on an IPv6 socket is that IPv4 client.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(xff: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in xff {
            h.append(FORWARDED_FOR, v.parse().unwrap());
        }
        h
    }

    fn peer(ip: &str) -> Option<SocketAddr> {
        Some(SocketAddr::new(ip.parse().unwrap(), 40000))
    }

    fn ip(s: &str) -> Option<IpAddr> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn forwarded_for_is_read_only_from_trusted_proxies() {
        let trusted = [AddressBlock::parse("10.0.0.0/8").unwrap()];
        let spoofed = headers(&["198.51.100.1"]);
        // An untrusted peer is the client, whatever it claims.
        assert_eq!(
            client_address(peer("203.0.113.9"), &spoofed, &trusted),
            ip("203.0.113.9")
        );
        // A trusted proxy's entry names the client.
        assert_eq!(
            client_address(peer("10.0.0.2"), &spoofed, &trusted),
            ip("198.51.100.1")
        );
        // The client's own prefix is not believed: the rightmost untrusted hop wins.
        let chained = headers(&["1.1.1.1, 198.51.100.1", "10.0.0.7"]);
        assert_eq!(
            client_address(peer("10.0.0.2"), &chained, &trusted),
            ip("198.51.100.1")
        );
        // Nothing trusted: the peer, header or not.
        assert_eq!(
            client_address(peer("10.0.0.2"), &spoofed, &[]),
            ip("10.0.0.2")
        );
        // A trusted proxy without the header is the client.
        assert_eq!(
            client_address(peer("10.0.0.2"), &headers(&[]), &trusted),
            ip("10.0.0.2")
        );
        // Garbage ends the chain at the last address that parsed.
        assert_eq!(
            client_address(peer("10.0.0.2"), &headers(&["evil, 10.0.0.3"]), &trusted),
            ip("10.0.0.3")
        );
        assert_eq!(
            client_address(
                peer("::ffff:10.0.0.2"),
                &headers(&["[2001:db8::1]:443"]),
                &trusted
            ),
            ip("2001:db8::1")
        );
        assert_eq!(client_address(None, &spoofed, &trusted), None);
    }
}
