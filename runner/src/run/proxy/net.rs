//! The proxy's sockets.

/// Sets TCP_NODELAY on the listener; the arms' connections accepted from it inherit it (Linux).
/// Without it, a chunk of a streamed answer written while the previous one is unacknowledged
/// waits for the arm's delayed ACK (Nagle): about 40 ms per chunk on a kept-alive connection.
pub(super) fn no_delay(l: &std::net::TcpListener) {
    use std::os::fd::AsRawFd;
    let one: libc::c_int = 1;
    // SAFETY: a valid socket descriptor and a c_int option value of the size passed
    unsafe {
        libc::setsockopt(
            l.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    fn nodelay(s: &std::net::TcpStream) -> libc::c_int {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: a valid descriptor, an out value and its size
        unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            );
        }
        v
    }

    #[test]
    fn accepted_connections_inherit_no_delay() {
        let plain = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let _c = std::net::TcpStream::connect(plain.local_addr().unwrap()).unwrap();
        assert_eq!(nodelay(&plain.accept().unwrap().0), 0);
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        no_delay(&l);
        let _c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        assert_ne!(nodelay(&l.accept().unwrap().0), 0);
    }
}
