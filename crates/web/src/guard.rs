//! The address guard: which IP addresses a fetch may connect to.
//!
//! Host names are resolved by `GuardedResolver`, which reqwest uses for every connection: it checks
//! every address it returns, so the connection goes to exactly the addresses that were checked (no
//! DNS rebinding between check and connect). IP-literal hosts never reach a resolver and are checked
//! by `check_ip` before each hop.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use serde::{Deserialize, Serialize};

/// A class of internal addresses that is refused unless the configuration allows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressClass {
    /// 127.0.0.0/8, ::1
    Loopback,
    /// 10/8, 172.16/12, 192.168/16, fc00::/7
    Private,
    /// 169.254/16 (incl. the cloud metadata address 169.254.169.254), fe80::/10
    LinkLocal,
    /// 100.64/10 (carrier-grade NAT)
    Cgnat,
    /// 224/4, ff00::/8
    Multicast,
    /// 0.0.0.0/8, ::
    Unspecified,
    /// 240/4, 255.255.255.255, 192.0.0/24, benchmarking 198.18/15
    Reserved,
}

impl AddressClass {
    /// Every class: for a client whose every URL the operator configured (an LLM endpoint, a
    /// search API), where an internal address is a deliberate choice, never a page's link.
    pub const ALL: [AddressClass; 7] = [
        AddressClass::Loopback,
        AddressClass::Private,
        AddressClass::LinkLocal,
        AddressClass::Cgnat,
        AddressClass::Multicast,
        AddressClass::Unspecified,
        AddressClass::Reserved,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::LinkLocal => "link_local",
            AddressClass::Cgnat => "cgnat",
            AddressClass::Multicast => "multicast",
            AddressClass::Unspecified => "unspecified",
            AddressClass::Reserved => "reserved",
        }
    }
}

/// The internal class of `ip`, or `None` for a public address.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, c, _] = ip.octets();
    if a == 0 {
        Some(AddressClass::Unspecified)
    } else if a == 127 {
        Some(AddressClass::Loopback)
    } else if a == 10 || (a == 172 && (16..32).contains(&b)) || (a == 192 && b == 168) {
        Some(AddressClass::Private)
    } else if a == 169 && b == 254 {
        Some(AddressClass::LinkLocal)
    } else if a == 100 && (64..128).contains(&b) {
        Some(AddressClass::Cgnat)
    } else if (224..240).contains(&a) {
        Some(AddressClass::Multicast)
    } else if a >= 240 || (a == 192 && b == 0 && c == 0) || (a == 198 && (18..20).contains(&b)) {
        Some(AddressClass::Reserved)
    } else {
        None
    }
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible form reach IPv4 hosts.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return classify_v4(v4);
    }
    let seg = ip.segments();
    if ip.is_unspecified() {
        Some(AddressClass::Unspecified)
    } else if ip.is_loopback() {
        Some(AddressClass::Loopback)
    } else if seg[0] & 0xfe00 == 0xfc00 {
        Some(AddressClass::Private)
    } else if seg[0] & 0xffc0 == 0xfe80 {
        Some(AddressClass::LinkLocal)
    } else if seg[0] & 0xff00 == 0xff00 {
        Some(AddressClass::Multicast)
    } else if seg[..6] == [0, 0, 0, 0, 0, 0] {
        // ::a.b.c.d (IPv4-compatible, deprecated)
        classify_v4(Ipv4Addr::new(
            (seg[6] >> 8) as u8,
            seg[6] as u8,
            (seg[7] >> 8) as u8,
            seg[7] as u8,
        ))
    } else {
        None
    }
}

/// A refused address; carried through reqwest's error chain from the resolver.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{host} resolves to {ip} ({})", class.as_str())]
pub(crate) struct BlockedAddress {
    pub host: String,
    pub ip: IpAddr,
    pub class: AddressClass,
}

/// Check one address against the allowed classes.
pub(crate) fn check_ip(
    host: &str,
    ip: IpAddr,
    allow: &[AddressClass],
) -> Result<(), BlockedAddress> {
    match classify(ip) {
        Some(class) if !allow.contains(&class) => Err(BlockedAddress {
            host: host.to_string(),
            ip,
            class,
        }),
        _ => Ok(()),
    }
}

/// A reqwest resolver that refuses host names resolving to any disallowed address.
///
/// Strict on purpose: a name that resolves to both a public and an internal address is refused as a
/// whole, since whoever controls its DNS can steer which one a connection uses.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    pub allow: Vec<AddressClass>,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow = self.allow.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            for addr in &addrs {
                check_ip(&host, addr.ip(), &allow)?;
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(s: &str) -> Option<AddressClass> {
        classify(s.parse().unwrap())
    }

    #[test]
    fn internal_addresses_are_classified() {
        use AddressClass::*;
        assert_eq!(class("127.0.0.1"), Some(Loopback));
        assert_eq!(class("::1"), Some(Loopback));
        assert_eq!(class("10.1.2.3"), Some(Private));
        assert_eq!(class("172.16.0.1"), Some(Private));
        assert_eq!(class("172.31.255.255"), Some(Private));
        assert_eq!(class("172.32.0.1"), None);
        assert_eq!(class("192.168.1.1"), Some(Private));
        assert_eq!(class("fd00::1"), Some(Private));
        assert_eq!(class("169.254.169.254"), Some(LinkLocal));
        assert_eq!(class("fe80::1"), Some(LinkLocal));
        assert_eq!(class("100.64.0.1"), Some(Cgnat));
        assert_eq!(class("100.128.0.1"), None);
        assert_eq!(class("224.0.0.1"), Some(Multicast));
        assert_eq!(class("ff02::1"), Some(Multicast));
        assert_eq!(class("0.0.0.0"), Some(Unspecified));
        assert_eq!(class("::"), Some(Unspecified));
        assert_eq!(class("255.255.255.255"), Some(Reserved));
        assert_eq!(class("::ffff:127.0.0.1"), Some(Loopback));
        assert_eq!(class("::ffff:169.254.169.254"), Some(LinkLocal));
        assert_eq!(class("8.8.8.8"), None);
        assert_eq!(class("2606:4700::1111"), None);
    }

    #[test]
    fn allowed_classes_pass() {
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(check_ip("h", ip, &[]).is_err());
        assert!(check_ip("h", ip, &[AddressClass::Loopback]).is_ok());
        assert!(check_ip("h", ip, &[AddressClass::Private]).is_err());
    }
}
